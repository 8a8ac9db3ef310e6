//===- lib/Passes/Instrument.cpp - instrument<counters> -------------------===//

#include "hotswap/Passes/Instrument.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Code/CounterCode.h"
#include "hotswap/Code/EdgeCounts.h"
#include "hotswap/Code/Relocate.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/ClonePlan.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/CounterRecord.h"
#include "hotswap/Passes/KernelsPass.h"
#include "hotswap/Passes/SitePlanner.h"
#include "hotswap/Passes/TargetAnalysis.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Regex.h"

#include <array>
#include <deque>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

/// The counter code as the site planner takes it.
static std::vector<SourceLine> counterCode(const CounterKind &Kind) {
  std::vector<SourceLine> Out;
  for (const std::string &L : counterCodeLines(Kind))
    Out.push_back({unsigned(Out.size() + 1), L, ""});
  return Out;
}

/// The kind of counter code for \p T (one with a form).
static CounterKind counterKind(const amdgpu::TargetInfo &T, bool PerLane,
                               bool Wave32) {
  return CounterKind{counterForm(T.Gen).value_or(CounterForm::Scalar),
                     PerLane ? CounterUnit::Lane : CounterUnit::Wave, Wave32,
                     T.Gen};
}

SiteRule hotswap::instrumentSiteRule(const amdgpu::TargetInfo &T,
                                     bool EntryOnly, bool PerLane,
                                     StringRef Only, bool Based) {
  SiteRule Rule;
  Rule.Select = EntryOnly ? SiteSelect::KernelEntry : SiteSelect::BlockStarts;
  Rule.Where = SiteWhere::Before;
  Rule.Only = Only.str();
  Rule.BodyName = "instrument's counter code";
  if (Based) {
    CounterKind Kind = counterKind(T, /*PerLane=*/false, /*Wave32=*/true);
    Kind.Based = true;
    CounterKind Kind64 = Kind;
    Kind64.Wave32 = false;
    Rule.Body = counterCode(Kind);
    Rule.BodyWave64 = counterCode(Kind64);
    auto Lines = [](const CounterKind &K) {
      std::vector<SourceLine> Out;
      for (const std::string &L : basedCounterEntryLines(K))
        Out.push_back({unsigned(Out.size() + 1), L, ""});
      return Out;
    };
    Rule.EntryBody = Lines(Kind);
    Rule.EntryBodyWave64 = Lines(Kind64);
    // The base and the one (scalar) or EXEC's copy (global); global code
    // also takes a VGPR pair holding 1 and 0.
    Rule.ReservedPairs = 2;
    if (Kind.Form == CounterForm::Global)
      Rule.ReservedVGPRPairs = 1;
    Rule.MaxNth = basedCounterReach(Kind) / CounterBytes;
    Rule.StoresMayStay = true;
    Rule.BodyMayReadPC = true;
    Rule.ProblemsRefuse = true;
    // The atomic may make a soft clause with a guest's SMEM operations
    // (XNACK): an s_nop guards it, and verify knows that shape.
    Rule.Guards = true;
    return Rule;
  }
  // The global form moves EXEC: its wave32 and wave64 bodies differ.
  Rule.Body = counterCode(counterKind(T, PerLane, /*Wave32=*/true));
  Rule.BodyWave64 = counterCode(counterKind(T, PerLane, /*Wave32=*/false));
  Rule.BodyMayReadPC = true;
  Rule.ProblemsRefuse = true;
  Rule.Guards = false;
  // Where no registers are free, scalar counter code takes SGPRs above the
  // allocation (gfx9: the descriptor's count grows). Its five, an aligned
  // pair's padding, and four more: the usable count is taken below the
  // most special registers any target of the family has (6), so a kernel
  // with fewer (gfx900 without XNACK: 4) may use what lies above it.
  // (gfx10+ allocates every SGPR to every wave: none lie above.)
  Rule.ExtraSGPRs = 10;
  // Global code takes three VGPRs (a pair among them): where the block has
  // none free, above the allocation (its granule grows). Four: a pair's
  // padding.
  if (counterForm(T.Gen) == CounterForm::Global ||
      counterForm(T.Gen) == CounterForm::Flat)
    Rule.ExtraVGPRs = 4;
  return Rule;
}

