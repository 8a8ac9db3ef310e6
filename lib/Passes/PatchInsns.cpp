//===- lib/Passes/PatchInsns.cpp - patch-insns and print<sites> -----------===//

#include "hotswap/Passes/PatchInsns.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/Relocate.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/ClonePlan.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/Instrument.h"
#include "hotswap/Passes/SitePlanner.h"
#include "hotswap/Passes/TargetAnalysis.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

//===----------------------------------------------------------------------===//
// The rule
//===----------------------------------------------------------------------===//

Expected<PatchRule> PatchRule::parse(StringRef Pass, StringRef Params) {
  PatchRule R;
  bool HasWhere = false;
  SmallVector<StringRef, 4> Parts;
  Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts) {
    auto [Key, Value] = P.split('=');
    if (Key == "match" || Key == "only") {
      if (Error E = regexParam(Key, Value, Key == "match" ? R.Match : R.Only))
        return E;
    } else if (Key == "at") {
      uint64_t N;
      if (Value.getAsInteger(0, N))
        return makeError("at=" + Value +
                         " is not a byte offset (decimal or 0x...)");
      R.At = N;
    } else if (Key == "where") {
      std::optional<SiteWhere> W = parseSiteWhere(Value);
      if (!W)
        return makeError("where=" + Value +
                         " is not one of before, after, replace");
      R.Where = *W;
      HasWhere = true;
    } else if (Key == "insert" && !Value.empty()) {
      R.InsertFile = Value.str();
    } else if (Key == "entry" && !Value.empty()) {
      R.EntryFile = Value.str();
    } else if (Key == "reserve-sgpr-pairs" || Key == "reserve-vgpr-pairs") {
      unsigned N;
      if (Value.getAsInteger(10, N) || N < 1 || N > 8)
        return makeError(Key + "=" + Value +
                         " is not a count of register pairs from 1 to 8");
      (Key == "reserve-sgpr-pairs" ? R.ReserveSGPRPairs : R.ReserveVGPRPairs) =
          N;
    } else if (Key == "grow-sgprs" || Key == "grow-vgprs") {
      unsigned N;
      if (Value.getAsInteger(10, N) || N > 64)
        return makeError(Key + "=" + Value +
                         " is not a count of registers from 0 to 64");
      (Key == "grow-sgprs" ? R.GrowSGPRs : R.GrowVGPRs) = N;
    } else {
      return makeError("unknown parameter '" + P +
                       "' (known: match=REGEX, at=OFFSET, "
                       "where=before|after|replace, insert=FILE, only=REGEX, "
                       "grow-sgprs=N, grow-vgprs=N, entry=FILE, "
                       "reserve-sgpr-pairs=N, reserve-vgpr-pairs=N)");
    }
  }
  if (R.Match.empty() == !R.At)
    return makeError("exactly one of match=REGEX and at=OFFSET selects the "
                     "sites");
  if (!HasWhere)
    return makeError("where=before|after|replace is required");
  if (R.InsertFile.empty())
    return makeError("insert=FILE is required: the assembly to place at "
                     "each site");
  if ((R.ReserveSGPRPairs || R.ReserveVGPRPairs) && R.EntryFile.empty())
    return makeError(std::string(R.ReserveSGPRPairs ? "reserve-sgpr-pairs"
                                                    : "reserve-vgpr-pairs") +
                     "=N needs entry=FILE: code at the kernel's entry that "
                     "sets the reserved registers up");
  return R;
}

void PatchRule::print(raw_ostream &OS) const {
  if (At)
    OS << "at=" << hex(*At);
  else
    OS << "match=" << Match;
  OS << ";where=" << siteWhereName(Where) << ";insert=" << InsertFile;
  if (!Only.empty())
    OS << ";only=" << Only;
  if (GrowSGPRs)
    OS << ";grow-sgprs=" << GrowSGPRs;
  if (GrowVGPRs)
    OS << ";grow-vgprs=" << GrowVGPRs;
  if (!EntryFile.empty())
    OS << ";entry=" << EntryFile;
  if (ReserveSGPRPairs)
    OS << ";reserve-sgpr-pairs=" << ReserveSGPRPairs;
  if (ReserveVGPRPairs)
    OS << ";reserve-vgpr-pairs=" << ReserveVGPRPairs;
}

