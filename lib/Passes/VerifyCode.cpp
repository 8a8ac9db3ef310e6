//===- lib/Passes/VerifyCode.cpp - Check decoded code against facts -------===//

#include "hotswap/Passes/VerifyCode.h"

#include "hotswap/Code/Hazards.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/ThreadPool.h"

#include <mutex>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

VerifyCodePass::VerifyCodePass(std::string Only, bool Hazards)
    : Only(std::move(Only)), Hazards(Hazards) {}
VerifyCodePass::~VerifyCodePass() = default;

Expected<std::unique_ptr<Pass>> VerifyCodePass::create(StringRef Params) {
  std::string Only;
  bool Hazards = false;
  if (Error E = parseOnlyParams("", Params, Only, {{"hazards", &Hazards}}))
    return std::move(E);
  return std::make_unique<VerifyCodePass>(std::move(Only), Hazards);
}

void VerifyCodePass::printPipeline(raw_ostream &OS) const {
  OS << name();
  if (!Only.empty() || Hazards)
    OS << "<" << (Only.empty() ? "" : "only=" + Only)
       << (Only.empty() || !Hazards ? "" : ";") << (Hazards ? "hazards" : "")
       << ">";
}

/// Graph consistency, from the instructions: the first problem, if any.
static std::optional<std::string> graphProblem(const FunctionCFG &G) {
  if (G.Insns.empty())
    return std::nullopt;
  if (G.Blocks.empty() || G.Blocks[0].First != 0)
    return std::string("the first block does not start at the entry");
  for (size_t I = 1; I < G.Insns.size(); ++I)
    if (G.Insns[I].Addr != G.Insns[I - 1].end())
      return "instruction at " + hex(G.Insns[I].Addr) +
             " does not follow the one before";
  DenseMap<uint64_t, uint32_t> BlockAt;
  for (uint32_t B = 0; B < G.Blocks.size(); ++B) {
    const Block &Bl = G.Blocks[B];
    uint32_t Expected = B ? G.Blocks[B - 1].End : 0;
    if (Bl.First != Expected || Bl.End <= Bl.First || Bl.End > G.Insns.size())
      return "block " + std::to_string(B) + " does not follow block " +
             std::to_string(B ? B - 1 : 0);
    BlockAt[G.Insns[Bl.First].Addr] = B;
  }
  if (G.Blocks.back().End != G.Insns.size())
    return std::string("the blocks do not cover every instruction");
  for (uint32_t B = 0; B < G.Blocks.size(); ++B) {
    const Block &Bl = G.Blocks[B];
    const Insn &Last = G.Insns[Bl.End - 1];
    for (const Edge &E : Bl.Succs) {
      if (E.To >= G.Blocks.size())
        return "block " + std::to_string(B) + " has an edge to no block";
      uint64_t To = G.Insns[G.Blocks[E.To].First].Addr;
      switch (E.Kind) {
      case EdgeKind::FallThrough:
        if (To != Last.end())
          return "fall-through edge of block " + std::to_string(B) +
                 " does not go to the next instruction";
        break;
      case EdgeKind::Taken:
      case EdgeKind::Jump:
        if (!Last.Target || To != *Last.Target)
          return "branch edge of block " + std::to_string(B) + " to " +
                 hex(To) + " is not the branch's target";
        break;
      case EdgeKind::Indirect:
        break;
      }
    }
    // Inside a block only the last instruction may transfer control.
    for (uint32_t I = Bl.First; I + 1 < Bl.End; ++I)
      if (G.Insns[I].endsBlock())
        return "instruction at " + hex(G.Insns[I].Addr) +
               " ends a block in the middle of block " + std::to_string(B);
  }
  return std::nullopt;
}