Expected<std::vector<KernelSites>> hotswap::planInstrumentSites(
    Object &Obj, KernelsAnalysis::Result &R, CodeAnalysis::Result &CA,
    bool EntryOnly, bool PerLane, bool Based, bool Edges, StringRef Only,
    PassContext *Ctx, StringRef PassName, ArrayRef<size_t> OnlyFunctions,
    bool KeepCode) {
  SiteRule Rule = instrumentSiteRule(R.Target, EntryOnly, PerLane, Only);
  Rule.KeepCode = KeepCode;
  CounterKind Kind = counterKind(R.Target, PerLane, /*Wave32=*/true);
  if (!Based || !hasBasedForm(Kind))
    return planAllSites(Obj, Rule, R, CA, Ctx, PassName, OnlyFunctions);
  SiteRule BasedRule =
      instrumentSiteRule(R.Target, EntryOnly, PerLane, Only, /*Based=*/true);
  BasedRule.KeepCode = KeepCode;
  // Edge counters follow the blocks' at the same base, at most one for each
  // block (the fall-through way out of a conditional branch): half the
  // reach for the blocks keeps them all in reach.
  if (Edges)
    BasedRule.MaxNth = (BasedRule.MaxNth + 1) / 2 - 1;
  Expected<std::vector<KernelSites>> All =
      planAllSites(Obj, BasedRule, R, CA, Ctx, PassName, OnlyFunctions);
  if (!All)
    return All.takeError();
  // Kernels that cannot reserve registers find them at each block.
  std::vector<size_t> Again;
  for (const KernelSites &KS : *All)
    if (!KS.Refused.empty())
      Again.push_back(KS.Function);
  if (Again.empty())
    return All;
  Expected<std::vector<KernelSites>> Rest =
      planAllSites(Obj, Rule, R, CA, Ctx, PassName, Again);
  if (!Rest)
    return Rest.takeError();
  for (KernelSites &KS : *All)
    if (!KS.Refused.empty())
      for (KernelSites &Other : *Rest)
        if (Other.Function == KS.Function) {
          std::string Why = std::move(KS.Refused);
          KS = std::move(Other);
          KS.Refused = std::move(Why);
        }
  return All;
}

std::string hotswap::instrumentRefusal(const amdgpu::TargetInfo &T) {
  if (counterForm(T.Gen))
    return "";
  return "counter code for " + T.Name + " is not built yet (gfx8 to gfx1250)";
}

InstrumentPass::InstrumentPass(Counts W, bool L, std::string O, bool B,
                               uint64_t Batch)
    : What(W), PerLane(L), Only(std::move(O)), Based(B), BatchBytes(Batch) {}

Expected<std::unique_ptr<Pass>> InstrumentPass::create(StringRef Params) {
  Counts What = Counts::Block;
  bool PerLane = false, Based = true;
  uint64_t BatchBytes = DefaultBatchBytes;
  std::string Only;
  SmallVector<StringRef, 4> Parts;
  Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts) {
    auto [Key, Value] = P.split('=');
    if (Key == "counters" &&
        (Value == "kernel" || Value == "block" || Value == "edge")) {
      What = Value == "kernel"  ? Counts::Kernel
             : Value == "block" ? Counts::Block
                                : Counts::Edge;
    } else if (Key == "per" && (Value == "wave" || Value == "lane")) {
      PerLane = Value == "lane";
    } else if (Key == "base" && (Value == "auto" || Value == "none")) {
      Based = Value == "auto";
    } else if (Key == "only") {
      if (Error E = regexParam(Key, Value, Only))
        return E;
    } else if (Key == "batch") {
      if (Value.getAsInteger(0, BatchBytes) || BatchBytes == 0)
        return makeError("batch=" + Value +
                         " is not a positive count of bytes");
    } else {
      return makeError("unknown parameter '" + P +
                       "' (known: counters=kernel|block|edge, "
                       "per=wave|lane, base=auto|none, only=REGEX, "
                       "batch=BYTES)");
    }
  }
  if (What == Counts::Edge && PerLane)
    return makeError("counters=edge counts waves: lanes split at a branch "
                     "both ways, so their edge counts cannot be derived "
                     "(per=lane goes with counters=kernel or counters=block)");
  return std::make_unique<InstrumentPass>(What, PerLane, std::move(Only), Based,
                                          BatchBytes);
}