namespace {

/// The rule as the site planner takes it: its file read.
Expected<SiteRule> siteRule(const PatchRule &P) {
  Expected<std::vector<SourceLine>> Lines = readRuleFile(P.InsertFile);
  if (!Lines)
    return Lines.takeError();
  // What the launch sets is there at the entry only.
  for (const SourceLine &L : *Lines)
    for (StringRef Name : {"%kernarg", "%wgid.", "%tid"})
      if (StringRef(L.Text).contains(Name))
        return makeError("'" + P.InsertFile + "' line " + Twine(L.Number) +
                         ": " + Name.rtrim('.') +
                         " names a register the kernel's launch sets, which "
                         "only the entry's code (entry=FILE) reads");
  SiteRule R;
  if (!P.EntryFile.empty()) {
    Expected<std::vector<SourceLine>> Entry = readRuleFile(P.EntryFile);
    if (!Entry)
      return Entry.takeError();
    R.EntryBody = std::move(*Entry);
    R.EntryBeforeBody = true;
  }
  R.ReservedPairs = P.ReserveSGPRPairs;
  R.ReservedVGPRPairs = P.ReserveVGPRPairs;
  R.Select = SiteSelect::Matched;
  R.Match = P.Match;
  R.At = P.At;
  R.Where = P.Where;
  R.Only = P.Only;
  R.BodyName = P.InsertFile;
  R.Body = std::move(*Lines);
  R.ExtraSGPRs = P.GrowSGPRs;
  R.ExtraVGPRs = P.GrowVGPRs;
  return R;
}

Expected<std::vector<KernelSites>>
planRule(Object &Obj, const PatchRule &P, KernelsAnalysis::Result &R,
         CodeAnalysis::Result &CA, PassContext *Ctx, StringRef PassName) {
  Expected<SiteRule> SR = siteRule(P);
  if (!SR)
    return SR.takeError();
  return planAllSites(Obj, *SR, R, CA, Ctx, PassName);
}

} // namespace

//===----------------------------------------------------------------------===//
// patch-insns
//===----------------------------------------------------------------------===//

struct PatchInsnsPass::Planned {
  const Object *For = nullptr;
  std::vector<KernelSites> Sites;
};

PatchInsnsPass::PatchInsnsPass(PatchRule R) : Rule(std::move(R)) {}
PatchInsnsPass::~PatchInsnsPass() = default;

Expected<std::unique_ptr<Pass>> PatchInsnsPass::create(StringRef Params) {
  Expected<PatchRule> R = PatchRule::parse(Name, Params);
  if (!R)
    return R.takeError();
  return std::make_unique<PatchInsnsPass>(std::move(*R));
}

void PatchInsnsPass::printPipeline(raw_ostream &OS) const {
  OS << name() << "<";
  Rule.print(OS);
  OS << ">";
}

Expected<bool> PatchInsnsPass::holds(Object &Obj, KernelsAnalysis::Result &R,
                                     AnalysisManager &AM, PassContext &Ctx) {
  auto CA = AM.getResult<CodeAnalysis>(Obj);
  if (!CA)
    return CA.takeError();
  // Holds when no kernel that runs its own code has a site of the rule.
  Expected<std::vector<KernelSites>> All =
      planRule(Obj, Rule, R, *CA, nullptr, Name);
  if (!All)
    return All.takeError();
  bool Any = !All->empty();
  Plan = std::make_unique<Planned>();
  Plan->For = &Obj;
  Plan->Sites = std::move(*All);
  if (Any)
    return false;
  // Nothing to patch: the rule was applied before (a selected kernel runs
  // a copy), or it matches nothing, which the run warns of.
  return anySelectedKernelRunsACopy(Obj, R, Rule.Only);
}

