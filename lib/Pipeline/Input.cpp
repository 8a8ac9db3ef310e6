//===- lib/Pipeline/Input.cpp - What an unknown input is ------------------===//
//
// The one place an input of no kind this library reads is explained (the
// kinds themselves are told apart by bundle::identifyInput).
//
//===----------------------------------------------------------------------===//

#include "Rewrite.h"

#include "hotswap/Bundle/OffloadBundle.h"
#include "hotswap/Support/Record.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFTypes.h"

#include <cstddef>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;

std::optional<std::string> pipeline::whyUnknown(ArrayRef<uint8_t> Input) {
  using namespace llvm::ELF;
  if (Input.empty())
    return std::string("input is empty");
  StringRef S(reinterpret_cast<const char *>(Input.data()), Input.size());
  // An offload bundle cut short in its 24-byte magic (4 bytes at least, so
  // that a stray byte is not taken for one).
  if (S.size() >= 4 && bundle::OffloadBundleMagic.starts_with(S)) {
    Expected<bundle::OffloadBundle> B = bundle::parseOffloadBundle(Input);
    if (!B)
      return toString(B.takeError());
    return std::nullopt;
  }
  // ELF for neither kind. Files for AMDGPU (r600's ELF32, a byte-swapped
  // code object) are the code object reader's to explain.
  // e_machine, which lies at one offset in every class and byte order.
  using object::ELF32BE;
  using object::ELF64LE;
  constexpr size_t MachineAt = offsetof(ELF64LE::Ehdr, e_machine);
  static_assert(MachineAt == offsetof(ELF32BE::Ehdr, e_machine),
                "e_machine follows e_ident and e_type in every ELF class");
  if (!S.starts_with(ElfMagic) || S.size() < MachineAt + sizeof(ELF64LE::Half))
    return std::nullopt;
  const uint8_t Class = Input[EI_CLASS], Data = Input[EI_DATA];
  const uint16_t MachineLE = recordAt<ELF64LE::Half>(Input, MachineAt);
  const uint16_t Machine =
      Data == ELFDATA2MSB ? uint16_t(recordAt<ELF32BE::Half>(Input, MachineAt))
                          : MachineLE;
  // Either byte order: a code object with only EI_DATA flipped is still one.
  const bool AMDGPU = Machine == EM_AMDGPU || MachineLE == EM_AMDGPU;
  if (AMDGPU ||
      (Class == ELFCLASS64 && Data == ELFDATA2LSB && Machine == EM_X86_64))
    return std::nullopt;
  std::string What = Class == ELFCLASS32 ? "ELF32"
                     : Class == ELFCLASS64
                         ? "ELF64"
                         : "ELF class " + std::to_string(Class);
  What += Data == ELFDATA2LSB   ? " little-endian"
          : Data == ELFDATA2MSB ? " big-endian"
                                : ", data encoding " + std::to_string(Data);
  What += ", e_machine " + std::to_string(Machine);
  StringRef Arch = convertEMachineToArchName(Machine);
  if (Arch != "None")
    What += " (" + Arch.str() + ")";
  return "not an AMDGPU code object or a HIP host binary: " + What +
         "; expected ELF64 little-endian with EM_AMDGPU or EM_X86_64";
}