void InstrumentPass::printPipeline(raw_ostream &OS) const {
  OS << name();
  // batch= is left out: the output does not depend on it (and the record
  // of the pipeline is part of the output).
  if (What == Counts::Block && !PerLane && Only.empty() && Based)
    return;
  OS << "<counters="
     << (What == Counts::Kernel  ? "kernel"
         : What == Counts::Block ? "block"
                                 : "edge");
  if (PerLane)
    OS << ";per=lane";
  if (!Based)
    OS << ";base=none";
  if (!Only.empty())
    OS << ";only=" << Only;
  OS << ">";
}

Error InstrumentPass::planEdges(
    const KernelSites &KS, std::vector<Insertion> &Ins,
    std::vector<std::pair<uint64_t, uint64_t>> &Edges, CodeAnalysis::Result &CA,
    uint32_t Reach, uint32_t Bias, PassContext &Ctx) const {
  const CodeFunction &F = CA.functions().Functions[KS.Function];
  // The graph the sites were planned on, where the planner kept it.
  const bool Kept = KS.Code || CA.isComputed(KS.Function);
  const FunctionCFG &G = KS.Code ? KS.Code->G : CA.cfg(KS.Function);
  // Blocks whose counter code is placed; an edge into one of them can be
  // counted with the same code (the seam before the block holds on every
  // way in, the fall-through one too).
  DenseMap<uint32_t, const SitePlan *> SiteAt;
  for (const SitePlan &S : KS.Sites)
    if (S.Refusal.empty())
      SiteAt[S.Insn] = &S;
  std::vector<bool> Counted(G.Blocks.size());
  for (size_t B = 0; B < G.Blocks.size(); ++B)
    Counted[B] =
        G.Blocks[B].First < G.Blocks[B].End && SiteAt.count(G.Blocks[B].First);
  const std::vector<EdgeRef> All = graphEdges(G);
  auto Into = [&](size_t E) {
    return G.Blocks[G.Blocks[All[E].From].Succs[All[E].Succ].To].First;
  };
  std::vector<size_t> Chosen = chooseCountedEdges(
      G, All, Counted, [&](size_t E) { return SiteAt.count(Into(E)) != 0; });
  // How many the counts will give.
  std::vector<std::optional<uint64_t>> Blocks(G.Blocks.size()),
      Edge(All.size());
  for (size_t B = 0; B < Blocks.size(); ++B)
    if (Counted[B])
      Blocks[B] = 0;
  for (size_t E : Chosen)
    Edge[E] = 0;
  std::vector<std::optional<int64_t>> Known =
      deriveEdgeCounts(G, All, Blocks, Edge);
  const size_t Unknown = llvm::count(Known, std::nullopt);
  Ctx.Stats.add(name(), "edges", "edges seen", All.size());
  Ctx.Stats.add(name(), "edges-derived", "edges derived from counts",
                All.size() - Unknown - Chosen.size());
  if (Unknown) {
    Ctx.Stats.add(name(), "edges-unknown",
                  "edges neither counted nor derived (blocks not counted)",
                  Unknown);
    Ctx.Warn("kernel '" + F.Name + "': " + Twine(Unknown).str() + " of " +
             Twine(All.size()).str() +
             " edges will be neither counted nor derived (blocks around "
             "them are not counted)");
  }
  for (size_t E : Chosen) {
    const SitePlan &S = *SiteAt.lookup(Into(E));
    Insertion In;
    In.Before = S.Insn;
    In.Bytes = S.Body;
    In.FallThrough = true;
    Ins.push_back(std::move(In));
    Edges.push_back(
        {G.Insns[G.Blocks[All[E].From].First].Addr - F.Begin, S.Offset});
  }
  // The copy holds edge code in the order of the blocks it leads into.
  llvm::sort(Edges,
             [](const auto &A, const auto &B) { return A.second < B.second; });
  llvm::stable_sort(Ins, [](const Insertion &A, const Insertion &B) {
    return A.Before < B.Before;
  });
  // Based code adds at its counter's offset: the edges' counters follow
  // the blocks', in that order.
  // The block's code with the block's guards (the edge's code runs right
  // before it, after the same guest instruction).
  if (KS.Reserved) {
    uint64_t Next = KS.applied();
    for (Insertion &In : Ins) {
      if (!In.FallThrough)
        continue;
      const SitePlan &S = *SiteAt.lookup(In.Before);
      const uint64_t Offset = Next++ * CounterBytes;
      if (Offset > Reach)
        return makeError("kernel '" + F.Name + "': more counters than " +
                         "based counter code reaches (" +
                         Twine(Reach / CounterBytes + 1) + ")");
      // The block's code with the edge's offset: the scalar atomic's last
      // operand, the global one's offset:.
      std::string Text;
      for (StringRef L : S.Asm) {
        if (L.starts_with("s_atomic_add_x2 "))
          Text += (L.rsplit(", ").first + ", " + Twine(Offset)).str();
        else if (L.contains("_atomic_add_") && L.contains(" offset:"))
          Text += (L.split(" offset:").first +
                   " offset:" + Twine(int64_t(Offset) - int64_t(Bias)))
                      .str();
        else
          Text += L.str();
        Text += "\n";
      }
      Expected<std::vector<uint8_t>> Code = CA.mc().assemble(Text);
      if (!Code)
        return Code.takeError();
      In.Bytes = std::move(*Code);
    }
  }
  if (!Kept)
    CA.invalidate(KS.Function);
  return Error::success();
}