Expected<PreservedAnalyses>
PatchInsnsPass::runOnKernels(Object &Obj, KernelsAnalysis::Result &R,
                             AnalysisManager &AM, PassContext &Ctx) {
  auto CA = AM.getResult<CodeAnalysis>(Obj);
  if (!CA)
    return CA.takeError();
  // The plan holds() made for this object, else a new one (the stubbed
  // kernels it leaves out are warned of by this one).
  std::unique_ptr<Planned> Mine = std::move(Plan);
  Expected<std::vector<KernelSites>> All =
      Mine && Mine->For == &Obj ? std::move(Mine->Sites)
                                : planRule(Obj, Rule, R, *CA, &Ctx, name());
  if (!All)
    return All.takeError();
  size_t Matched = 0;
  std::vector<size_t> Functions;
  std::vector<std::vector<Insertion>> Inserts;
  DenseMap<size_t, std::vector<size_t>> KernelsOf;
  const FunctionMap &M = CA->functions();
  for (const KernelSites &KS : *All) {
    Matched += KS.Sites.size();
    for (const SitePlan &S : KS.Sites)
      if (!S.Refusal.empty()) {
        std::string Msg = "kernel '" + M.Functions[KS.Function].Name + "' +" +
                          hex(S.Offset) + " (" + S.Text +
                          "): not patched: " + S.Refusal;
        if (Ctx.Strict)
          return makeError(Msg);
        Ctx.Warn(Msg);
        Ctx.Stats.add(name(), "sites-refused", "sites left alone");
      }
    if (!KS.applied())
      continue;
    std::vector<Insertion> Ins;
    for (const SitePlan &S : KS.Sites) {
      if (!S.Refusal.empty())
        continue;
      Insertion In;
      In.Before = S.Where == SiteWhere::After ? S.Insn + 1 : S.Insn;
      In.Bytes = S.Body;
      In.Replace = S.Where == SiteWhere::Replace;
      for (const std::string &L : S.Asm)
        In.Asm += (In.Asm.empty() ? "" : "\n") + L;
      Ins.push_back(std::move(In));
    }
    llvm::stable_sort(Ins, [](const Insertion &A, const Insertion &B) {
      return A.Before < B.Before;
    });
    // Registers bound above the allocation (grow-sgprs, grow-vgprs).
    if (Error E = growDescriptors(R, KS))
      return std::move(E);
    Functions.push_back(KS.Function);
    Inserts.push_back(std::move(Ins));
    KernelsOf[KS.Function] = KS.Kernels;
  }
  if (Matched == 0) {
    Ctx.Warn("the rule matches no instruction of the selected kernels");
    return PreservedAnalyses::all();
  }
  if (Functions.empty())
    return PreservedAnalyses::all();
  Expected<uint64_t> Base = CodeAppender(Obj).nextAddress(CloneAlign);
  if (!Base)
    return Base.takeError();
  std::vector<RegisterLimits> Limits = functionLimits(R, Functions, KernelsOf);
  std::vector<ClonePlan> Plans =
      planClones(*CA, Functions, *Base, Inserts, false, Limits);
  Expected<size_t> Placed =
      placeClones(Obj, R, *CA, Plans, KernelsOf, *Base, name(), AM, Ctx);
  if (!Placed)
    return Placed.takeError();
  bool MetadataChanged = false;
  for (const ClonePlan &P : Plans)
    if (P.Code)
      for (const KernelSites &KS : *All)
        if (KS.Function == P.Function) {
          size_t Rule = 0, Entry = 0;
          for (const SitePlan &S : KS.Sites)
            if (S.Refusal.empty()) {
              Rule += S.Role != SiteRole::Entry;
              Entry += S.Role != SiteRole::Rule;
            }
          Ctx.Stats.add(name(), "sites", "sites patched", Rule);
          if (Entry)
            Ctx.Stats.add(name(), "entries",
                          "kernels given code at their entry", Entry);
          if (Error E = growMetadataCounts(R, KS, Ctx, name(), MetadataChanged))
            return std::move(E);
        }
  if (MetadataChanged)
    if (Error E = commitKernelMetadata(Obj, R, Ctx, name()))
      return std::move(E);
  // With nothing placed, the descriptors growDescriptors raised in the
  // kernels analysis were not written: it is not preserved either way.
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<TargetAnalysis>();
  return PA;
}

//===----------------------------------------------------------------------===//
// print<sites>
//===----------------------------------------------------------------------===//

SitesPrinterPass::SitesPrinterPass(PatchRule R) : Rule(std::move(R)) {}

SitesPrinterPass::SitesPrinterPass(bool EntryOnly, bool PerLane,
                                   std::string Only, bool Based)
    : InstrumentEntryOnly(EntryOnly), InstrumentPerLane(PerLane),
      InstrumentBased(Based) {
  Rule.Only = std::move(Only);
}

