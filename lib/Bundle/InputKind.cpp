//===- lib/Bundle/InputKind.cpp - What kind of input is this --------------===//
//
// Identification reads at most the first 20 bytes, each only after checking
// that it is there.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/Bundle.h"
#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Bundle/OffloadBundle.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"

#include <algorithm>

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

} // namespace bundle
} // namespace hotswap