Expected<bool> InstrumentPass::holds(Object &Obj, KernelsAnalysis::Result &R,
                                     AnalysisManager &AM, PassContext &Ctx) {
  return Obj.findSection(CounterMapSectionName) != nullptr;
}

/// What instrument planned and copied, function by function in order.
struct InstrumentPass::Counted {
  /// The functions with a counted block, the code inserted into each, and
  /// their kernels (indices of R.Kernels).
  std::vector<size_t> Functions;
  std::vector<std::vector<Insertion>> Inserts;
  DenseMap<size_t, std::vector<size_t>> KernelsOf;
  /// Every function's sites (SitesOf points into it).
  std::deque<KernelSites> Planned;
  DenseMap<size_t, KernelSites *> SitesOf;
  /// Per function: the edges counted, (from block, to block) offsets, in
  /// the order of their code in the copy.
  DenseMap<size_t, std::vector<std::pair<uint64_t, uint64_t>>> EdgesOf;
  /// Functions counted by the based form: the first register reserved.
  DenseMap<size_t, unsigned> BasedAt;
  /// Where the copies start, and the next copy's address.
  std::optional<uint64_t> Base;
  uint64_t CopyAt = 0;
  bool AnySites = false;
  std::vector<ClonePlan> Plans;
};

std::vector<std::vector<size_t>>
InstrumentPass::batches(Object &Obj, const KernelsAnalysis::Result &R,
                        const FunctionMap &M, PassContext &Ctx) const {
  std::optional<Regex> OnlyRE;
  if (!Only.empty())
    OnlyRE.emplace(Only);
  std::vector<std::vector<size_t>> Batches;
  uint64_t InBatch = 0;
  for (const auto &C : candidateFunctions(Obj, R, M, OnlyRE, &Ctx, name())) {
    if (Batches.empty() || InBatch >= BatchBytes) {
      Batches.emplace_back();
      InBatch = 0;
    }
    Batches.back().push_back(C.first);
    InBatch += M.Functions[C.first].End - M.Functions[C.first].Begin;
  }
  return Batches;
}

