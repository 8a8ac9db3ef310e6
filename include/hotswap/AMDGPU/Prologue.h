//===- hotswap/AMDGPU/Prologue.h - Entry prologues --------------*- C++ -*-===//
//
// Code a stub runs before jumping to the kernel: the gfx1250 erratum pair
// (`global_prefetch_b8 v0, s[0:1] scope:SCOPE_SE` + `v_nop`), or user
// assembly. A prologue must fall through (no branches, no s_endpgm) and must
// not write anything that may be live at kernel entry: no VGPR (v0-v2 hold
// work-item IDs), no SGPR (user/system SGPRs start at s0), not EXEC, M0,
// FLAT_SCRATCH or trap temporaries. It may write SCC and, on gfx10+, VCC.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_PROLOGUE_H
#define HOTSWAP_AMDGPU_PROLOGUE_H

#include "hotswap/AMDGPU/TargetInfo.h"

#include <vector>

namespace hotswap {
namespace amdgpu {

/// Assembly text of the gfx1250 unclaused-VMEM entry workaround.
llvm::StringRef erratumPrologueAsm();

class TargetMC;

/// The erratum prologue assembled for \p TI (gfx125x only) with \p MC.
llvm::Expected<std::vector<uint8_t>>
assembleErratumPrologue(const TargetInfo &TI, const TargetMC &MC);

/// Decodes \p Bytes with \p MC and rejects anything that may clobber live
/// state or leave the prologue, naming the instruction.
llvm::Error checkPrologue(const TargetInfo &TI, const TargetMC &MC,
                          llvm::ArrayRef<uint8_t> Bytes);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_PROLOGUE_H
