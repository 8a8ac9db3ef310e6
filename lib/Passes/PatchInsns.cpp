//===- lib/Passes/PatchInsns.cpp - patch-insns and print<sites> -----------===//

#include "hotswap/Passes/PatchInsns.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/Relocate.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/ClonePlan.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/InPlacePlan.h"
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
  bool HasWhere = false, HasFar = false;
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
    } else if (Key == "place" && (Value == "copy" || Value == "site")) {
      R.InPlace = Value == "site";
    } else if (Key == "far" && (Value == "clone" || Value == "fail")) {
      R.FarFail = Value == "fail";
      HasFar = true;
    } else {
      return makeError("unknown parameter '" + P +
                       "' (known: match=REGEX, at=OFFSET, "
                       "where=before|after|replace, insert=FILE, only=REGEX, "
                       "grow-sgprs=N, grow-vgprs=N, entry=FILE, "
                       "reserve-sgpr-pairs=N, reserve-vgpr-pairs=N, "
                       "place=copy|site, far=clone|fail)");
    }
  }
  if (HasFar && !R.InPlace)
    return makeError("far=clone|fail says what place=site does with a kernel "
                     "it cannot patch in place");
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
  if (InPlace)
    OS << ";place=site";
  if (FarFail)
    OS << ";far=fail";
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
  // In place, the sites' instructions are read again (InPlacePlan.h).
  R.KeepCode = P.InPlace;
  R.LongJumps = P.InPlace;
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
  const FunctionMap &M = CA->functions();
  // With place=site, the kernels patched in place, their bodies first in
  // the run's appended code (nearest the code); the others are copied
  // after them, or refused (far=fail).
  std::optional<InPlacePlan> IP;
  if (Rule.InPlace) {
    Expected<InPlacePlan> P = planInPlace(Obj, CA->mc(), M, *All, Rule.FarFail);
    if (!P)
      return P.takeError();
    IP = std::move(*P);
  }
  size_t Matched = 0;
  std::vector<size_t> Functions;
  std::vector<std::vector<Insertion>> Inserts;
  DenseMap<size_t, std::vector<size_t>> KernelsOf;
  for (size_t K = 0; K < All->size(); ++K) {
    const KernelSites &KS = (*All)[K];
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
    // Registers bound above the allocation (grow-sgprs, grow-vgprs).
    if (Error E = growDescriptors(R, KS))
      return std::move(E);
    if (IP && IP->InPlace[K])
      continue;
    if (IP)
      Ctx.Stats.add(name(), "not-in-place",
                    "kernels with sites copied, not patched in place");
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
    Functions.push_back(KS.Function);
    Inserts.push_back(std::move(Ins));
    KernelsOf[KS.Function] = KS.Kernels;
  }
  if (Matched == 0) {
    Ctx.Warn("the rule matches no instruction of the selected kernels");
    return PreservedAnalyses::all();
  }
  const bool AnyInPlace = IP && !IP->Sites.empty();
  if (Functions.empty() && !AnyInPlace)
    return PreservedAnalyses::all();
  // What counts a kernel's patched sites and raises its metadata counts.
  bool MetadataChanged = false;
  auto Patched = [&](const KernelSites &KS) -> Error {
    size_t Rule = 0, Entry = 0;
    for (const SitePlan &S : KS.Sites)
      if (S.Refusal.empty()) {
        Rule += S.Role != SiteRole::Entry;
        Entry += S.Role != SiteRole::Rule;
      }
    Ctx.Stats.add(name(), "sites", "sites patched", Rule);
    if (Entry)
      Ctx.Stats.add(name(), "entries", "kernels given code at their entry",
                    Entry);
    return growMetadataCounts(CA->mc(), R, KS, Ctx, name(), MetadataChanged,
                              /*WarnDrops=*/true);
  };
  if (AnyInPlace) {
    if (Error E = placeInPlace(Obj, R, M, *All, *IP))
      return std::move(E);
    Ctx.Stats.add(name(), "in-place", "sites patched in place",
                  IP->Sites.size());
    if (size_t Gateways = llvm::count_if(
            IP->Sites, [](const InPlaceSite &IS) { return IS.Gateway; }))
      Ctx.Stats.add(name(), "gateways", "gateways placed in padding", Gateways);
    for (size_t K = 0; K < All->size(); ++K)
      if (IP->InPlace[K]) {
        Ctx.Stats.add(name(), "kernels-in-place", "kernels patched in place");
        if (Error E = Patched((*All)[K]))
          return std::move(E);
      }
  }
  if (!Functions.empty()) {
    Expected<uint64_t> Base = CodeAppender(Obj).nextAddress(CloneAlign);
    if (!Base)
      return Base.takeError();
    std::vector<RegisterLimits> Limits =
        functionLimits(R, Functions, KernelsOf);
    std::vector<ClonePlan> Plans =
        planClones(*CA, Functions, *Base, Inserts, false, Limits);
    Expected<size_t> Placed =
        placeClones(Obj, R, *CA, Plans, KernelsOf, *Base, name(), AM, Ctx);
    if (!Placed)
      return Placed.takeError();
    for (const ClonePlan &P : Plans)
      if (P.Code)
        for (const KernelSites &KS : *All)
          if (KS.Function == P.Function)
            if (Error E = Patched(KS))
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
  const KernelsAnalysis::Result &KR = *K;
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
  // With place=site, where each site's body would go.
  std::optional<InPlacePlan> IP;
  DenseMap<std::pair<size_t, size_t>, const InPlaceSite *> BodyAt;
  if (!InstrumentEntryOnly && Rule.InPlace) {
    Expected<InPlacePlan> P = planInPlace(Obj, CA->mc(), M, *All, Rule.FarFail);
    if (!P)
      return P.takeError();
    IP = std::move(*P);
    for (const InPlaceSite &IS : IP->Sites)
      BodyAt[{IS.Kernel, IS.Site}] = &IS;
  }
  // Why a kernel with sites is not patched in place (empty: it is, or
  // place=copy).
  auto NotInPlace = [&](size_t K) -> std::string {
    if (!IP || !(*All)[K].applied())
      return "";
    return IP->whyNot(*All, K);
  };
  // Kernels whose allocation may grow: the rule lets it (grow-sgprs,
  // grow-vgprs), or it grows (reserved registers, instrument's code).
  auto Grows = [&](const KernelSites &KS) {
    return !KS.Kernels.empty() && (Rule.GrowSGPRs || Rule.GrowVGPRs ||
                                   KS.VGPRsUsed > KS.VGPRsAllocated ||
                                   KS.SGPRsUsed > KS.SGPRsAllocated);
  };
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
    for (size_t K = 0; K < All->size(); ++K) {
      const KernelSites &KS = (*All)[K];
      OS << "kernel " << M.Functions[KS.Function].Name << ": " << RuleSites(KS)
         << " sites";
      if (std::string Why = NotInPlace(K); !Why.empty())
        OS << "; copied, not patched in place: " << Why;
      if (KS.SGPRsUsed > KS.SGPRsAllocated)
        OS << "; SGPRs above the allocation taken: it grows from "
           << KS.SGPRsAllocated << " to " << KS.SGPRsUsed << " usable SGPRs";
      if (KS.VGPRsUsed > KS.VGPRsAllocated)
        OS << "; VGPRs above the allocation taken: it grows from "
           << KS.VGPRsAllocated << " to " << KS.VGPRsUsed << " VGPRs";
      // Where the allocation may grow, what it does to occupancy.
      if (Grows(KS)) {
        auto [Before, After] =
            occupancyChange(CA->mc(), KR, KR.Kernels[KS.Kernels.front()], KS);
        OS << "; occupancy " << Before;
        if (After != Before)
          OS << " -> " << After;
        OS << " waves per SIMD";
      }
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
      for (size_t SI = 0; SI < KS.Sites.size(); ++SI) {
        const SitePlan &S = KS.Sites[SI];
        OS << "  +" << hex(S.Offset) << " " << S.Text << ": ";
        if (!S.Refusal.empty()) {
          OS << "refused: " << S.Refusal << "\n";
          continue;
        }
        if (auto B = BodyAt.find({K, SI}); B != BodyAt.end()) {
          OS << "applied in place (body at " << hex(B->second->BodyAddr);
          if (B->second->Gateway)
            OS << ", gateway at " << hex(*B->second->Gateway);
          OS << "), ";
        } else
          OS << "applied in the kernel's copy, ";
        OS << (S.Role == SiteRole::Entry           ? "entry code "
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
  for (size_t K = 0; K < All->size(); ++K) {
    const KernelSites &KS = (*All)[K];
    json::Array Ss;
    for (size_t SI = 0; SI < KS.Sites.size(); ++SI) {
      const SitePlan &S = KS.Sites[SI];
      json::Object O{{"offset", int64_t(S.Offset)}, {"insn", S.Text}};
      if (!S.Refusal.empty()) {
        O["refused"] = S.Refusal;
      } else if (auto B = BodyAt.find({K, SI}); B != BodyAt.end()) {
        O["applied"] = "site";
        O["body"] = int64_t(B->second->BodyAddr);
        if (B->second->Gateway)
          O["gateway"] = int64_t(*B->second->Gateway);
      } else {
        O["applied"] = "clone";
      }
      if (S.Refusal.empty()) {
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
    if (std::string Why = NotInPlace(K); !Why.empty())
      KO["not_in_place"] = Why;
    if (KS.SGPRsUsed > KS.SGPRsAllocated)
      KO["sgprs_grow_to"] = int64_t(KS.SGPRsUsed);
    if (KS.VGPRsUsed > KS.VGPRsAllocated)
      KO["vgprs_grow_to"] = int64_t(KS.VGPRsUsed);
    if (Grows(KS)) {
      auto [Before, After] =
          occupancyChange(CA->mc(), KR, KR.Kernels[KS.Kernels.front()], KS);
      KO["occupancy"] = json::Array{int64_t(Before), int64_t(After)};
    }
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