Error InstrumentPass::acceptSites(KernelSites &&Sites, Counted &C,
                                  KernelsAnalysis::Result &R,
                                  CodeAnalysis::Result &CA,
                                  PassContext &Ctx) const {
  C.Planned.push_back(std::move(Sites));
  KernelSites &KS = C.Planned.back();
  const std::string &Kernel = CA.functions().Functions[KS.Function].Name;
  size_t Refused = KS.Sites.size() - KS.applied();
  Ctx.Stats.add(name(), "blocks", "blocks seen", KS.Sites.size());
  if (Refused) {
    const SitePlan *First = nullptr;
    for (const SitePlan &S : KS.Sites)
      if (!S.Refusal.empty() && !First)
        First = &S;
    std::string Msg = "kernel '" + Kernel + "': " + Twine(Refused).str() +
                      " of " + Twine(KS.Sites.size()).str() +
                      " blocks not counted (first: +" + hex(First->Offset) +
                      ": " + First->Refusal + ")";
    if (Ctx.Strict)
      return makeError(Msg);
    Ctx.Warn(Msg);
    Ctx.Stats.add(name(), "blocks-refused", "blocks not counted", Refused);
    // By reason: no register, a window, the code cannot be followed or
    // what is in flight is unknown.
    for (const SitePlan &S : KS.Sites) {
      if (S.Refusal.empty())
        continue;
      StringRef Why = S.Refusal;
      if (Why.starts_with("no free"))
        Ctx.Stats.add(name(), "blocks-refused-registers",
                      "blocks not counted: no free registers");
      else if (Why.starts_with("the code does not fit"))
        Ctx.Stats.add(name(), "blocks-refused-checks",
                      "blocks not counted: the code would write what is "
                      "live (SCC)");
      else if (Why.contains("window") || Why.contains("preload"))
        Ctx.Stats.add(name(), "blocks-refused-window",
                      "blocks not counted: in a window");
      else
        Ctx.Stats.add(name(), "blocks-refused-unknown",
                      "blocks not counted: code or loads in flight unknown");
    }
    Ctx.Stats.add(name(), "kernels-partial", "kernels with blocks not counted");
  }
  if (!KS.applied())
    return Error::success();
  // The form: based (a base set up at the entry) or not, and why not.
  if (KS.Reserved) {
    Ctx.Stats.add(name(), "kernels-based",
                  "kernels counted from a base set up at their entry");
  } else if (!KS.Refused.empty()) {
    Ctx.Stats.add(name(), "kernels-not-based",
                  "kernels whose blocks find registers of their own (no "
                  "SGPRs above the allocation reserved)");
  }
  // Where the distance is: based code's entry starts with s_getpc_b64 and
  // the add of the distance, as scalar code does.
  const CounterLayout Layout =
      KS.Reserved
          ? counterLayout(CounterKind{})
          : counterLayout(counterKind(R.Target, PerLane, /*Wave32=*/true));
  std::vector<Insertion> Ins;
  for (const SitePlan &S : KS.Sites) {
    if (!S.Refusal.empty())
      continue;
    // Based code other than the entry's has no distance.
    if (KS.Reserved && S.Insn != 0) {
    } else if (S.Body.size() < Layout.DistanceAt + 4 ||
               support::endian::read32le(S.Body.data() + Layout.DistanceAt) !=
                   CounterDistancePlaceholder)
      return makeError("kernel '" + Kernel + "' +" + hex(S.Offset) +
                       ": the counter code was not assembled as expected");
    Insertion In;
    In.Before = S.Insn;
    In.Bytes = S.Body;
    Ins.push_back(std::move(In));
  }
  if (What == Counts::Edge) {
    const CounterKind Kind = counterKind(
        R.Target, PerLane, CA.functions().Functions[KS.Function].Wave32);
    if (Error E =
            planEdges(KS, Ins, C.EdgesOf[KS.Function], CA,
                      basedCounterReach(Kind), basedCounterBias(Kind), Ctx))
      return E;
  }
  // The allocation grows to hold the registers the code took above it.
  if (Error E = growDescriptors(R, KS))
    return E;
  if (KS.Reserved)
    C.BasedAt[KS.Function] = *KS.Reserved;
  C.Functions.push_back(KS.Function);
  C.Inserts.push_back(std::move(Ins));
  C.KernelsOf[KS.Function] = KS.Kernels;
  C.SitesOf[KS.Function] = &KS;
  return Error::success();
}

