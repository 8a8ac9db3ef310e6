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
#include "hotswap/Support/Record.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <system_error>
#include <unistd.h>

using namespace llvm;

namespace hotswap {
namespace bundle {

namespace {

using Elf_Ehdr = object::ELF64LE::Ehdr;
using Elf_Shdr = object::ELF64LE::Shdr;

/// Identification reads e_ident, e_type and e_machine: the header up to the
/// end of e_machine.
constexpr size_t MachineEnd =
    offsetof(Elf_Ehdr, e_machine) + sizeof(Elf_Ehdr::e_machine);
static_assert(MachineEnd == 20, "e_ident (16), e_type (2), e_machine (2)");

bool startsWith(ArrayRef<uint8_t> Bytes, StringRef Magic) {
  return Bytes.size() >= Magic.size() &&
         std::equal(Magic.bytes_begin(), Magic.bytes_end(), Bytes.begin());
}

/// The ELF header that \p Bytes begin, as far as they hold it (the rest
/// zero).
Elf_Ehdr headerPrefix(ArrayRef<uint8_t> Bytes) {
  Elf_Ehdr H{};
  std::memcpy(&H, Bytes.data(), std::min(Bytes.size(), sizeof(H)));
  return H;
}

} // namespace

InputKind identifyInput(ArrayRef<uint8_t> Bytes) {
  if (startsWith(Bytes, OffloadBundleMagic))
    return InputKind::OffloadBundle;
  if (startsWith(Bytes, CompressedBundleMagic))
    return InputKind::CompressedOffloadBundle;
  if (startsWith(Bytes, ELF::ElfMagic) && Bytes.size() >= MachineEnd &&
      Bytes[ELF::EI_CLASS] == ELF::ELFCLASS64 &&
      Bytes[ELF::EI_DATA] == ELF::ELFDATA2LSB) {
    switch (headerPrefix(Bytes.take_front(MachineEnd)).e_machine) {
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

/// Whether the x86-64 ELF file \p FD (whose first 64 bytes are \p Head)
/// names a HIP section; false when its headers do not hold together.
Expected<bool> hasHipSection(int FD, ArrayRef<uint8_t> Head) {
  if (Head.size() < sizeof(Elf_Ehdr))
    return false;
  const Elf_Ehdr &Ehdr = recordAt<Elf_Ehdr>(Head, 0);
  const uint64_t ShOff = Ehdr.e_shoff;
  const uint16_t ShNum = Ehdr.e_shnum, ShStrNdx = Ehdr.e_shstrndx;
  if (Ehdr.e_shentsize != sizeof(Elf_Shdr) || ShNum == 0 || ShStrNdx >= ShNum)
    return false; // (extended numbering too: no HIP file needs it)
  Expected<std::vector<uint8_t>> Table =
      readAt(FD, ShOff, size_t(ShNum) * sizeof(Elf_Shdr));
  if (!Table)
    return Table.takeError();
  if (Table->size() != size_t(ShNum) * sizeof(Elf_Shdr))
    return false;
  auto Shdr = [&](uint16_t I) -> const Elf_Shdr & {
    return recordAt<Elf_Shdr>(*Table, size_t(I) * sizeof(Elf_Shdr));
  };
  const uint64_t StrOff = Shdr(ShStrNdx).sh_offset;
  const uint64_t StrSize = Shdr(ShStrNdx).sh_size;
  if (StrSize == 0 || StrSize > (uint64_t(16) << 20))
    return false;
  Expected<std::vector<uint8_t>> Names = readAt(FD, StrOff, StrSize);
  if (!Names)
    return Names.takeError();
  StringRef Strings(reinterpret_cast<const char *>(Names->data()),
                    Names->size());
  for (uint16_t I = 0; I < ShNum; ++I) {
    const uint32_t Name = Shdr(I).sh_name;
    if (Name >= Strings.size())
      continue;
    StringRef N = Strings.drop_front(Name);
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
