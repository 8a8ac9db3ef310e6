//===- lib/Bundle/InputKind.cpp - What kind of input is this --------------===//
//
// Identification reads at most the first 20 bytes, each only after checking
// that it is there.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/Bundle.h"
#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Bundle/HostBinary.h"
#include "hotswap/Bundle/OffloadBundle.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <unistd.h>

using namespace llvm;

namespace hotswap {
namespace bundle {

namespace {
bool startsWith(ArrayRef<uint8_t> Bytes, StringRef Magic) {
  return Bytes.size() >= Magic.size() &&
         std::equal(Magic.bytes_begin(), Magic.bytes_end(), Bytes.begin());
}
} // namespace

InputKind identifyInput(ArrayRef<uint8_t> Bytes) {
  if (startsWith(Bytes, OffloadBundleMagic))
    return InputKind::OffloadBundle;
  if (startsWith(Bytes, CompressedBundleMagic))
    return InputKind::CompressedOffloadBundle;
  // e_ident (16 bytes), e_type (2), e_machine (2).
  if (startsWith(Bytes, ELF::ElfMagic) && Bytes.size() >= 20 &&
      Bytes[ELF::EI_CLASS] == ELF::ELFCLASS64 &&
      Bytes[ELF::EI_DATA] == ELF::ELFDATA2LSB) {
    switch (support::endian::read16le(Bytes.data() + 18)) {
    case ELF::EM_AMDGPU:
      return InputKind::CodeObject;
    case ELF::EM_X86_64:
      return InputKind::HostELF;
    default:
      break;
    }
  }
  return InputKind::Unknown;
}

StringRef inputKindName(InputKind Kind) {
  switch (Kind) {
  case InputKind::CodeObject:
    return "AMDGPU code object";
  case InputKind::HostELF:
    return "host ELF (x86-64)";
  case InputKind::OffloadBundle:
    return "offload bundle";
  case InputKind::CompressedOffloadBundle:
    return "compressed offload bundle";
  case InputKind::Unknown:
    break;
  }
  return "unknown input";
}

std::string describeInput(ArrayRef<uint8_t> Bytes) {
  InputKind Kind = identifyInput(Bytes);
  std::string Name = inputKindName(Kind).str();
  if (Kind != InputKind::CompressedOffloadBundle ||
      Bytes.size() < CompressedBundleCommonSize)
    return Name;
  uint16_t Version = support::endian::read16le(Bytes.data() + 4);
  uint16_t Method = support::endian::read16le(Bytes.data() + 6);
  Name += " (CCOB v" + std::to_string(Version) + ", ";
  if (Method == uint16_t(CompressionMethod::Zlib) ||
      Method == uint16_t(CompressionMethod::Zstd))
    Name += compressionMethodName(CompressionMethod(Method)).str();
  else
    Name += "method " + std::to_string(Method);
  return Name + ")";
}

namespace {

/// Reads \p Size bytes at \p Offset of \p FD; fewer at the end of the file.
Expected<std::vector<uint8_t>> readAt(int FD, uint64_t Offset, size_t Size) {
  std::vector<uint8_t> B(Size);
  size_t Done = 0;
  while (Done < Size) {
    ssize_t N = ::pread(FD, B.data() + Done, Size - Done,
                        static_cast<off_t>(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return errorCodeToError(std::error_code(errno, std::generic_category()));
    if (N == 0)
      break;
    Done += static_cast<size_t>(N);
  }
  B.resize(Done);
  return B;
}

/// Whether the x86-64 ELF file \p FD (whose first 64 bytes are \p Ehdr)
/// names a HIP section; false when its headers do not hold together.
Expected<bool> hasHipSection(int FD, ArrayRef<uint8_t> Ehdr) {
  using support::endian::read16le;
  using support::endian::read32le;
  using support::endian::read64le;
  if (Ehdr.size() < sizeof(ELF::Elf64_Ehdr))
    return false;
  const uint64_t ShOff = read64le(Ehdr.data() + 40);
  const uint16_t ShEntSize = read16le(Ehdr.data() + 58);
  const uint16_t ShNum = read16le(Ehdr.data() + 60);
  const uint16_t ShStrNdx = read16le(Ehdr.data() + 62);
  if (ShEntSize != sizeof(ELF::Elf64_Shdr) || ShNum == 0 || ShStrNdx >= ShNum)
    return false; // (extended numbering too: no HIP file needs it)
  Expected<std::vector<uint8_t>> Shdrs =
      readAt(FD, ShOff, size_t(ShNum) * sizeof(ELF::Elf64_Shdr));
  if (!Shdrs)
    return Shdrs.takeError();
  if (Shdrs->size() != size_t(ShNum) * sizeof(ELF::Elf64_Shdr))
    return false;
  const uint8_t *Str = Shdrs->data() + size_t(ShStrNdx) * 64;
  const uint64_t StrOff = read64le(Str + 24), StrSize = read64le(Str + 32);
  if (StrSize == 0 || StrSize > (uint64_t(16) << 20))
    return false;
  Expected<std::vector<uint8_t>> Names = readAt(FD, StrOff, StrSize);
  if (!Names)
    return Names.takeError();
  StringRef Table(reinterpret_cast<const char *>(Names->data()), Names->size());
  for (uint16_t I = 0; I < ShNum; ++I) {
    uint32_t Name = read32le(Shdrs->data() + size_t(I) * 64);
    if (Name >= Table.size())
      continue;
    StringRef N = Table.drop_front(Name);
    N = N.take_until([](char C) { return C == 0; });
    if (N == HostWrapperSectionName || N == HostBundleSectionName)
      return true;
  }
  return false;
}

} // namespace

Expected<FileKind> identifyFile(int FD) {
  Expected<std::vector<uint8_t>> Head = readAt(FD, 0, 64);
  if (!Head)
    return Head.takeError();
  FileKind K;
  K.Kind = identifyInput(*Head);
  switch (K.Kind) {
  case InputKind::CodeObject:
  case InputKind::OffloadBundle:
  case InputKind::CompressedOffloadBundle:
    K.GPU = true;
    break;
  case InputKind::HostELF: {
    Expected<bool> Hip = hasHipSection(FD, *Head);
    if (!Hip)
      return Hip.takeError();
    K.GPU = *Hip;
    break;
  }
  case InputKind::Unknown:
    break;
  }
  return K;
}

} // namespace bundle
} // namespace hotswap