/// Units read at some instruction that a write may not have reached
/// (forward, "written on every path", from the ABI's registers at the
/// entry), with the first address of such a read. Independent of liveness.
static std::vector<std::pair<unsigned, uint64_t>>
undefinedReads(const FunctionCFG &G, const Liveness &L, const RegSet &AtEntry,
               unsigned NumUnits) {
  size_t NB = G.Blocks.size();
  std::vector<std::optional<RegSet>> In(NB);
  In[0] = AtEntry;
  std::vector<uint32_t> Work{0};
  auto Through = [&](uint32_t B, RegSet S) {
    for (uint32_t I = G.Blocks[B].First; I < G.Blocks[B].End; ++I) {
      const InsnRegs &R = L.regs(I);
      for (uint16_t U : R.ScalarDefs)
        S.set(U);
      for (uint16_t U : R.VectorDefs)
        S.set(U);
    }
    return S;
  };
  while (!Work.empty()) {
    uint32_t B = Work.back();
    Work.pop_back();
    RegSet Out = Through(B, *In[B]);
    for (const Edge &E : G.Blocks[B].Succs) {
      if (!In[E.To]) {
        In[E.To] = Out;
        Work.push_back(E.To);
        continue;
      }
      RegSet Meet = *In[E.To];
      Meet &= Out;
      if (Meet != *In[E.To]) {
        In[E.To] = std::move(Meet);
        Work.push_back(E.To);
      }
    }
  }
  std::vector<uint64_t> First(NumUnits, UINT64_MAX);
  for (uint32_t B = 0; B < NB; ++B) {
    if (!In[B])
      continue;
    RegSet S = *In[B];
    for (uint32_t I = G.Blocks[B].First; I < G.Blocks[B].End; ++I) {
      const InsnRegs &R = L.regs(I);
      for (uint16_t U : R.Uses)
        if (!S.test(U))
          First[U] = std::min(First[U], G.Insns[I].Addr);
      for (uint16_t U : R.ScalarDefs)
        S.set(U);
      for (uint16_t U : R.VectorDefs)
        S.set(U);
    }
  }
  std::vector<std::pair<unsigned, uint64_t>> Out;
  for (unsigned U = 0; U < NumUnits; ++U)
    if (First[U] != UINT64_MAX)
      Out.push_back({U, First[U]});
  return Out;
}

/// Reads of a register a load may still be writing (a wait is missing, or
/// the wait-count analysis is wrong): instruction index, unit, counter.
/// Counters left unknown by a call or a device function's entry are not
/// counted (there any register may be pending until a wait for 0).
static std::vector<std::tuple<uint32_t, unsigned, Counter>>
inFlightReads(const FunctionCFG &G, const Liveness &L, const WaitCounts &W) {
  std::vector<std::tuple<uint32_t, unsigned, Counter>> Out;
  for (uint32_t B = 0; B < G.Blocks.size(); ++B) {
    if (!G.Blocks[B].Reachable)
      continue;
    WaitState S = W.In[B];
    for (uint32_t I = G.Blocks[B].First; I < G.Blocks[B].End; ++I) {
      for (unsigned C = 0; C < NumCounters; ++C) {
        if (S.C[C].AnyReg || S.C[C].Regs.empty())
          continue;
        for (uint16_t U : L.regs(I).Uses)
          for (const PendingReg &P : S.C[C].Regs)
            if (P.Unit == U)
              Out.emplace_back(I, U, Counter(C));
      }
      W.step(I, S);
    }
  }
  return Out;
}

static std::string
inFlightText(ArrayRef<std::tuple<uint32_t, unsigned, Counter>> Reads,
             const FunctionCFG &G, const WaitCounts &W,
             const RegisterModel &RM) {
  auto [I, U, C] = Reads.front();
  RegSet One = RM.emptySet();
  One.set(U);
  std::string S = "reads " + RM.format(One) + " at " + hex(G.Insns[I].Addr) +
                  " while a load into it may be in flight (" +
                  W.Set.name(C).str() + ")";
  if (Reads.size() > 1)
    S += "; " + std::to_string(Reads.size() - 1) + " more such reads";
  return S;
}

namespace {
struct Totals {
  uint64_t Functions = 0, Kernels = 0, Bytes = 0, Decoded = 0, Blocks = 0,
           Unreachable = 0, Padding = 0, NotEditable = 0, AbiOk = 0,
           AbiUndef = 0, AbiConservative = 0, CountsOk = 0, CountsChecked = 0,
           WaitsOk = 0, WaitsFlat = 0, WaitsChecked = 0, InFlightReads = 0,
           HazardsChecked = 0, HazardsOk = 0, Hazards = 0;
  void add(const Totals &O) {
    Functions += O.Functions, Kernels += O.Kernels, Bytes += O.Bytes;
    Decoded += O.Decoded, Blocks += O.Blocks, Unreachable += O.Unreachable;
    Padding += O.Padding, NotEditable += O.NotEditable, AbiOk += O.AbiOk;
    AbiUndef += O.AbiUndef, AbiConservative += O.AbiConservative;
    CountsOk += O.CountsOk, CountsChecked += O.CountsChecked;
    WaitsOk += O.WaitsOk, WaitsFlat += O.WaitsFlat;
    WaitsChecked += O.WaitsChecked, InFlightReads += O.InFlightReads;
    HazardsChecked += O.HazardsChecked, HazardsOk += O.HazardsOk;
    Hazards += O.Hazards;
  }
};
/// What checking one function found.
struct Report {
  Totals T;
  std::vector<std::string> Exceptions, Failures, Notes;
};
} // namespace

