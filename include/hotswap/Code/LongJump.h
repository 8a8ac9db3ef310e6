//===- hotswap/Code/LongJump.h - Branches relaxed to reach anywhere -*- C++
//-*-===//
//
// A direct branch (s_branch, s_cbranch_*) reaches +-128 KiB: a signed
// 16-bit count of words. Code that is moved and grows (Relocate.h) can put
// a branch's target beyond that. The branch is then relaxed, much as LLVM
// relaxes its own long branches: it keeps its opcode and condition but
// reaches a long jump placed right after it, which computes the target
// from its own PC:
//
//       s_branch / s_cbranch_* L      ; the original branch, now to L
//       [s_branch N]                  ; conditional: not taken goes on at N
//   L:  [s_cselect_b32 sQ, -1, 0]     ; SCC live at the target: kept in sQ
//       s_getpc_b64 s[P:P+1]
//       s_add_u32   sP, sP, lo        ; always literals: the size is fixed
//       s_addc_u32  sP+1, sP+1, hi
//       [s_cmp_lg_u32 sQ, 0]          ; SCC given back
//       s_setpc_b64 s[P:P+1]
//   N:
//
// What follows the branch (from its end to N) is its relaxation: 24 to 36
// bytes. The long jump runs only on the way to the target, so what it
// writes, s[P:P+1] and sQ (and SCC, unless kept), must be free there: no
// later instruction reads it (Liveness.h), no load still in flight writes
// it (WaitCounts.h), and it lies inside the kernel's SGPR allocation
// (SiteSafety.h's seam before the target's instruction). The relocator
// takes registers so; the proof reads the relaxation back from the bytes
// and checks the registers against the original's analyses itself.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_LONGJUMP_H
#define HOTSWAP_CODE_LONGJUMP_H

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Liveness.h"
#include "hotswap/Code/Registers.h"
#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Code/WaitCounts.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

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

class CallReads;

/// The SGPRs a long jump writes: the pair s[Pair:Pair+1] (Pair even), and
/// sQ when it keeps SCC.
struct LongJumpRegs {
  unsigned Pair = 0;
  std::optional<unsigned> SCCCopy;
  /// A wait for the SALU's writes (s_waitcnt_depctr sa_sdst(0)) after
  /// s_getpc_b64 and after each add: gfx12, where an SALU reading an SGPR
  /// an SALU wrote must wait when a VALU read that pair before (Hazards.h).
  bool WaitSALU = false;
};

/// Bytes a relaxed branch places after itself.
uint64_t relaxationSize(bool Conditional, const LongJumpRegs &Regs);

/// The relaxation of a branch that ends at \p After: to \p Target, with
/// \p Regs (an s_branch to its own end first when \p Conditional).
llvm::Expected<std::vector<uint8_t>>
relaxationCode(const amdgpu::TargetMC &MC, bool Conditional,
               const LongJumpRegs &Regs, uint64_t After, uint64_t Target);

/// Registers a long jump to the instruction at the seam \p Free (before
/// the target) may use: the lowest free aligned pair, and an SGPR for SCC
/// when SCC is not free there; nullopt when there are none.
std::optional<LongJumpRegs> longJumpRegisters(const RegisterModel &RM,
                                              const SiteRegisters &Free);

/// A relaxation read back from decoded code.
struct ReadRelaxation {
  /// Where the long jump begins (the branch's target) and what it reaches.
  uint64_t Entry = 0, Target = 0;
  LongJumpRegs Regs;
  /// The registers it leaves changed (SCC unless kept).
  RegSet Writes;
};

/// Reads the relaxation of branch \p Branch of graph \p C (instructions
/// with operands \p Ops), which must end exactly at \p End: an error says
/// how it differs from the form above.
llvm::Expected<ReadRelaxation> readRelaxation(const amdgpu::TargetMC &MC,
                                              const FunctionCFG &C,
                                              llvm::ArrayRef<llvm::MCInst> Ops,
                                              uint32_t Branch, uint64_t End);

/// Why a long jump writing \p Writes may not run before an instruction
/// whose seam is \p Free (empty: it may).
std::string longJumpRegsProblem(const RegisterModel &RM,
                                const SiteRegisters &Free,
                                const RegSet &Writes);

/// The seams of one function, analysed on first use: liveness (calls read
/// what \p Calls says, when given), wait counts, and the kernel's limits.
class FunctionSeams {
public:
  FunctionSeams(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                llvm::ArrayRef<llvm::MCInst> Decoded, FunctionKind Kind,
                bool Wave32, amdgpu::Generation Gen, RegisterLimits Limits,
                CallReads *Calls = nullptr);
  FunctionSeams(FunctionSeams &&) = default;
  ~FunctionSeams();

  /// The seam of site (\p I, \p W); before(I): the seam before \p I.
  SiteRegisters at(uint32_t I, SiteWhere W);
  SiteRegisters before(uint32_t I) { return at(I, SiteWhere::Before); }
  const Liveness &liveness();
  const WaitCounts &waitCounts();

private:
  const amdgpu::TargetMC &MC;
  const FunctionCFG &G;
  llvm::ArrayRef<llvm::MCInst> Decoded;
  FunctionKind Kind;
  bool Wave32;
  amdgpu::Generation Gen;
  RegisterLimits Limits;
  CallReads *Calls;
  std::optional<Liveness> L;
  std::optional<WaitCounts> WC;
};

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_LONGJUMP_H
