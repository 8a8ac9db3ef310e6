//===- hotswap/AMDGPU/SGPRScan.h - SGPR usage from the code -----*- C++ -*-===//
//
// When a code object carries no `<kernel>.numbered_sgpr` symbol (anything
// built before LLVM 22), the metadata `.sgpr_count` includes VCC,
// FLAT_SCRATCH and XNACK_MASK, which sit at the top of the allocation on
// gfx6-9: using it as "SGPRs in use" wastes the very registers a stub needs.
// Decoding the code with the MC disassembler and taking the highest
// explicitly numbered SGPR gives the exact count. A range that calls or
// jumps indirectly cannot be bounded by itself: the caller then scans all
// executable code.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_SGPRSCAN_H
#define HOTSWAP_AMDGPU_SGPRSCAN_H

#include "hotswap/AMDGPU/TargetInfo.h"

#include "llvm/ADT/ArrayRef.h"

namespace hotswap {
namespace amdgpu {

struct SGPRScan {
  /// 1 + the highest SGPR named by any operand (0 when none).
  unsigned NumSGPRs = 0;
  /// The range contains s_swappc/s_setpc/s_call: code elsewhere runs with
  /// the same SGPRs, so the count does not bound the range's usage.
  bool HasCalls = false;
  /// The range uses s_movrel* (SGPRs indexed by M0): no bound at all.
  bool IndexesSGPRs = false;
  /// Words that did not decode (data, padding of unknown form).
  uint64_t UndecodedWords = 0;
};

class TargetMC;

/// Scans \p Code (at address \p Addr) with \p MC. Error when the target has
/// no disassembler in LLVM 22 (gfx6/gfx7).
llvm::Expected<SGPRScan> scanSGPRs(const TargetInfo &TI, const TargetMC &MC,
                                   llvm::ArrayRef<uint8_t> Code, uint64_t Addr);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_SGPRSCAN_H