/// The registers live at kernel \p KI's entry against what the ABI sets.
static void checkEntryLiveIns(const CodeFunction &F,
                              const CodeAnalysis::FunctionCode &FC,
                              const KernelInfo &KI, const RegisterModel &RM,
                              Report &Out) {
  Totals &T = Out.T;
  const FunctionCFG &G = FC.CFG;
  std::vector<std::string> &Exceptions = Out.Exceptions, &Notes = Out.Notes;
  // What the ABI sets at wave launch.
  RegSet Abi = RM.emptySet();
  RM.addSGPRs(0, KI.LiveInSGPRs, Abi);
  unsigned WorkItemIDs = (KI.KD.ComputePgmRsrc2 >> 11) & 3;
  RM.addVGPRs(0, std::min(WorkItemIDs, 2u) + 1, Abi);
  RM.addClass(RegClass::EXEC, Abi);
  RegSet Extra = FC.Live.LiveIn[0];
  Extra.reset(Abi);
  if (Extra.none()) {
    ++T.AbiOk;
  } else {
    // A register the code reads where no write may have reached it (a
    // compiler's undef operand, e.g. the unused half of a 64-bit source)
    // is live at the entry, rightly. What remains is imprecision.
    std::vector<std::pair<unsigned, uint64_t>> Undef =
        undefinedReads(G, FC.Live, Abi, RM.numUnits());
    RegSet Explained = RM.emptySet();
    uint64_t FirstAt = UINT64_MAX;
    for (auto &[U, At] : Undef)
      if (Extra.test(U)) {
        Explained.set(U);
        FirstAt = std::min(FirstAt, At);
      }
    RegSet Unexplained = Extra;
    Unexplained.reset(Explained);
    // Where control leaves to code the analysis does not see (a call, an
    // unresolved jump), every register is taken as read: sound, and said.
    bool Conservative =
        !G.Calls.empty() || llvm::any_of(G.Blocks, [](const Block &B) {
          return B.Exit != BlockExit::None && B.Exit != BlockExit::EndProgram;
        });
    if (Unexplained.none()) {
      ++T.AbiUndef;
      Notes.push_back("kernel '" + F.Name + "' reads " + RM.format(Explained) +
                      " before any write (first at " + hex(FirstAt) + ")");
    } else if (Conservative) {
      ++T.AbiConservative;
      Notes.push_back("kernel '" + F.Name +
                      "' calls or leaves to code not analysed, where every "
                      "register counts as read");
    } else {
      Exceptions.push_back("kernel '" + F.Name +
                           "': live at entry, not set by the ABI and "
                           "written before every read: " +
                           RM.format(Unexplained));
    }
  }
}

/// The highest live registers against the metadata's counts.
static void checkCounts(const CodeFunction &F,
                        const CodeAnalysis::FunctionCode &FC,
                        const KernelInfo &KI, const RegisterModel &RM,
                        Report &Out) {
  Totals &T = Out.T;
  std::vector<std::string> &Failures = Out.Failures;
  // Register counts from the metadata.
  if (!KI.MD)
    return;
  ++T.CountsChecked;
  bool Ok = true;
  auto Check = [&](RegClass C, std::optional<uint64_t> Count, StringRef Key,
                   StringRef Prefix) {
    RegSet Live = FC.Live.everLive();
    Live &= FC.Live.Referenced;
    std::optional<unsigned> H = RM.highest(Live, C);
    if (!H || !Count || *H < *Count)
      return;
    Ok = false;
    Failures.push_back("kernel '" + F.Name + "': " + Prefix.str() +
                       std::to_string(*H) + " is live, beyond the metadata's " +
                       Key.str() + " " + std::to_string(*Count));
  };
  Check(RegClass::SGPR, KI.MD->SGPRCount, ".sgpr_count", "s");
  Check(RegClass::VGPR, KI.MD->VGPRCount, ".vgpr_count", "v");
  Check(RegClass::AGPR, KI.MD->AGPRCount, ".agpr_count", "a");
  T.CountsOk += Ok;
}