Expected<std::unique_ptr<Pass>> SitesPrinterPass::create(StringRef Params) {
  if (Params.starts_with("instrument=")) {
    SmallVector<StringRef, 2> Parts;
    Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
    std::optional<bool> EntryOnly;
    bool PerLane = false, Based = true;
    std::string Only;
    for (StringRef P : Parts) {
      auto [Key, Value] = P.split('=');
      if (Key == "instrument" && (Value == "kernel" || Value == "block")) {
        EntryOnly = Value == "kernel";
      } else if (Key == "per" && (Value == "wave" || Value == "lane")) {
        PerLane = Value == "lane";
      } else if (Key == "base" && (Value == "auto" || Value == "none")) {
        Based = Value == "auto";
      } else if (Key == "only") {
        if (Error E = regexParam(Key, Value, Only))
          return E;
      } else {
        return makeError("unknown parameter '" + P +
                         "' (known with instrument=kernel|block: "
                         "per=wave|lane, base=auto|none, only=REGEX)");
      }
    }
    if (!EntryOnly)
      return makeError("instrument=kernel|block says which sites to show");
    return std::make_unique<SitesPrinterPass>(*EntryOnly, PerLane,
                                              std::move(Only), Based);
  }
  Expected<PatchRule> R = PatchRule::parse("print<sites>", Params);
  if (!R)
    return R.takeError();
  return std::make_unique<SitesPrinterPass>(std::move(*R));
}

void SitesPrinterPass::printPipeline(raw_ostream &OS) const {
  if (InstrumentEntryOnly) {
    OS << "print<sites;instrument="
       << (*InstrumentEntryOnly ? "kernel" : "block");
    if (InstrumentPerLane)
      OS << ";per=lane";
    if (!InstrumentBased)
      OS << ";base=none";
    if (!Rule.Only.empty())
      OS << ";only=" << Rule.Only;
    OS << ">";
    return;
  }
  OS << "print<sites;";
  Rule.print(OS);
  OS << ">";
}

