//===- hotswap/Code/Relocate.h - A function's code at another address -*- C++
//-*-===//
//
// Copies one function's instructions to a new address, with code inserted
// between instructions where a client asks, so that the copy does what the
// original does:
//
//   * an instruction that does not depend on its address is copied byte
//     for byte;
//   * a direct branch or call (s_branch, s_cbranch_*, s_call_b64) is
//     encoded again by LLVM MC: a target inside the function becomes the
//     target's image in the copy (the start of what was inserted before
//     it), a target outside stays where it is;
//   * a PC-relative idiom (PCRelative.h) gets new constants, so that the
//     pair holds the image of a target inside the function, or the same
//     address for one outside (data, device functions);
//   * inserted bytes are placed as given: they must not depend on their
//     address.
//
// Instructions whose new encoding is longer (an inline constant that
// becomes a literal) move what follows; the layout is repeated until no
// size changes.
//
// A function is refused, with a reason and a kind to count it by, when it
// has a blocking finding (CFG.h), a PC-relative value used otherwise, a
// branch whose new distance does not fit its 16 bits and that cannot be
// relaxed (below), an insertion inside a window (CFG.h), a replaced
// instruction that is a branch, a call, the end of a block or part of a
// PC-relative idiom, or an instruction LLVM MC does not encode back to
// its bytes.
//
// Branch relaxation: a branch (s_branch, s_cbranch_*) to an instruction of
// the function whose new distance does not fit is relaxed (LongJump.h)
// when the client names registers its long jump may write at the target
// (the free ones of the seam before it: liveness, loads in flight, the
// allocation). A relaxed branch stays relaxed while the layout settles.
// Calls, and branches that leave the function, are not relaxed.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_RELOCATE_H
#define HOTSWAP_CODE_RELOCATE_H

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/LongJump.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class MCInst;
} // namespace llvm

namespace hotswap {
namespace amdgpu {
class TargetMC;
} // namespace amdgpu
namespace code {

/// Bytes to place before instruction \p Before (an index of
/// FunctionCFG::Insns; Insns.size() for after the last), or, with
/// \p Replace, in its place: the instruction itself is then not copied
/// (control that reached it runs the bytes, then what followed it). With
/// \p FallThrough, the bytes run only on the way from the instruction
/// before (which must fall through: not a jump, return or end) into
/// \p Before: they go right after that instruction (and after its
/// relaxation), and branches to \p Before land past them (an edge's code).
struct Insertion {
  uint32_t Before = 0;
  std::vector<uint8_t> Bytes;
  bool Replace = false;
  bool FallThrough = false;
  /// The assembly Bytes were made from, one instruction (or .long) per
  /// line, when the client has it: recorded so that verify can assemble it
  /// again (empty: not recorded; code whose bytes depend on its address).
  std::string Asm = {};
};

struct Relocated {
  uint64_t Base = 0;
  std::vector<uint8_t> Bytes;
  /// The new address of each original instruction (of one replaced: the
  /// end of what replaced it).
  std::vector<uint64_t> InsnAddr;
  /// Where control that reached original instruction I arrives in the
  /// copy: the start of what was inserted before it, else InsnAddr[I]
  /// (one more entry: the end).
  std::vector<uint64_t> LandAddr;
  /// Instructions encoded again: direct branches and calls, and the adds
  /// of PC-relative idioms.
  unsigned BranchesEncoded = 0, PCRelAdjusted = 0;
  /// Of the branches, those relaxed, and the address ranges [first,
  /// second) of their relaxations (right after each), in order.
  unsigned BranchesRelaxed = 0;
  std::vector<std::pair<uint64_t, uint64_t>> Relaxed;
  /// The address ranges of FallThrough insertions, in order.
  std::vector<std::pair<uint64_t, uint64_t>> FallThrough;

  /// The address ranges [first, second) of inserted code where control
  /// lands (not FallThrough ones), in order.
  std::vector<std::pair<uint64_t, uint64_t>> insertedRanges() const;

  /// Where an original address maps to: an instruction start of the
  /// function to where control reaching it lands (LandAddr); nullopt for
  /// any other address.
  std::optional<uint64_t> image(const FunctionCFG &G, uint64_t Addr) const;
};

/// Why a function cannot be relocated: \p Kind, a short fixed phrase to
/// count refusals by ("blocking finding", "unknown PC use", "branch out of
/// reach", "insertion in a window", "replaces control flow", "does not
/// re-encode"), and \p Message,
/// the details.
struct RelocationRefusal {
  std::string Kind;
  std::string Message;
};

/// The registers a long jump to instruction \p Target (an index of
/// FunctionCFG::Insns) may write; nullopt when there are none.
using LongJumpScratch =
    std::function<std::optional<LongJumpRegs>(uint32_t Target)>;

/// Where control that reached \p T in the function of \p G reaches in a
/// copy of it in which control reaching instruction I lands at \p Land[I]:
/// T itself when it lies outside the function (a call, a tail call),
/// nullopt inside an instruction. The relocator and its proof share this.
std::optional<uint64_t> imageOf(const FunctionCFG &G,
                                llvm::ArrayRef<uint64_t> Land, uint64_t T);

struct RelocationResult {
  std::optional<Relocated> Code;
  RelocationRefusal Refusal;
};

/// Relocates the function of graph \p G (instructions with operands
/// \p Decoded) to \p NewBase, with \p Inserts (sorted by Before). With
/// \p Scratch, branches out of reach are relaxed where it names registers.
RelocationResult relocate(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                          llvm::ArrayRef<llvm::MCInst> Decoded,
                          llvm::ArrayRef<uint8_t> Bytes, uint64_t NewBase,
                          llvm::ArrayRef<Insertion> Inserts = {},
                          const LongJumpScratch &Scratch = nullptr);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_RELOCATE_H