namespace {
/// What checking code against the hazard rules needs (verify-code<hazards>).
struct HazardCheck {
  const amdgpu::TargetInfo *Target = nullptr;
  /// The decoder of the thread, and the bytes of the function.
  const amdgpu::TargetMC *MC = nullptr;
  ArrayRef<uint8_t> Bytes;
};
} // namespace

/// Compiled code keeps the hazard rules of its target (the compiler's
/// hazard recognizer put the waits there): a hazard found is a rule the
/// model reads more strictly than the compiler, or a compiler's slip.
static void checkHazards(const CodeFunction &F, const FunctionCFG &G,
                         const HazardCheck &HC, Report &Out) {
  if (!G.editable() || G.Insns.empty())
    return;
  std::vector<MCInst> Decoded = decodeInsns(*HC.MC, G.Insns, HC.Bytes, F.Begin);
  if (Decoded.size() != G.Insns.size())
    return;
  ++Out.T.HazardsChecked;
  HazardCode Code(*HC.MC, G, Decoded, F.Kind);
  HazardRules Rules = HazardRules::of(*HC.MC, *HC.Target, F.Wave32);
  std::vector<Hazard> Found;
  for (uint32_t I = 0; I < Code.size(); ++I)
    findHazards(Code, Rules, I, Found);
  Out.T.Hazards += Found.size();
  if (Found.empty()) {
    ++Out.T.HazardsOk;
    return;
  }
  Out.Exceptions.push_back(
      "function '" + F.Name + "': " + describeHazard(Code, Found.front()) +
      (Found.size() > 1
           ? "; " + std::to_string(Found.size() - 1) + " more hazards"
           : std::string()));
}

/// Checks function \p F, whose decoded code is \p FC, into \p Out
/// (\p KernelAt: the kernels by their code entry).
static void
checkFunction(const CodeFunction &F, const CodeAnalysis::FunctionCode &FC,
              const DenseMap<uint64_t, const KernelInfo *> &KernelAt,
              const RegisterModel &RM, const HazardCheck *HC, Report &Out) {
  Totals &T = Out.T;
  std::vector<std::string> &Exceptions = Out.Exceptions,
                           &Failures = Out.Failures;
  const FunctionCFG &G = FC.CFG;
  ++T.Functions;
  T.Bytes += F.size();
  T.Decoded += G.decodedBytes();
  T.Blocks += G.Blocks.size();
  for (const Block &B : G.Blocks) {
    T.Unreachable += !B.Reachable && !B.Padding;
    T.Padding += B.Padding;
  }
  std::string Who = "function '" + F.Name + "'";
  if (!G.editable()) {
    ++T.NotEditable;
    for (const CodeFinding &Fd : G.Findings)
      if (Fd.Blocking)
        Exceptions.push_back(Who + ": " + Fd.Message);
  }
  if (std::optional<std::string> P = graphProblem(G))
    Failures.push_back(Who + ": graph: " + *P);
  // Compiled code waits before it reads what a load writes: a read of a
  // register still in flight is a missing wait or a wrong analysis.
  if (G.editable() && FC.Waits.Converged) {
    ++T.WaitsChecked;
    auto Reads = inFlightReads(G, FC.Live, FC.Waits);
    // A compiler that knew its FLAT accesses were global waited for them
    // on vmcnt alone: explained, if that is all there is.
    if (Reads.empty())
      ++T.WaitsOk;
    else if (FC.Waits.HasFlat &&
             inFlightReads(G, FC.Live, FC.Waits.assumingFlatGlobal()).empty())
      ++T.WaitsFlat;
    else
      Exceptions.push_back(Who + ": " + inFlightText(Reads, G, FC.Waits, RM));
    T.InFlightReads += Reads.size();
  }
  if (HC)
    checkHazards(F, G, *HC, Out);
  if (F.Kind != FunctionKind::Kernel || G.Blocks.empty())
    return;
  auto KIt = KernelAt.find(F.Begin);
  if (KIt == KernelAt.end())
    return;
  const KernelInfo &KI = *KIt->second;
  ++T.Kernels;

  checkEntryLiveIns(F, FC, KI, RM, Out);
  checkCounts(F, FC, KI, RM, Out);
}

