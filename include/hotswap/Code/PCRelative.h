//===- hotswap/Code/PCRelative.h - Values computed from the PC --*- C++ -*-===//
//
// The one way AMDGPU code learns its own address is s_getpc_b64, which
// writes the address of the next instruction to an SGPR pair. Compilers
// then add a 64-bit constant to reach data, a device function or a block
// of the function (a long branch, a call, the Tensile skip):
//
//   s_getpc_b64 s[N:N+1]
//   s_add_u32   sN,   sN,   lo        ; lo: a constant, or an SGPR holding
//   s_addc_u32  sN+1, sN+1, hi        ;     one set in the same block
//
// (gfx12 spells them s_add_co_u32 / s_add_co_ci_u32; LLVM's opcodes are
// the same), or, on gfx1250, one 64-bit add of a constant to the pair
// (s_add_nc_u64 s[N:N+1], s[N:N+1], constant: AddLo and AddHi are then
// the same instruction). Code moved to another address computes another value
// with the same constants: whoever moves code re-derives lo and hi so that the
// pair holds the same absolute target (or the image of a target that moved
// with the code), and a proof evaluates the idiom in both places.
//
// An s_getpc_b64 whose value is used any other way (read before both
// halves are added to, one half changed otherwise, SCC written between the
// two adds, the block ending first) is a finding: code holding it cannot be
// moved.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_PCRELATIVE_H
#define HOTSWAP_CODE_PCRELATIVE_H

#include "hotswap/Code/CFG.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MCInst;
} // namespace llvm

namespace hotswap {
namespace amdgpu {
class TargetMC;
} // namespace amdgpu
namespace code {

/// One s_getpc_b64 and the two adds that turn its value into an address.
struct PCRelIdiom {
  /// Instruction indices (FunctionCFG::Insns) of s_getpc_b64, the add of
  /// the low half and the add (with carry) of the high half.
  uint32_t GetPC = 0, AddLo = 0, AddHi = 0;
  /// The operand of AddLo / AddHi that holds the constant (an immediate,
  /// or an SGPR whose value is known).
  unsigned LoOperand = 0, HiOperand = 0;
  /// The 64-bit constant added to the PC, and the address it yields.
  uint64_t Offset = 0;
  uint64_t Target = 0;
};

struct PCRelScan {
  std::vector<PCRelIdiom> Idioms;
  /// s_getpc_b64 whose value is used otherwise: where, and what.
  std::vector<CodeFinding> Unknown;
};

/// The PC-relative idioms of \p G, whose instructions with their operands
/// are \p Decoded.
PCRelScan findPCRelative(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                         llvm::ArrayRef<llvm::MCInst> Decoded);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_PCRELATIVE_H