Error InstrumentPass::copyFrom(size_t First, Counted &C, Object &Obj,
                               const KernelsAnalysis::Result &R,
                               CodeAnalysis::Result &CA) const {
  if (C.Functions.size() == First)
    return Error::success();
  if (!C.Base) {
    Expected<uint64_t> B = CodeAppender(Obj).nextAddress(CloneAlign);
    if (!B)
      return B.takeError();
    C.Base = C.CopyAt = *B;
  }
  ArrayRef<size_t> New = ArrayRef(C.Functions).drop_front(First);
  std::vector<RegisterLimits> Limits = functionLimits(R, New, C.KernelsOf);
  std::vector<const DecodedFunction *> Code;
  for (size_t I = 0; I < New.size(); ++I) {
    // Long jumps of a based copy must leave its reserved registers alone.
    if (auto It = C.BasedAt.find(New[I]); It != C.BasedAt.end())
      Limits[I].SGPRs = std::min(Limits[I].SGPRs, It->second);
    Code.push_back(C.SitesOf.lookup(New[I])->Code.get());
  }
  for (ClonePlan &P :
       planClones(CA, New, C.CopyAt, ArrayRef(C.Inserts).drop_front(First),
                  /*InsertedMayReadPC=*/true, Limits, Code)) {
    if (P.Code)
      C.CopyAt = alignTo(P.Code->Base + P.Code->Bytes.size(), CloneAlign);
    C.Plans.push_back(std::move(P));
  }
  for (size_t F : New)
    C.SitesOf.lookup(F)->Code.reset();
  return Error::success();
}

Expected<InstrumentPass::Counted>
InstrumentPass::planAndCopy(Object &Obj, KernelsAnalysis::Result &R,
                            CodeAnalysis::Result &CA, PassContext &Ctx) const {
  // The candidates, a batch at a time (batch=): each function is planned
  // (on the pool's threads), and its copy made and proven, while its graph
  // and instructions are at hand (KernelSites::Code), not decoded again;
  // memory holds a batch's. A function's plan and copy depend on it alone
  // and on the copies before it: the bytes, warnings and statistics are
  // those of one batch (only an error in planning a later batch comes
  // after the warnings of the earlier ones).
  Counted C;
  for (const std::vector<size_t> &Batch :
       batches(Obj, R, CA.functions(), Ctx)) {
    Expected<std::vector<KernelSites>> All = planInstrumentSites(
        Obj, R, CA, What == Counts::Kernel, PerLane, Based,
        What == Counts::Edge, Only, &Ctx, name(), Batch, /*KeepCode=*/true);
    if (!All)
      return All.takeError();
    C.AnySites |= !All->empty();
    // Coverage: every block counted or not, and why not.
    const size_t First = C.Functions.size();
    for (KernelSites &KS : *All)
      if (Error E = acceptSites(std::move(KS), C, R, CA, Ctx))
        return std::move(E);
    if (Error E = copyFrom(First, C, Obj, R, CA))
      return std::move(E);
  }
  return std::move(C);
}

