//===- hotswap/Passes/Instrument.h - instrument<counters> -------*- C++ -*-===//
//
// instrument<counters=kernel|block|edge;per=wave|lane;base=auto|none;
//            only=REGEX>
//   Requires:     a linked (ET_DYN) code object with kernels, of the gfx9
//                 family (gfx900...gfx950: scalar atomics); kernels of
//                 other generations are left as they are, warned of (an
//                 error with --strict): their counter code is not built yet.
//   Establishes:  every selected kernel runs a copy of its code (clone-kernels'
//                 placement: code::relocate with the counter code inserted,
//                 proven, in the run's appended segment) in which counter
//                 code runs before the first instruction of every reachable
//                 block (counters=block, the default; branch-only blocks
//                 included, so before their branch), or of the first block
//                 only (counters=kernel). Each run of it adds 1 to the
//                 block's 64-bit counter, once per wave (not per lane):
//
//                   s_getpc_b64     s[a:a+1]
//                   s_mov_b32       sc, COUNTER - (this code + 4)
//                   s_mov_b64       s[d:d+1], 1
//                   s_atomic_add_x2 s[d:d+1], s[a:a+1], sc
//                   s_waitcnt       lgkmcnt(0)
//
//                 (28 bytes; no VGPR, EXEC, VCC, M0 or SCC written) with
//                 registers proven free at the block's start (the site
//                 planner, SitePlanner.h). Where the kernel can reserve
//                 four SGPRs above its allocation (it calls nothing, has
//                 no preload header, and the registers are addressable),
//                 its first block sets up a base and a one in them once
//                 and every other block takes 8 bytes (the based form,
//                 CounterCode.h):
//
//                   s_atomic_add_x2 s[d:d+1], s[b:b+1], 8*N
//
//                 the allocation grows by them (-stats counts the
//                 kernels). per=lane counts each wave's
//                 active lanes instead (s_bcnt1_i32_b64 of EXEC: 32 bytes,
//                 SCC written, so SCC must be dead at the block's start).
//                 counters=edge counts blocks so, and the edges flow
//                 conservation leaves unknown (EdgeCounts.h): each such
//                 edge, the fall-through edge of a conditional branch,
//                 gets counter code of its own on the way into its block
//                 (Insertion::FallThrough, the block's registers); the
//                 others follow from the counts (print<counters>). Waves
//                 only: per=lane does not go with counters=edge.
//   Records:      the counter area, `__hotswap_counters` and the counter
//                 map (CounterRecord.h); the kernels' `.hotswap.clones`
//                 lines.
//   Refuses:      a block with no free registers for the counter code (or
//                 in a window, or after a call where what loads still write
//                 is unknown) is not counted: warned per kernel with the
//                 count and the first reason (an error with --strict), in
//                 statistics; a kernel whose copy cannot be made is left as
//                 it is. Kernels already running a copy are left alone:
//                 instrument before clone-kernels and patch-insns. A
//                 kernel entered through a stub keeps it, led to the copy
//                 (StubRetarget.h).
//   Holds when the object has a counter map (instrumented before).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_INSTRUMENT_H
#define HOTSWAP_PASSES_INSTRUMENT_H

#include "hotswap/Code/Relocate.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/CounterRecord.h"
#include "hotswap/Passes/KernelsPass.h"
#include "hotswap/Passes/SitePlanner.h"

#include <memory>
#include <string>
#include <vector>

namespace hotswap {

class InstrumentPass : public KernelsPassMixin<InstrumentPass> {
public:
  static constexpr llvm::StringLiteral Name = "instrument";
  static constexpr llvm::StringLiteral Invariant =
      "the object's selected kernels count their blocks (a counter map)";

  /// What is counted.
  enum class Counts { Kernel, Block, Edge };

  /// Code planned, copied and proven at a time, by default (batch=).
  static constexpr uint64_t DefaultBatchBytes = 256 << 10;

  InstrumentPass(Counts What, bool PerLane, std::string Only, bool Based = true,
                 uint64_t BatchBytes = DefaultBatchBytes);
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
  void printPipeline(llvm::raw_ostream &OS) const override;

