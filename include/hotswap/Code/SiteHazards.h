//===- hotswap/Code/SiteHazards.h - Hazards at the seams of inserted code -*-
// C++ -*-===//
//
// Code inserted at a seam of a function (SiteSafety.h) must not make a
// hazard (Hazards.h) with the instructions around it: a VMEM of the body
// reading an SGPR a VALU of the guest wrote the instruction before, a DS of
// the body ahead of a guest branch and VMEM, a guest instruction the body
// replaced that was the wait of a guest hazard. SeamHazards finds them by
// splicing the body into the function's code and walking back from every
// instruction it may have changed; each hazard the original does not have
// gets a guard, the code its rule names (s_nop, a dependency wait, a
// store-counter wait), placed before the body (the hazard ends in it) or
// after it (it starts in the body, or the body took a wait's place).
// Hazards no guard at the seam clears (both ends in the body: the author's;
// one whose first part is in the body but whose wait belongs between two
// guest instructions; a rule whose fix is a VALU of the code's own
// registers) are problems.
//
// Seams are checked in the order a client accepts them; an accepted body
// stays in the code, so a later seam sees the code inserted before it.
// verify checks the copy as a whole, from its bytes (newHazards()).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_SITEHAZARDS_H
#define HOTSWAP_CODE_SITEHAZARDS_H

#include "hotswap/Code/Hazards.h"
#include "hotswap/Code/SiteSafety.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace hotswap {
namespace code {

/// What code at one seam needs around it.
/// A hazard no guard at the seam clears, and the body's instruction it
/// lands on (its index in the body given; none: a guest's).
struct SeamProblem {
  std::string What;
  std::optional<uint32_t> Insn;
};

struct SeamGuards {
  /// Assembly before and after the body, one instruction per line (empty:
  /// none).
  std::string Before, After;
  /// The hazards guarded, as a person reads them.
  std::vector<std::string> Why;
  /// A hazard no guard at the seam clears.
  std::optional<SeamProblem> Problem;
};

class SeamHazards {
public:
  SeamHazards(const amdgpu::TargetMC &MC, const HazardRules &Rules,
              const FunctionCFG &G, llvm::ArrayRef<llvm::MCInst> Decoded,
              FunctionKind Kind);

  /// The guards code \p Body (decoded) needs at seam (\p I, \p W).
  SeamGuards guards(uint32_t I, SiteWhere W, llvm::ArrayRef<llvm::MCInst> Body);
  /// Whether \p Body (guards included) makes no hazard at seam (\p I,
  /// \p W): if so it stays in the code for the seams after it; if not, the
  /// first hazard as a person reads it.
  std::optional<SeamProblem> accept(uint32_t I, SiteWhere W,
                                    llvm::ArrayRef<llvm::MCInst> Body);
  /// Keeps \p Body at seam (\p I, \p W) for the seams after it, unchecked:
  /// for a body guards() found nothing to guard in.
  void keep(uint32_t I, SiteWhere W, llvm::ArrayRef<llvm::MCInst> Body) {
    splice(I, W, Body);
  }

private:
  /// Splices \p Body in at (I, W); returns the body's indices.
  std::vector<uint32_t> splice(uint32_t I, SiteWhere W,
                               llvm::ArrayRef<llvm::MCInst> Body);
  /// The hazards since the splice the original has not: every one ending
  /// in \p In, or at a guest instruction within reach after the seam.
  std::vector<Hazard> newHazards(uint32_t I, SiteWhere W,
                                 llvm::ArrayRef<uint32_t> In);

  const HazardRules &Rules;
  HazardCode Orig, Code;
  std::vector<llvm::SmallVector<uint32_t, 2>> Succs;
  /// The original's hazards by (kind, from, to), per instruction on first
  /// need.
  std::set<std::tuple<HazardKind, uint32_t, uint32_t>> Known;
  std::vector<bool> KnownAt;
};

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_SITEHAZARDS_H