Expected<std::vector<CounterEntry>>
InstrumentPass::counterMap(Counted &C, const KernelsAnalysis::Result &R,
                           const FunctionMap &M, uint64_t &CounterBase,
                           uint64_t &CounterCodeBytes) const {
  // Where the counters will go: after the copies placeClones packs (those
  // with a proven copy) and the prefetch guard after them.
  uint64_t CodeEnd = 0;
  size_t Counters = 0;
  for (const ClonePlan &P : C.Plans)
    if (P.Code && P.Problems.empty()) {
      CodeEnd = P.Code->Base + P.Code->Bytes.size();
      Counters += P.Code->insertedRanges().size() + P.Code->FallThrough.size();
    }
  CounterBase = alignTo(CodeEnd + R.Target.PoolGuardBytes, CounterBytes);
  if (Counters && CounterBase + Counters * CounterBytes - *C.Base > UINT32_MAX)
    return makeError("the counters would lie more than 4 GiB from the "
                     "counter code");
  // Where the distance is: based code's entry starts with s_getpc_b64 and
  // the add of the distance, as scalar code does.
  const CounterLayout SelfLayout =
      counterLayout(counterKind(R.Target, PerLane, /*Wave32=*/true));
  const CounterLayout BasedLayout = counterLayout(CounterKind{});
  // Each counter code gets its counter's distance, in the copies, before
  // they are placed (the proof did not read it: code::proveRelocation).
  std::vector<CounterEntry> Map;
  Map.reserve(Counters);
  CounterCodeBytes = 0;
  for (ClonePlan &P : C.Plans) {
    if (!P.Code || !P.Problems.empty())
      continue;
    const KernelSites &KS = *C.SitesOf.lookup(P.Function);
    // The next counter, for the counter code at \p Code of this copy
    // (based code other than the entry's has its offset already).
    const bool Based = C.BasedAt.count(P.Function);
    const CounterLayout Layout = Based ? BasedLayout : SelfLayout;
    // Based code's base lies this far past the kernel's first counter.
    const uint64_t Bias =
        Based ? basedCounterBias(counterKind(R.Target, PerLane,
                                             M.Functions[P.Function].Wave32))
              : 0;
    auto NextCounter = [&](uint64_t Code, bool HasDistance) {
      const uint64_t Index = Map.size();
      const uint64_t Distance =
          CounterBase + Index * CounterBytes + Bias - (Code + Layout.PCAt);
      if (HasDistance)
        support::endian::write32le(
            P.Code->Bytes.data() + (Code - P.Code->Base) + Layout.DistanceAt,
            uint32_t(Distance));
      return Index;
    };
    std::vector<std::pair<uint64_t, uint64_t>> Ranges =
        P.Code->insertedRanges();
    size_t K = 0;
    for (const SitePlan &S : KS.Sites) {
      if (!S.Refusal.empty())
        continue;
      if (K >= Ranges.size())
        return makeError("kernel '" + M.Functions[P.Function].Name +
                         "': its copy holds fewer counter codes than sites");
      const uint64_t Code = Ranges[K].first;
      CounterCodeBytes += Ranges[K].second - Ranges[K].first;
      ++K;
      const uint64_t Index = NextCounter(Code, !Based || S.Insn == 0);
      Map.push_back({Index, M.Functions[P.Function].Name,
                     S.Insn == 0 ? "entry" : "block", PerLane ? "lane" : "wave",
                     S.Offset, Code, std::nullopt});
    }
    // Edge counters: the copy's fall-through code, in the same order.
    const auto &Edges = C.EdgesOf[P.Function];
    if (Edges.size() != P.Code->FallThrough.size())
      return makeError("kernel '" + M.Functions[P.Function].Name +
                       "': its copy holds other edge counter codes than "
                       "planned");
    for (size_t X = 0; X < Edges.size(); ++X) {
      const uint64_t Code = P.Code->FallThrough[X].first;
      CounterCodeBytes +=
          P.Code->FallThrough[X].second - P.Code->FallThrough[X].first;
      const uint64_t Index = NextCounter(Code, !Based);
      Map.push_back({Index, M.Functions[P.Function].Name, "edge", "wave",
                     Edges[X].first, Code, Edges[X].second});
    }
  }
  return Map;
}