  llvm::Expected<bool> holds(Object &Obj, KernelsAnalysis::Result &R,
                             AnalysisManager &AM, PassContext &Ctx);
  llvm::Expected<PreservedAnalyses> runOnKernels(Object &Obj,
                                                 KernelsAnalysis::Result &R,
                                                 AnalysisManager &AM,
                                                 PassContext &Ctx);

private:
  struct Counted;
  /// The candidate functions (function order), in batches of about
  /// BatchBytes of code.
  std::vector<std::vector<size_t>> batches(Object &Obj,
                                           const KernelsAnalysis::Result &R,
                                           const code::FunctionMap &M,
                                           PassContext &Ctx) const;
  /// Plans every candidate's sites and makes and proves the copies of
  /// those with a counted block, a batch at a time.
  llvm::Expected<Counted> planAndCopy(Object &Obj, KernelsAnalysis::Result &R,
                                      CodeAnalysis::Result &CA,
                                      PassContext &Ctx) const;
  /// One function's sites: warnings and statistics of what is not counted,
  /// the counter code to insert, the descriptors grown; kept in \p C.
  llvm::Error acceptSites(KernelSites &&KS, Counted &C,
                          KernelsAnalysis::Result &R, CodeAnalysis::Result &CA,
                          PassContext &Ctx) const;
  /// The copies of the functions accepted from \p First on.
  llvm::Error copyFrom(size_t First, Counted &C, Object &Obj,
                       const KernelsAnalysis::Result &R,
                       CodeAnalysis::Result &CA) const;
  /// The counter map of the proven copies, each counter code given its
  /// counter's distance; where the counters start (\p CounterBase) and the
  /// bytes of counter code.
  llvm::Expected<std::vector<CounterEntry>>
  counterMap(Counted &C, const KernelsAnalysis::Result &R,
             const code::FunctionMap &M, uint64_t &CounterBase,
             uint64_t &CounterCodeBytes) const;
  /// counters=edge: adds to \p Ins the counter code of the edges of
  /// \p KS's function that block counts leave unknown (EdgeCounts.h), and
  /// to \p Edges their (from block, to block) offsets, in code order;
  /// based code adds at offsets up to \p Reach from the kernel's first
  /// counter, \p Bias before its base.
  llvm::Error planEdges(const KernelSites &KS,
                        std::vector<code::Insertion> &Ins,
                        std::vector<std::pair<uint64_t, uint64_t>> &Edges,
                        CodeAnalysis::Result &CA, uint32_t Reach, uint32_t Bias,
                        PassContext &Ctx) const;

  Counts What;
  bool PerLane = false;
  std::string Only;
  /// base=auto (the default): the based form where a kernel allows it.
  bool Based = true;
  /// batch=BYTES: functions are planned, copied and proven in batches of
  /// about this much code (at least one function each); memory holds a
  /// batch's graphs and instructions. The output never depends on it.
  uint64_t BatchBytes = DefaultBatchBytes;
};

/// The sites instrument counts (block starts, or the entry with
/// \p EntryOnly) of kernels matching \p Only, with its counter code for
/// target \p T (one instrumentRefusal accepts); with \p Based, the based
/// form (CounterCode.h: gfx9 counting waves).
SiteRule instrumentSiteRule(const amdgpu::TargetInfo &T, bool EntryOnly,
                            bool PerLane, llvm::StringRef Only,
                            bool Based = false);

/// The sites instrument counts and their code: what the pass plans and
/// print<sites;instrument=...> shows. Counting waves on gfx9-12, with
/// \p Based, each kernel takes the based form where registers can be
/// reserved for it (8 bytes a block after the entry on gfx9, 24 or 28 on
/// gfx10-12), else the form that finds its registers at each block;
/// \p Edges keeps room in the base's reach for edge counters. With
/// \p OnlyFunctions, only those functions; with \p KeepCode, each keeps
/// its graph and instructions (KernelSites::Code).
llvm::Expected<std::vector<KernelSites>> planInstrumentSites(
    Object &Obj, KernelsAnalysis::Result &R, CodeAnalysis::Result &CA,
    bool EntryOnly, bool PerLane, bool Based, bool Edges, llvm::StringRef Only,
    PassContext *Ctx, llvm::StringRef PassName,
    llvm::ArrayRef<size_t> OnlyFunctions = {}, bool KeepCode = false);

/// Why instrument has no counter code for \p T (empty: it has).
std::string instrumentRefusal(const amdgpu::TargetInfo &T);

} // namespace hotswap

#endif // HOTSWAP_PASSES_INSTRUMENT_H