Expected<PreservedAnalyses>
SitesPrinterPass::run(Object &Obj, AnalysisManager &AM, PassContext &Ctx) {
  auto K = AM.getResult<KernelsAnalysis>(Obj);
  if (!K)
    return K.takeError();
  auto CA = AM.getResult<CodeAnalysis>(Obj);
  if (!CA)
    return CA.takeError();
  // A target without counter code says so, in a container among others.
  if (InstrumentEntryOnly)
    if (std::string Why = instrumentRefusal(K->Target); !Why.empty()) {
      if (!Ctx.JSON)
        *Ctx.Out << "sites: none: " << Why << "\n";
      else if (json::Value V(
                   json::Object{{"sites", json::Object{{"refused", Why}}}});
               Ctx.JSONOut)
        Ctx.JSONOut->push_back(std::move(V));
      else
        *Ctx.Out << formatv("{0:2}", V) << "\n";
      return PreservedAnalyses::all();
    }
  Expected<std::vector<KernelSites>> All = [&]() {
    if (!InstrumentEntryOnly)
      return planRule(Obj, Rule, *K, *CA, nullptr, "print<sites>");
    return planInstrumentSites(
        Obj, *K, *CA, *InstrumentEntryOnly, InstrumentPerLane, InstrumentBased,
        /*Edges=*/false, Rule.Only, nullptr, "print<sites>");
  }();
  if (!All)
    return All.takeError();
  const FunctionMap &M = CA->functions();
  // The rule's sites, and the kernels given entry code (entry=FILE).
  size_t Sites = 0, Applied = 0, Entries = 0;
  auto RuleSites = [](const KernelSites &KS) {
    return llvm::count_if(
        KS.Sites, [](const SitePlan &S) { return S.Role != SiteRole::Entry; });
  };
  for (const KernelSites &KS : *All) {
    Sites += RuleSites(KS);
    for (const SitePlan &S : KS.Sites)
      if (S.Refusal.empty()) {
        Applied += S.Role != SiteRole::Entry;
        Entries += S.Role != SiteRole::Rule;
      }
  }
  if (!Ctx.JSON) {
    raw_ostream &OS = *Ctx.Out;
    OS << "sites: " << Sites << " in " << All->size() << " kernels, " << Applied
       << " applied, " << Sites - Applied << " refused";
    if (!Rule.EntryFile.empty())
      OS << "; entry code in " << Entries << " kernels";
    OS << "\n";
    for (const KernelSites &KS : *All) {
      OS << "kernel " << M.Functions[KS.Function].Name << ": " << RuleSites(KS)
         << " sites";
      if (KS.SGPRsUsed > KS.SGPRsAllocated)
        OS << "; SGPRs above the allocation taken: it grows from "
           << KS.SGPRsAllocated << " to " << KS.SGPRsUsed << " usable SGPRs";
      if (KS.VGPRsUsed > KS.VGPRsAllocated)
        OS << "; VGPRs above the allocation taken: it grows from "
           << KS.VGPRsAllocated << " to " << KS.VGPRsUsed << " VGPRs";
      if (KS.Reserved || KS.ReservedVGPR) {
        OS << "; reserved for the whole kernel: ";
        if (KS.Reserved)
          OS << "s" << *KS.Reserved << " to s"
             << *KS.Reserved + KS.ReservedCount - 1;
        if (KS.Reserved && KS.ReservedVGPR)
          OS << ", ";
        if (KS.ReservedVGPR)
          OS << "v" << *KS.ReservedVGPR << " to v"
             << *KS.ReservedVGPR + KS.ReservedVGPRCount - 1;
      } else if (!KS.Refused.empty())
        OS << "; " << KS.Refused;
      OS << "\n";
      for (const SitePlan &S : KS.Sites) {
        OS << "  +" << hex(S.Offset) << " " << S.Text << ": ";
        if (!S.Refusal.empty()) {
          OS << "refused: " << S.Refusal << "\n";
          continue;
        }
        OS << "applied in the kernel's copy, "
           << (S.Role == SiteRole::Entry           ? "entry code "
               : S.Role == SiteRole::EntryThenRule ? "entry code, then "
                                                   : "")
           << siteWhereName(S.Where) << ", " << S.Body.size() << " bytes";
        if (S.Alternative)
          OS << ", alternative " << S.Alternative;
        for (const auto &[Name, Reg] : S.Bound)
          OS << ", " << Name << "=" << Reg;
        for (const std::string &G : S.Guards)
          OS << ", guard " << G;
        OS << "\n";
        for (const std::string &Why : S.GuardReasons)
          OS << "    hazard guarded: " << Why << "\n";
      }
    }
    return PreservedAnalyses::all();
  }
  json::Array Kernels;
  for (const KernelSites &KS : *All) {
    json::Array Ss;
    for (const SitePlan &S : KS.Sites) {
      json::Object O{{"offset", int64_t(S.Offset)}, {"insn", S.Text}};
      if (!S.Refusal.empty()) {
        O["refused"] = S.Refusal;
      } else {
        O["applied"] = "clone";
        O["bytes"] = int64_t(S.Body.size());
        if (S.Role != SiteRole::Rule)
          O["entry"] = true;
        if (S.Alternative)
          O["alternative"] = int64_t(S.Alternative);
        json::Object B;
        for (const auto &[Name, Reg] : S.Bound)
          B[Name] = Reg;
        O["bound"] = std::move(B);
        if (!S.Guards.empty()) {
          json::Array Gs, Ws;
          for (const std::string &G : S.Guards)
            Gs.push_back(G);
          for (const std::string &W : S.GuardReasons)
            Ws.push_back(W);
          O["guards"] = std::move(Gs);
          O["hazards_guarded"] = std::move(Ws);
        }
      }
      Ss.push_back(std::move(O));
    }
    json::Object KO{{"name", M.Functions[KS.Function].Name},
                    {"sites", std::move(Ss)}};
    if (KS.SGPRsUsed > KS.SGPRsAllocated)
      KO["sgprs_grow_to"] = int64_t(KS.SGPRsUsed);
    if (KS.VGPRsUsed > KS.VGPRsAllocated)
      KO["vgprs_grow_to"] = int64_t(KS.VGPRsUsed);
    if (KS.Reserved)
      KO["reserved_sgprs"] = json::Array{
          int64_t(*KS.Reserved), int64_t(*KS.Reserved + KS.ReservedCount - 1)};
    if (KS.ReservedVGPR)
      KO["reserved_vgprs"] =
          json::Array{int64_t(*KS.ReservedVGPR),
                      int64_t(*KS.ReservedVGPR + KS.ReservedVGPRCount - 1)};
    if (!KS.Reserved && !KS.ReservedVGPR && !KS.Refused.empty())
      KO["reserved_refused"] = KS.Refused;
    Kernels.push_back(std::move(KO));
  }
  json::Value V(
      json::Object{{"sites", json::Object{{"where", siteWhereName(Rule.Where)},
                                          {"total", int64_t(Sites)},
                                          {"applied", int64_t(Applied)},
                                          {"refused", int64_t(Sites - Applied)},
                                          {"hazards_checked", true},
                                          {"kernels", std::move(Kernels)}}}});
  // Kernels given entry code, when the rule has some (entry=FILE).
  if (!Rule.EntryFile.empty())
    (*V.getAsObject()->getObject("sites"))["entries"] = int64_t(Entries);
  if (Ctx.JSONOut)
    Ctx.JSONOut->push_back(std::move(V));
  else
    *Ctx.Out << formatv("{0:2}", V) << "\n";
  return PreservedAnalyses::all();
}
