//===- hotswap/Code/SiteSafety.h - Code inserted at one instruction -*- C++
//-*-===//
//
// What code inserted at one instruction of a function (a site) may do
// without changing what the function computes, and the check of one body
// of such code against it. The pass that inserts (patch-insns) and verify
// ask the same questions of the same analyses, verify from the bytes of
// the original alone.
//
// A site is an instruction and where the code goes: before it (control
// reaching the instruction runs the body first), after it (only for an
// instruction that falls through to one no branch targets: the body then
// runs exactly when the instruction did), or in its place (the body must
// do what the instruction did: that part is the author's; only the
// registers are checked).
//
// The registers a body may write at a seam: those no later instruction
// reads (Liveness.h), no load in flight still writes (WaitCounts.h), inside
// the kernel's allocation (SGPRs and VGPRs below the descriptor's counts;
// never AGPRs), and, in place of an instruction, what that instruction
// writes. SCC, VCC, EXEC and M0 are registers like the others: a body
// writes them only where they are dead, or gives their value back before
// it ends: `s_mov D, R` saves R (not yet written by the body) in a
// register D it may write, and `s_mov R, D` (D not written since) gives it
// back (global counter code sets EXEC to one lane that way).
//
// The body itself must be straight-line code (no branch, call, return,
// trap, end of program or read of the PC: control leaves it at its end,
// where the instruction's next one, or the instruction, continues), must
// not touch a register a load still writes (the guest's, in flight at the
// seam, or its own before it waits), and every memory operation it issues
// must be waited for inside it with a wait for 0 on the counters it counts
// on, so that no guest wait counts it (counter code's atomics without
// return excepted: see checkBody).
//
// Hazards between the body and the instructions around it (gfx9 VALU SGPR
// write -> VMEM read, gfx10 LDS/branch/VMEM, gfx11 VALU mask write, gfx12
// s_wait_alu dependencies, ...) are SiteHazards.h's: the guards a seam
// needs, and the hazards none clears.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_SITESAFETY_H
#define HOTSWAP_CODE_SITESAFETY_H

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Liveness.h"
#include "hotswap/Code/Registers.h"
#include "hotswap/Code/WaitCounts.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace amdgpu {
class TargetMC;
} // namespace amdgpu
namespace code {

enum class SiteWhere : uint8_t { Before, After, Replace };
/// "before", "after", "replace".
llvm::StringRef siteWhereName(SiteWhere W);
std::optional<SiteWhere> parseSiteWhere(llvm::StringRef S);

/// The registers a kernel's allocation is sure to hold.
struct RegisterLimits {
  unsigned SGPRs = 0, VGPRs = 0;
};

struct SiteRegisters {
  /// What a body at the seam may write.
  RegSet Writable;
  /// What it may take as scratch: Writable less everything the site's
  /// instruction reads or writes.
  RegSet Scratch;
  /// What loads still in flight at the seam write: a body neither reads
  /// nor writes them.
  RegSet InFlight;
};

/// Why a site cannot take code (empty: it can).
std::string siteRefusal(const FunctionCFG &G, uint32_t I, SiteWhere W);

/// The registers of the seam of site (\p I, \p W) of \p G, whose liveness
/// is \p L and counters \p WC. The site must be one siteRefusal accepts.
SiteRegisters siteRegisters(const RegisterModel &RM, const FunctionCFG &G,
                            const Liveness &L, const WaitCounts &WC, uint32_t I,
                            SiteWhere W, RegisterLimits Limits);
/// The same from what is live at the seam, \p Live, and what loads still
/// write there, \p InFlight; \p Own is what the site's instruction reads
/// and writes; \p Outside what lies outside the limits (outsideLimits()).
SiteRegisters seamRegisters(const RegisterModel &RM, const RegSet &Live,
                            RegSet InFlight, const InsnRegs &Own, SiteWhere W,
                            const RegSet &Outside);
/// The registers above \p Limits, and every AGPR: no body writes them.
RegSet outsideLimits(const RegisterModel &RM, RegisterLimits Limits);
/// A superset of what is live at any seam of a function, without
/// liveness: the registers the function names, less the scalar ones the
/// seam's block writes before it reads them. Nothing else is ever live
/// where every exit ends the program and nothing is called (holds());
/// elsewhere there is no bound. A body checked against it is checked
/// against less than liveness gives it, never more.
class LiveBound {
public:
  /// \p Regs: what each instruction of \p G reads and writes
  /// (instructionRegs()).
  LiveBound(const RegisterModel &RM, const FunctionCFG &G,
            std::vector<InsnRegs> Regs);
  bool holds() const { return Holds; }
  /// Every unit some instruction reads or writes.
  const RegSet &named() const { return Named; }
  /// What may be live at the seam of site (\p I, \p W) (SiteWhere::Replace:
  /// once the instruction has run). Only where holds().
  RegSet at(uint32_t I, SiteWhere W) const;
  const InsnRegs &regs(uint32_t I) const { return Regs[I]; }

private:
  const RegisterModel &RM;
  const FunctionCFG &G;
  std::vector<InsnRegs> Regs;
  RegSet Named;
  bool Holds = false;
};

struct BodyProblem {
  /// The body instruction at fault (its index and byte offset), or the
  /// body as a whole.
  std::optional<uint32_t> Insn;
  uint64_t Offset = 0;
  std::string Message;
};

/// What is wrong with \p Body, code for a seam where it may write
/// \p Writable and loads still write \p InFlight, on a target with
/// counters \p Set (empty: nothing). Also a problem: an instruction of the
/// body that reads or writes a register one of the body's own loads still
/// writes (not waited for yet). Reading the PC is a problem unless
/// \p MayReadPC: a body whose bytes are fixed up where it is placed (and
/// checked again there, as counter code is: CounterCode.h). With
/// \p StoresMayStay, a memory operation that writes no register (a store,
/// an atomic without return) may still be in flight when the body ends:
/// one more operation a counter counts makes a guest's wait on it wait
/// longer, never shorter (for code whose memory is its own: counters).
std::vector<BodyProblem>
checkBody(const amdgpu::TargetMC &MC, llvm::ArrayRef<uint8_t> Body, bool Wave32,
          const CounterSet &Set, const RegSet &Writable, const RegSet &InFlight,
          bool MayReadPC = false, bool StoresMayStay = false);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_SITESAFETY_H