/// Checks the functions \p Todo of \p R that nothing has cached on the
/// threads of \p Pool, each thread with its own TargetMC, into \p Reports
/// (by position in Todo; the others are left for the caller). Without a
/// pool, or with one function, nothing is done here.
static Error
checkInParallel(const CodeAnalysis::Result &R, const amdgpu::TargetInfo &TI,
                ArrayRef<size_t> Todo,
                const DenseMap<uint64_t, const KernelInfo *> &KernelAt,
                const RegisterModel &RM, bool Hazards,
                ThreadPoolInterface *Pool, std::vector<Report> &Reports) {
  if (!Pool || Todo.size() < 2 || Pool->getMaxConcurrency() < 2)
    return Error::success();
  size_t Chunks = std::min<size_t>(4 * Pool->getMaxConcurrency(), Todo.size());
  std::mutex M;
  std::optional<Error> Failed;
  ThreadPoolTaskGroup Tasks(*Pool);
  for (size_t C = 0; C < Chunks; ++C)
    Tasks.async([&, C] {
      Expected<std::unique_ptr<amdgpu::TargetMC>> MC =
          amdgpu::TargetMC::create(TI.MCPU, TI.Features);
      if (!MC) {
        std::lock_guard<std::mutex> L(M);
        if (!Failed)
          Failed.emplace(MC.takeError());
        else
          consumeError(MC.takeError());
        return;
      }
      for (size_t J = C; J < Todo.size(); J += Chunks)
        if (!R.isComputed(Todo[J])) {
          const CodeFunction &F = R.functions().Functions[Todo[J]];
          HazardCheck HC{&TI, MC->get(), R.bytes(F)};
          checkFunction(F, *R.computeFunction(Todo[J], **MC), KernelAt, RM,
                        Hazards ? &HC : nullptr, Reports[J]);
        }
    });
  Tasks.wait();
  if (Failed)
    return std::move(*Failed);
  return Error::success();
}