Expected<PreservedAnalyses>
InstrumentPass::runOnKernels(Object &Obj, KernelsAnalysis::Result &R,
                             AnalysisManager &AM, PassContext &Ctx) {
  if (std::string Why = instrumentRefusal(R.Target); !Why.empty()) {
    std::string Msg = Why + "; no kernel instrumented";
    if (Ctx.Strict)
      return makeError(Msg);
    Ctx.Warn(Msg);
    Ctx.Stats.add(name(), "refused-target",
                  "code objects left alone: no counter code for the target");
    return PreservedAnalyses::all();
  }
  auto CA = AM.getResult<CodeAnalysis>(Obj);
  if (!CA)
    return CA.takeError();
  const FunctionMap &M = CA->functions();
  Expected<Counted> C = planAndCopy(Obj, R, *CA, Ctx);
  if (!C)
    return C.takeError();
  if (C->Functions.empty()) {
    Ctx.Warn(!C->AnySites ? "no selected kernel runs its own code: none "
                            "instrumented"
                          : "no block of the selected kernels can be counted");
    return PreservedAnalyses::all();
  }
  uint64_t CounterBase = 0, CounterCodeBytes = 0;
  Expected<std::vector<CounterEntry>> Map =
      counterMap(*C, R, M, CounterBase, CounterCodeBytes);
  if (!Map)
    return Map.takeError();
  Expected<size_t> Placed = placeClones(Obj, R, *CA, C->Plans, C->KernelsOf,
                                        *C->Base, name(), AM, Ctx);
  if (!Placed)
    return Placed.takeError();
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<TargetAnalysis>();
  if (*Placed == 0)
    return PA; // descriptors in the kernels analysis were raised

  CodeAppender Appender(Obj);
  Expected<uint64_t> At = Appender.nextAddress(CounterBytes);
  if (!At)
    return At.takeError();
  if (*At != CounterBase)
    return makeError("the counters would not follow the copies at " +
                     hex(CounterBase) + " (" + hex(*At) + ")");
  // What the descriptors now allocate, in the metadata too (.sgpr_count,
  // .vgpr_count),
  // for the kernels whose copy was placed.
  bool MetadataChanged = false;
  for (const ClonePlan &P : C->Plans) {
    if (!P.Code)
      continue;
    if (Error E =
            growMetadataCounts(CA->mc(), R, *C->SitesOf.lookup(P.Function), Ctx,
                               name(), MetadataChanged))
      return std::move(E);
  }
  if (MetadataChanged)
    if (Error E = commitKernelMetadata(Obj, R, Ctx, name()))
      return std::move(E);
  Expected<Section &> Area =
      Appender.appendZeroed(CodePurpose::Counters, CounterBytes, ELF::SHF_WRITE,
                            Map->size() * CounterBytes);
  if (!Area)
    return Area.takeError();
  if (SymbolTable *ST = Obj.symtab()) {
    Symbol S;
    S.Name = CounterSymbolName; // a literal: outlives the table
    S.Binding = ELF::STB_GLOBAL;
    S.Type = ELF::STT_OBJECT;
    S.Other = ELF::STV_DEFAULT;
    S.Sec = &*Area;
    S.Value = Area->Addr;
    S.Size = Map->size() * CounterBytes;
    ST->add(std::move(S));
  }
  if (Error E = appendCounterMap(Obj, *Map))
    return std::move(E);
  size_t EdgeCounters = llvm::count_if(
      *Map, [](const CounterEntry &E) { return E.Kind == "edge"; });
  Ctx.Stats.add(name(), "counters", "blocks counted",
                Map->size() - EdgeCounters);
  Ctx.Stats.add(name(), "counter-code-bytes",
                "bytes of counter code (entries' set-up included)",
                CounterCodeBytes);
  if (What == Counts::Edge)
    Ctx.Stats.add(name(), "edges-counted", "edges counted", EdgeCounters);
  return PA;
}
