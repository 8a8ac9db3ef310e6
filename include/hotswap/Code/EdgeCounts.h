//===- hotswap/Code/EdgeCounts.h - Edge counts from block counts -*- C++
//-*-===//
//
// How often each edge of a function's graph (CFG.h) was taken, from how
// often each block ran and a few counted edges, by flow conservation (as
// BOLT and gcov do with a spanning tree): every wave that runs a block
// arrives by one of its in-edges (but at the entry, where waves start) and,
// if the block ends by its edges only (BlockExit::None), leaves by one of
// its out-edges. So
//
//   count(b) = sum of b's in-edges      (every reachable block but the entry)
//   count(b) = sum of b's out-edges     (blocks that leave only by edges)
//
// and an equation with one unknown edge gives it. With every block
// counted, the only edges no equation may give are those of a block that
// ends with a conditional branch whose two successors are reached from
// elsewhere too; counting the fall-through edge of such a block gives the
// taken one. chooseCountedEdges picks, block by block, the fall-through
// edges still unknown after what the others give.
//
// Counts of lanes (counters per lane) do not obey these equations (lanes
// split at a branch both ways): only wave counts are derived.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_EDGECOUNTS_H
#define HOTSWAP_CODE_EDGECOUNTS_H

#include "hotswap/Code/CFG.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace hotswap {
namespace code {

/// An edge: successor \p Succ (an index of Blocks[From].Succs) of block
/// \p From.
struct EdgeRef {
  uint32_t From = 0, Succ = 0;
};

/// The edges out of \p G's reachable blocks, by block, then successor.
std::vector<EdgeRef> graphEdges(const FunctionCFG &G);

/// The count of every edge of \p Edges the equations give, from the
/// blocks' counts \p Blocks (per block of \p G; nullopt: not counted) and
/// the counted edges' \p Counted (per edge; nullopt: not counted); nullopt
/// for the rest. A derived count below 0 (counts that do not add up) is
/// given as it is.
std::vector<std::optional<int64_t>>
deriveEdgeCounts(const FunctionCFG &G, llvm::ArrayRef<EdgeRef> Edges,
                 llvm::ArrayRef<std::optional<uint64_t>> Blocks,
                 llvm::ArrayRef<std::optional<uint64_t>> Counted);

/// The edges (indices of \p Edges) to count so that the rest follow, when
/// blocks \p BlockCounted are counted: fall-through edges of blocks that
/// end with a conditional branch, those \p Countable accepts. Edges that
/// neither these nor the equations give stay unknown.
std::vector<size_t>
chooseCountedEdges(const FunctionCFG &G, llvm::ArrayRef<EdgeRef> Edges,
                   const std::vector<bool> &BlockCounted,
                   llvm::function_ref<bool(size_t Edge)> Countable);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_EDGECOUNTS_H
