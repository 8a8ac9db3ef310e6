//===- hotswap/Code/RelocationProof.h - Code moved does what it did -*- C++
//-*-===//
//
// The proof verify makes for code relocated by code::relocate (Relocate.h),
// from the bytes alone, never from what the relocator says it did: the copy
// is decoded and its graph built again, and
//
//   * its instructions, once the inserted ranges are left out, are the
//     original's one for one (a bijection of instruction starts), but for
//     the replaced ones, each with the same opcode, and byte for byte the
//     same unless it is a direct branch or call or an add of a PC-relative
//     idiom; before each original instruction at most one inserted range,
//     and a replaced instruction has one in its place;
//   * every direct branch or call reaches the image of its original
//     target (a target outside the function: the same address);
//   * every PC-relative idiom is found again at the image of the
//     original's, evaluates to the image of the original's target (or the
//     same address outside the function), and differs from it only in its
//     constants;
//   * a branch followed by a range the relocator says it relaxed
//     (Relocate.h) reaches, through that range, a long jump of exactly
//     LongJump.h's form to the image of its original target, an
//     instruction of the function; what the long jump writes must be free
//     at the original target by the original's own analyses;
//   * a range the relocator says runs only on the fall-through way into an
//     instruction (Relocate.h, Insertion::FallThrough) follows the copy of
//     the instruction before, which falls through, and precedes where
//     control reaching the instruction lands;
//   * nothing else in the copy reads the PC.
//
// The image of an original instruction is where control reaching it lands
// in the copy: the start of an inserted range right before its copy, else
// the copy itself.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_RELOCATIONPROOF_H
#define HOTSWAP_CODE_RELOCATIONPROOF_H

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Functions.h"
#include "hotswap/Code/LongJump.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/MC/MCInst.h"

#include <cstdint>
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

struct RelocationProofResult {
  /// Why the copy is not the original moved; empty when it is.
  std::vector<std::string> Problems;
  /// The copy's address of each original instruction (when proven; of a
  /// replaced one, the start of what took its place).
  std::vector<uint64_t> InsnAddr;
  unsigned BranchesChecked = 0, PCRelChecked = 0, BranchesRelaxed = 0;
  /// The copy's graph and instructions as the proof read them (when
  /// proven): what a client checks next need not decode it again.
  FunctionCFG CopyCFG;
  std::vector<llvm::MCInst> CopyDecoded;

  bool proven() const { return Problems.empty(); }
};

/// Proves that \p Copy (whose bytes are \p CopyBytes) is the function of
/// graph \p G (instructions with operands \p Decoded, bytes \p Bytes)
/// moved to Copy.Begin, with code inserted at \p Inserted (address ranges
/// [first, second) of the copy, sorted, as Relocated::insertedRanges()
/// gives them) and the original instructions \p Replaced (indices,
/// sorted) replaced by the range before where their copy would be. \p Map
/// holds both functions (and tells calls from stray branches, as for
/// buildCFG). Inserted code that reads the PC is a problem unless
/// \p InsertedMayReadPC: its caller checks each such range itself (as
/// verify checks counter code, CounterCode.h). \p Relaxed: the ranges of
/// the copy that hold relaxations (Relocated::Relaxed), each right after
/// the copy of a branch; \p Seams, the seams of \p G, by which the
/// registers of their long jumps are proven free (none: a relaxation is a
/// problem). \p FallThrough: the ranges of fall-through-only code
/// (Relocated::FallThrough), checked as inserted code is.
RelocationProofResult
proveRelocation(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                llvm::ArrayRef<llvm::MCInst> Decoded,
                llvm::ArrayRef<uint8_t> Bytes, const FunctionMap &Map,
                const CodeFunction &Copy, llvm::ArrayRef<uint8_t> CopyBytes,
                llvm::ArrayRef<std::pair<uint64_t, uint64_t>> Inserted = {},
                llvm::ArrayRef<uint32_t> Replaced = {},
                bool InsertedMayReadPC = false,
                llvm::ArrayRef<std::pair<uint64_t, uint64_t>> Relaxed = {},
                FunctionSeams *Seams = nullptr,
                llvm::ArrayRef<std::pair<uint64_t, uint64_t>> FallThrough = {});

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_RELOCATIONPROOF_H