Expected<PreservedAnalyses>
VerifyCodePass::run(Object &Obj, AnalysisManager &AM, PassContext &Ctx) {
  auto K = AM.getResult<KernelsAnalysis>(Obj);
  if (!K)
    return K.takeError();
  auto R = AM.getResult<CodeAnalysis>(Obj);
  if (!R)
    return R.takeError();
  std::optional<Regex> OnlyRE;
  if (!Only.empty())
    OnlyRE.emplace(Only);
  const RegisterModel &RM = RegisterModel::get(R->mc().regInfo());
  DenseMap<uint64_t, const KernelInfo *> KernelAt;
  for (const KernelInfo &KI : K->Kernels)
    KernelAt[KI.CodeEntry] = &KI;

  const FunctionMap &M = R->functions();
  // Which functions, and for each what checking it found (in this order,
  // whatever threads did the work).
  std::vector<size_t> Todo;
  for (size_t I = 0; I < M.Functions.size(); ++I)
    if (!OnlyRE || OnlyRE->match(M.Functions[I].Name))
      Todo.push_back(I);
  std::vector<Report> Reports(Todo.size());
  if (Error E = checkInParallel(*R, K->Target, Todo, KernelAt, RM, Hazards,
                                Ctx.ThreadPool, Reports))
    return std::move(E);
  for (size_t J = 0; J < Todo.size(); ++J) {
    if (Reports[J].T.Functions)
      continue; // done on another thread
    size_t I = Todo[J];
    // Checked once: what this makes is dropped after, so memory holds one
    // function at a time (what a pass computed before is kept).
    bool Kept = R->isComputed(I);
    auto Drop = make_scope_exit([&] {
      if (!Kept)
        R->invalidate(I);
    });
    HazardCheck HC{&K->Target, &R->mc(), R->bytes(M.Functions[I])};
    checkFunction(M.Functions[I], R->function(I), KernelAt, RM,
                  Hazards ? &HC : nullptr, Reports[J]);
  }
  Totals T;
  std::vector<std::string> Exceptions, Failures, Notes;
  for (Report &Rp : Reports) {
    T.add(Rp.T);
    llvm::append_range(Exceptions, Rp.Exceptions);
    llvm::append_range(Failures, Rp.Failures);
    llvm::append_range(Notes, Rp.Notes);
  }

  auto Pct = [](uint64_t A, uint64_t B) {
    return B ? formatv("{0:F2}%", 100.0 * A / B).str() : std::string("-");
  };
  if (Ctx.JSON) {
    json::Array Ex, Fa;
    for (auto &S : Exceptions)
      Ex.push_back(S);
    for (auto &S : Failures)
      Fa.push_back(S);
    json::Value V = json::Object{
        {"verify-code",
         json::Object{
             {"functions", static_cast<int64_t>(T.Functions)},
             {"kernels", static_cast<int64_t>(T.Kernels)},
             {"bytes", static_cast<int64_t>(T.Bytes)},
             {"decoded_bytes", static_cast<int64_t>(T.Decoded)},
             {"blocks", static_cast<int64_t>(T.Blocks)},
             {"unreachable_blocks", static_cast<int64_t>(T.Unreachable)},
             {"padding_blocks", static_cast<int64_t>(T.Padding)},
             {"not_editable", static_cast<int64_t>(T.NotEditable)},
             {"abi_ok", static_cast<int64_t>(T.AbiOk)},
             {"abi_undefined_reads", static_cast<int64_t>(T.AbiUndef)},
             {"abi_conservative", static_cast<int64_t>(T.AbiConservative)},
             {"counts_checked", static_cast<int64_t>(T.CountsChecked)},
             {"counts_ok", static_cast<int64_t>(T.CountsOk)},
             {"waits_checked", static_cast<int64_t>(T.WaitsChecked)},
             {"waits_ok", static_cast<int64_t>(T.WaitsOk)},
             {"waits_flat_global", static_cast<int64_t>(T.WaitsFlat)},
             {"in_flight_reads", static_cast<int64_t>(T.InFlightReads)},
             {"hazards_checked", static_cast<int64_t>(T.HazardsChecked)},
             {"hazards_ok", static_cast<int64_t>(T.HazardsOk)},
             {"hazards", static_cast<int64_t>(T.Hazards)},
             {"exceptions", std::move(Ex)},
             {"failures", std::move(Fa)}}}};
    if (Ctx.JSONOut)
      Ctx.JSONOut->push_back(std::move(V));
    else
      *Ctx.Out << formatv("{0:2}", V) << "\n";
  } else {
    raw_ostream &OS = *Ctx.Out;
    OS << "verify-code: " << T.Functions << " functions (" << T.Kernels
       << (T.Kernels == 1 ? " kernel)\n" : " kernels)\n");
    OS << "  decoded: " << T.Decoded << " of " << T.Bytes << " bytes ("
       << Pct(T.Decoded, T.Bytes) << "), " << T.NotEditable
       << (T.NotEditable == 1 ? " function" : " functions")
       << " not editable\n";
    OS << "  graph: " << T.Blocks << " blocks, " << T.Unreachable
       << " unreachable, " << T.Padding << " s_nop padding\n";
    OS << "  abi: " << T.AbiOk << " of " << T.Kernels
       << " kernels read at entry only what the ABI sets; " << T.AbiUndef
       << " also read registers no instruction wrote; " << T.AbiConservative
       << " leave to code not analysed (a call or an unresolved jump)\n";
    OS << "  counts: " << T.CountsOk << " of " << T.CountsChecked
       << " kernels stay within their metadata's register counts\n";
    OS << "  waits: " << T.WaitsOk << " of " << T.WaitsChecked
       << " functions read no register a load may still be writing";
    if (T.WaitsFlat)
      OS << "; " << T.WaitsFlat
         << " more where FLAT accesses are taken as not LDS";
    OS << "\n";
    if (Hazards)
      OS << "  hazards: " << T.HazardsOk << " of " << T.HazardsChecked
         << " functions keep the hazard rules of the target ("
         << HazardRules::of(R->mc(), K->Target, false).names() << "); "
         << T.Hazards << " hazards found\n";
    for (const std::string &S : Exceptions)
      OS << "  exception: " << S << "\n";
    for (const std::string &S : Notes)
      OS << "  note: " << S << "\n";
  }
  Ctx.Stats.add(name(), "functions", "functions checked", T.Functions);
  if (Failures.empty())
    return PreservedAnalyses::all();
  std::string Msg = "verify-code failed: " + std::to_string(Failures.size()) +
                    (Failures.size() == 1 ? " problem" : " problems");
  for (const std::string &S : Failures)
    Msg += "\n  " + S;
  return makeError(Msg);
}
