//===- lib/Code/ExecMasks.h - The values EXEC holds (private) --*- C++ -*-===//
//
// The forward half of liveness (Liveness.h): which value EXEC holds before
// every instruction of a function and which values are subsets of which.
// Each value is named by the instruction or join that makes it; the
// narrowing writes (s_and_saveexec, v_cmpx, s_and/s_andn2 of exec) make a
// subset of what they read, a restore from a saved copy gives that copy's
// value back, and a join is a subset of the closest common superset made
// where every path to it passes (its dominators). Three facts of
// structured control flow make restores exact where a subset would do:
// an 'else' mask (what s_xor or s_andn2 leaves of a mask without a subset
// of it) and its 'then' mask together are that mask; after a loop whose
// lanes leave one by one (EXEC &= ~exit mask), EXEC | exit mask is again
// the lanes that entered it; and a join whose other inputs are joins that
// come back to one value is that value (a loop left the value alone).
// Masks spilled to VGPR lanes (v_writelane) and read back (v_readlane)
// keep their values while the lanes are not overwritten.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_CODE_EXECMASKS_H
#define HOTSWAP_LIB_CODE_EXECMASKS_H

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/Registers.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

namespace llvm {
class MCInst;
class MCInstrInfo;
} // namespace llvm

namespace hotswap {
namespace code {

/// EXEC value 0 holds every lane (whole-wave mode); 1 is the entry's; 2 is
/// the empty mask (a subset of every value).
constexpr uint32_t AllLanes = 0, EntryExec = 1, NoLanes = 2;

/// A lane mask an instruction reads or writes: EXEC, an SGPR or SGPR
/// tuple, VCC, or the constant -1.
struct MaskRef {
  enum Kind : uint8_t { None, Exec, SGPR, VCC, All, Zero } K = None;
  int First = -1;
  unsigned Count = 0;
  /// The key masks are kept under (VCC: -2).
  int key() const { return K == VCC ? -2 : First; }
};

/// What an instruction does to lane masks: Dst = Op(A, B).
struct ExecEffect {
  enum Op : uint8_t {
    NoOp,
    And,         // a & b
    AndN2,       // a & ~b
    AndN1,       // ~a & b
    Or,          // a | b
    Xor,         // a ^ b
    Mov,         // a
    SubsetOfCur, // a VALU compare: a subset of EXEC
    Unknown,
  } O = NoOp;
  MaskRef A, B, Dst;
  /// *_saveexec: SaveTo gets the old EXEC, then EXEC = Op(A, EXEC).
  MaskRef SaveTo;
  /// SGPRs written, [WLo, WHi]; -1 when none. WritesVCC likewise.
  int WLo = -1, WHi = -1;
  bool WritesVCC = false;
  /// VGPRs written, [VLo, VHi]; -1 when none (v_writelane's lane aside).
  int VLo = -1, VHi = -1;
  /// v_writelane (SGPR LaneSGPR into lane Lane of VGPR LaneVGPR) or
  /// v_readlane (the other way); Lane -1 when not an immediate.
  enum LaneOp : uint8_t { NoLane, WriteLane, ReadLane } LOp = NoLane;
  int LaneSGPR = -1, LaneVGPR = -1, Lane = -1;
};

/// What \p MI does to lane masks.
ExecEffect execEffect(const llvm::MCInst &MI, const llvm::MCInstrInfo &MII,
                      const InsnKinds &K, const RegisterModel &RM);

/// The EXEC values of one function.
struct ExecFlow {
  /// Before each instruction.
  std::vector<uint32_t> Before;
  /// Each value's parent (a superset); -1 for AllLanes.
  std::vector<int32_t> Parent;
  /// Per block: (predecessor, join value, the predecessor's value).
  std::vector<llvm::SmallVector<std::tuple<uint32_t, uint32_t, uint32_t>, 2>>
      EdgeMap;
  /// The unions instructions make: (instruction, value, A, B) where the
  /// value the instruction makes (for EXEC or a mask) holds the lanes of A
  /// and B and no others; by instruction.
  std::vector<std::array<uint32_t, 4>> Unions;
  /// Each value's block (-1 for the constants), each block's place in
  /// reverse postorder (UINT32_MAX: unreachable), and the dominator
  /// tree's preorder and postorder numbers (0: unreachable).
  std::vector<int32_t> SiteBlock;
  std::vector<uint32_t> Order, DomPre, DomPost;
  bool Converged = true;
};

/// Whether block \p A (-1: none) dominates block \p B and is not B, by
/// the dominator tree's numbers \p Pre and \p Post (ExecFlow's).
inline bool strictlyDominates(llvm::ArrayRef<uint32_t> Pre,
                              llvm::ArrayRef<uint32_t> Post, int32_t A,
                              uint32_t B) {
  return A >= 0 && uint32_t(A) != B && Pre[A] && Pre[B] && Pre[A] <= Pre[B] &&
         Post[B] <= Post[A];
}

/// The EXEC values of \p G, whose instructions do \p Effects.
ExecFlow analyseExec(const FunctionCFG &G, llvm::ArrayRef<ExecEffect> Effects);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_LIB_CODE_EXECMASKS_H
