//===- lib/Code/EdgeCounts.cpp - Edge counts from block counts
//-------------===//

#include "hotswap/Code/EdgeCounts.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

std::vector<EdgeRef> code::graphEdges(const FunctionCFG &G) {
  std::vector<EdgeRef> Out;
  for (uint32_t B = 0; B < G.Blocks.size(); ++B)
    if (G.Blocks[B].Reachable)
      for (uint32_t S = 0; S < G.Blocks[B].Succs.size(); ++S)
        Out.push_back({B, S});
  return Out;
}

std::vector<std::optional<int64_t>>
code::deriveEdgeCounts(const FunctionCFG &G, ArrayRef<EdgeRef> Edges,
                       ArrayRef<std::optional<uint64_t>> Blocks,
                       ArrayRef<std::optional<uint64_t>> Counted) {
  std::vector<std::optional<int64_t>> Value(Edges.size());
  for (size_t E = 0; E < Edges.size() && E < Counted.size(); ++E)
    if (Counted[E])
      Value[E] = static_cast<int64_t>(*Counted[E]);
  // The equations: a block's count and the edges that add up to it.
  struct Equation {
    int64_t Total = 0;
    std::vector<size_t> Edges;
  };
  std::vector<Equation> Eqs;
  std::vector<std::vector<size_t>> In(G.Blocks.size()), Out(G.Blocks.size());
  for (size_t E = 0; E < Edges.size(); ++E) {
    Out[Edges[E].From].push_back(E);
    In[G.Blocks[Edges[E].From].Succs[Edges[E].Succ].To].push_back(E);
  }
  for (uint32_t B = 0; B < G.Blocks.size(); ++B) {
    if (!G.Blocks[B].Reachable || B >= Blocks.size() || !Blocks[B])
      continue;
    const int64_t N = static_cast<int64_t>(*Blocks[B]);
    if (B != 0)
      Eqs.push_back({N, In[B]});
    if (G.Blocks[B].Exit == BlockExit::None && !Out[B].empty())
      Eqs.push_back({N, Out[B]});
  }
  // Each edge's equations; solve any equation with one unknown left.
  std::vector<std::vector<size_t>> EqsOf(Edges.size());
  std::vector<size_t> Unknown(Eqs.size());
  std::vector<size_t> Work;
  for (size_t Q = 0; Q < Eqs.size(); ++Q) {
    for (size_t E : Eqs[Q].Edges) {
      EqsOf[E].push_back(Q);
      Unknown[Q] += !Value[E];
    }
    if (Unknown[Q] == 1)
      Work.push_back(Q);
  }
  while (!Work.empty()) {
    size_t Q = Work.back();
    Work.pop_back();
    if (Unknown[Q] != 1)
      continue;
    // Counts come from a dump (a file): sums wrap instead of overflowing,
    // and counts that do not add up show as they are.
    uint64_t Sum = 0;
    size_t Missing = SIZE_MAX;
    for (size_t E : Eqs[Q].Edges) {
      if (Value[E])
        Sum += static_cast<uint64_t>(*Value[E]);
      else
        Missing = E;
    }
    if (Missing == SIZE_MAX)
      continue;
    Value[Missing] =
        static_cast<int64_t>(static_cast<uint64_t>(Eqs[Q].Total) - Sum);
    for (size_t R : EqsOf[Missing])
      if (--Unknown[R] == 1)
        Work.push_back(R);
  }
  return Value;
}

std::vector<size_t>
code::chooseCountedEdges(const FunctionCFG &G, ArrayRef<EdgeRef> Edges,
                         const std::vector<bool> &BlockCounted,
                         function_ref<bool(size_t)> Countable) {
  // Only whether a count is known matters here: every count is 0.
  std::vector<std::optional<uint64_t>> Blocks(G.Blocks.size());
  for (size_t B = 0; B < Blocks.size() && B < BlockCounted.size(); ++B)
    if (BlockCounted[B])
      Blocks[B] = 0;
  std::vector<std::optional<uint64_t>> Counted(Edges.size());
  std::vector<size_t> Chosen;
  std::vector<std::optional<int64_t>> Known =
      deriveEdgeCounts(G, Edges, Blocks, Counted);
  for (size_t E = 0; E < Edges.size(); ++E) {
    const Block &From = G.Blocks[Edges[E].From];
    if (Known[E] || From.Succs[Edges[E].Succ].Kind != EdgeKind::FallThrough ||
        G.Insns[From.End - 1].F != Flow::CondJump || !Countable(E))
      continue;
    Counted[E] = 0;
    Chosen.push_back(E);
    Known = deriveEdgeCounts(G, Edges, Blocks, Counted);
  }
  return Chosen;
}
