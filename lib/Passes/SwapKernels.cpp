//===- lib/Passes/SwapKernels.cpp - swap-kernels --------------------------===//

#include "hotswap/Passes/SwapKernels.h"

#include "SwapMetadata.h"

#include "hotswap/AMDGPU/LaunchInterface.h"
#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Code/EntryPolicy.h"
#include "hotswap/Code/MetadataCommit.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/CloneRecord.h"
#include "hotswap/Passes/StubRetarget.h"
#include "hotswap/Passes/SwapRecord.h"
#include "hotswap/Passes/TargetAnalysis.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <map>
#include <tuple>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace hotswap::swap;

SwapKernelsPass::SwapKernelsPass(SwapOptions O) : Opts(std::move(O)) {
  if (!Opts.Only.empty())
    OnlyRE.emplace(Opts.Only);
}

SwapKernelsPass::~SwapKernelsPass() = default;

Expected<std::unique_ptr<Pass>> SwapKernelsPass::create(StringRef Params) {
  SwapOptions O;
  SmallVector<StringRef, 4> Parts;
  Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts) {
    auto [Key, Value] = P.split('=');
    if (Key == "with" && !Value.empty()) {
      O.With = Value.str();
    } else if (Key == "only") {
      if (Error E = regexParam(Key, Value, O.Only))
        return E;
    } else if (Key == "own-variables" && P == Key) {
      O.OwnVariables = true;
    } else if (Key == "skip-incompatible" && P == Key) {
      O.SkipIncompatible = true;
    } else {
      return makeError("unknown parameter '" + P + "'");
    }
  }
  if (O.With.empty())
    return makeError("with=FILE is required: the code object whose "
                     "kernels replace the object's");
  return std::make_unique<SwapKernelsPass>(std::move(O));
}

void SwapKernelsPass::printPipeline(raw_ostream &OS) const {
  OS << name() << "<with=" << Opts.With;
  if (!Opts.Only.empty())
    OS << ";only=" << Opts.Only;
  if (Opts.OwnVariables)
    OS << ";own-variables";
  if (Opts.SkipIncompatible)
    OS << ";skip-incompatible";
  OS << ">";
}

Expected<const SwapReplacement &> SwapKernelsPass::replacement() {
  if (!Repl) {
    Expected<std::shared_ptr<const SwapReplacement>> F =
        SwapReplacement::get(Opts.With);
    if (!F)
      return F.takeError();
    Repl = std::move(*F);
  }
  return *Repl;
}

/// Whether code built with the selector \p File runs where the object's
/// \p Obj holds (AMDGPUUsage, "Target Features": code built with a feature
/// "any" runs with it on or off; code built for on or off only there).
static bool featureRunsUnder(FeatureSetting File, FeatureSetting Obj) {
  return File == Obj ||
         (File == FeatureSetting::Any &&
          (Obj == FeatureSetting::On || Obj == FeatureSetting::Off));
}

/// What \p S says about a feature, for a message.
static StringRef featureText(FeatureSetting S) {
  switch (S) {
  case FeatureSetting::Unsupported:
    return "unsupported";
  case FeatureSetting::Any:
    return "any";
  case FeatureSetting::Off:
    return "off";
  case FeatureSetting::On:
    return "on";
  }
  return "unknown";
}

std::optional<std::string>
SwapKernelsPass::mismatch(const Object &Obj, const KernelsAnalysis::Result &R,
                          unsigned *Nearness) {
  const Object &F = *Repl->Obj;
  const TargetInfo &FT = Repl->Kernels->Target;
  const TargetInfo &OT = R.Target;
  auto Differ = [&](const Twine &Why) {
    return "'" + Opts.With + "' is for " + FT.targetID() + " (e_flags " +
           hex(F.Header.Flags) + "), this code object for " + OT.targetID() +
           " (e_flags " + hex(Obj.Header.Flags) + ")" + Why.str();
  };
  if (Nearness)
    *Nearness = 0;
  // The XNACK and SRAMECC selectors (v4+) are compared by where the code
  // runs; every other bit of e_flags must be equal.
  const uint32_t Selectors =
      ELF::EF_AMDGPU_FEATURE_XNACK_V4 | ELF::EF_AMDGPU_FEATURE_SRAMECC_V4;
  if ((F.Header.Flags & ~Selectors) != (Obj.Header.Flags & ~Selectors) ||
      (F.Header.Flags != Obj.Header.Flags && FT.CodeObjectVersion < 4))
    return Differ("");
  if (Nearness)
    *Nearness = 1;
  for (auto [Name, FS, OS] :
       {std::tuple<StringRef, FeatureSetting, FeatureSetting>{"xnack", FT.Xnack,
                                                              OT.Xnack},
        {"sramecc", FT.Sramecc, OT.Sramecc}})
    if (!featureRunsUnder(FS, OS))
      return Differ(": code built with " + Name + " " + featureText(FS) +
                    " does not run where the code object's " + Name + " is " +
                    featureText(OS) +
                    " (only code built with it \"any\" runs under either "
                    "setting)");
  if (F.Header.abiVersion() != Obj.Header.abiVersion())
    return "'" + Opts.With + "' is code object v" +
           std::to_string(FT.CodeObjectVersion) + ", this one v" +
           std::to_string(R.Target.CodeObjectVersion);
  return std::nullopt;
}

std::vector<std::pair<size_t, size_t>>
SwapKernelsPass::selected(const KernelsAnalysis::Result &R,
                          const SwapReplacement &F) const {
  std::vector<std::pair<size_t, size_t>> Out;
  for (size_t I = 0; I != R.Kernels.size(); ++I) {
    const KernelInfo &K = R.Kernels[I];
    if (OnlyRE && !OnlyRE->match(K.Name))
      continue;
    auto It = F.ByName.find(K.Name);
    if (It != F.ByName.end())
      Out.push_back({I, It->second});
  }
  return Out;
}

/// Whether FILE's image lies intact at delta \p D in \p Obj. Deltas are
/// taken modulo 2^64: an image may lie below FILE's own addresses.
static bool imageIntactAt(const Object &Obj, const SwapReplacement &F,
                          uint64_t D, DenseMap<uint64_t, bool> &IntactAt) {
  auto [It, New] = IntactAt.try_emplace(D, false);
  if (!New)
    return It->second;
  bool Intact = D % F.Align == 0;
  for (const SwapReplacement::Load &L : F.Loads) {
    if (!Intact)
      break;
    const uint64_t Addr = L.VAddr + D;
    if (L.MemSize > UINT64_MAX - Addr) {
      Intact = false;
      break;
    }
    Intact = Obj.loadSegmentFor(Addr, L.MemSize) != nullptr;
    if (Intact && L.FileSize) {
      // Bytes not in the file at that address: the image is not there.
      std::optional<ArrayRef<uint8_t>> B = Obj.bytesIfAt(Addr, L.FileSize);
      Intact = B && *B == L.Bytes;
    }
  }
  IntactAt[D] = Intact;
  return Intact;
}

bool SwapKernelsPass::swapSymbolAt(const Object &Obj, const KernelInfo &K,
                                   uint64_t Code) {
  if (!Obj.symtab())
    return false;
  if (!Functions)
    Functions.emplace(Obj);
  return Functions->isSwapAt(K, Code);
}

bool SwapKernelsPass::isSwapped(const Object &Obj,
                                const KernelsAnalysis::Result &R,
                                const KernelInfo &K, const KernelInfo &RK) {
  // A kernel running a copy of code this file swapped in is swapped: a
  // swap again would drop the copy (and what was inserted into it).
  if (!CopiedSwaps) {
    CopiedSwaps.emplace();
    Expected<std::vector<SwapRecord>> Swaps = readSwapRecords(Obj);
    Expected<std::vector<CloneRecord>> Clones = readCloneRecords(Obj);
    if (Swaps && Clones) {
      for (const KernelInfo &Each : R.Kernels)
        if (const CloneRecord *C = currentClone(*Clones, Each))
          for (const SwapRecord &S : *Swaps)
            if (S.Kernel == Each.Name && S.Code == C->Code &&
                S.FromDigest == Repl->digest(S.Algorithm))
              (*CopiedSwaps)[Each.Name] = S.Code;
    } else {
      consumeError(Swaps.takeError()); // verify reports unreadable records
      consumeError(Clones.takeError());
    }
  }
  if (CopiedSwaps->count(K.Name))
    return imageIntactAt(Obj, *Repl, CopiedSwaps->lookup(K.Name) - RK.CodeEntry,
                         IntactAt);
  if (!imageIntactAt(Obj, *Repl, K.CodeEntry - RK.CodeEntry, IntactAt))
    return false;
  if (K.KD != swappedDescriptor(R.Target, RK.KD, K))
    return false;
  if (!K.MD || !RK.MD)
    return false;
  for (KernelField F : TakenFields) {
    // Informative values are taken where they fit, and never block.
    if (fieldRule(F).Role == FieldRole::Informative)
      continue;
    std::optional<uint64_t> Have = fieldMeaning(*K.MD, F),
                            Want = fieldMeaning(*RK.MD, F);
    // A stub's scratch pair may have raised .sgpr_count.
    bool Raised = F == KernelField::SGPRCount && K.EntryStub && Have && Want &&
                  *Have > *Want;
    if (Have != Want && !Raised)
      return false;
  }
  return !Obj.symtab() || swapSymbolAt(Obj, K, K.CodeEntry);
}

Expected<bool> SwapKernelsPass::holds(Object &Obj, KernelsAnalysis::Result &R,
                                      AnalysisManager &AM, PassContext &Ctx) {
  Expected<const SwapReplacement &> F = replacement();
  if (!F)
    return F.takeError();
  IntactAt.clear();
  CopiedSwaps.reset();
  Functions.reset();
  // A code object the file does not fit: let the precondition say why.
  if (mismatch(Obj, R))
    return false;
  std::vector<std::pair<size_t, size_t>> Pairs = selected(R, *F);
  if (Pairs.empty())
    return false;
  for (auto [I, J] : Pairs)
    if (!isSwapped(Obj, R, R.Kernels[I], F->Kernels->Kernels[J]))
      return false;
  return true;
}

Expected<std::optional<std::string>>
SwapKernelsPass::precondition(Object &Obj, KernelsAnalysis::Result &R,
                              AnalysisManager &AM, PassContext &Ctx) {
  Expected<const SwapReplacement &> F = replacement();
  if (!F)
    return F.takeError();
  // In a container the reason reported is that of the code object nearest
  // to fitting: the one of FILE's processor before the others.
  if (std::optional<std::string> Why = mismatch(Obj, R, &Ctx.UnfitNearness))
    return Why;
  Ctx.UnfitNearness = 2;
  if (selected(R, *F).empty())
    return std::optional<std::string>(
        "'" + Opts.With + "' defines none of this code object's kernels" +
        (Opts.Only.empty() ? "" : " that only=" + Opts.Only + " selects"));
  return std::nullopt;
}

/// Appends FILE's image above everything \p Obj has, in the run's appended
/// segment. Returns the delta.
static Expected<uint64_t> appendImage(Object &Obj, const SwapReplacement &F,
                                      StringRef File) {
  std::vector<code::ImageLoad> Loads;
  for (const SwapReplacement::Load &L : F.Loads)
    Loads.push_back({L.VAddr, L.FileSize, L.MemSize, L.Flags, L.Bytes});
  return code::CodeAppender(Obj).appendImage(Loads, F.Start, F.Align, File);
}

/// Everything that makes a swap impossible, checked before anything
/// changes: the kernels of \p Todo that can be swapped, with their plans. A
/// kernel that cannot fails the pass, or with skip-incompatible is left as
/// it is (warned and counted; --strict fails still).
static Expected<std::vector<SwapPlan>>
planSwaps(const KernelsAnalysis::Result &R, const SwapReplacement &F,
          ArrayRef<std::pair<size_t, size_t>> Todo, const SwapOptions &Opts,
          PassContext &Ctx) {
  const KernelsAnalysis::Result &FR = *F.Kernels;
  auto Refuse = [&](const KernelInfo &K, const Twine &Why) -> Error {
    std::string Msg = "kernel '" + K.Name + "' cannot be swapped: " + Why.str();
    if (!Opts.SkipIncompatible || Ctx.Strict)
      return makeError(Msg);
    Ctx.Warn(Msg + "; left as it was");
    Ctx.Stats.add(SwapKernelsPass::Name, "incompatible",
                  "kernels left as they were (skip-incompatible)");
    return Error::success();
  };
  std::vector<SwapPlan> Plans;
  for (auto [I, J] : Todo) {
    if (std::optional<std::string> Why =
            incompatibility(R, R.Kernels[I], FR, FR.Kernels[J], Opts.With)) {
      if (Error E = Refuse(R.Kernels[I], *Why))
        return std::move(E);
      continue;
    }
    Plans.push_back({I, J, {}});
  }
  if (!Plans.empty() && !F.Variables.empty() && !Opts.OwnVariables) {
    std::string Names;
    for (size_t I = 0; I != F.Variables.size() && I != 4; ++I)
      Names += (I ? ", '" : "'") + F.Variables[I] + "'";
    if (F.Variables.size() > 4)
      Names += " and " + std::to_string(F.Variables.size() - 4) + " more";
    return makeError("replacement '" + Opts.With +
                     "' defines device variables the host can reach (" + Names +
                     "): the swapped kernels would use these copies, not the "
                     "code object's (swap-kernels<...;own-variables> accepts "
                     "that)");
  }
  std::vector<SwapPlan> Kept;
  for (SwapPlan &P : Plans) {
    const KernelInfo &K = R.Kernels[P.I], &RK = FR.Kernels[P.J];
    const PoolStub *Stub = stubOf(K);
    if (Stub && RK.needsDualStub(R.Target) != Stub->Dual) {
      if (Error E = Refuse(
              K, Twine("its ") +
                     (Stub->Dual ? "dual (512-byte)" : "single (256-byte)") +
                     " stub at " + hex(Stub->Addr) +
                     " cannot enter the kernel of '" + Opts.With + "', which " +
                     (Stub->Dual ? "does not preload" : "preloads") +
                     " kernel arguments (the firmware enters a preloading "
                     "kernel at +256)"))
        return std::move(E);
      continue;
    }
    Expected<std::vector<MetadataEdit>> Edits =
        metadataEdits(K, RK, std::nullopt, Opts.With);
    if (!Edits) {
      if (Error E = Refuse(K, toString(Edits.takeError())))
        return std::move(E);
      continue;
    }
    Kept.push_back(std::move(P));
  }
  if (Kept.empty() || !R.Metadata)
    return Kept;
  if (Error E = fitMetadata(R, FR, Kept))
    return std::move(E);
  return Kept;
}

/// Where FILE's image is in the object, as the delta from its own
/// addresses: one already there (an earlier swap of other kernels), else a
/// new one appended.
static Expected<uint64_t> placeImage(Object &Obj, const SwapReplacement &F,
                                     const KernelsAnalysis::Result &R,
                                     ArrayRef<std::pair<size_t, size_t>> Pairs,
                                     const SwapOptions &Opts,
                                     DenseMap<uint64_t, bool> &IntactAt,
                                     PassContext &Ctx) {
  const KernelsAnalysis::Result &FR = *F.Kernels;
  for (auto [I, J] : Pairs) {
    uint64_t D = R.Kernels[I].CodeEntry - FR.Kernels[J].CodeEntry;
    if (imageIntactAt(Obj, F, D, IntactAt)) {
      Ctx.Stats.add(SwapKernelsPass::Name, "images-reused",
                    "images of the file already in the object used again");
      return D;
    }
  }
  Expected<std::vector<SwapRecord>> Records = readSwapRecords(Obj);
  if (!Records)
    return Records.takeError();
  for (const SwapRecord &Rec : *Records) {
    if (Rec.Image.empty() || Rec.FromDigest != F.digest(Rec.Algorithm))
      continue;
    uint64_t D = Rec.Image.front().Addr - F.Loads.front().VAddr;
    if (imageIntactAt(Obj, F, D, IntactAt)) {
      Ctx.Stats.add(SwapKernelsPass::Name, "images-reused",
                    "images of the file already in the object used again");
      return D;
    }
  }
  Expected<uint64_t> D = appendImage(Obj, F, Opts.With);
  if (!D)
    return D.takeError();
  Ctx.Stats.add(SwapKernelsPass::Name, "images", "images of the file appended");
  return *D;
}

/// The metadata values the runtime reads take FILE's (\p RK's), in place
/// (.sgpr_count at least \p SGPRCountFloor; the informative fields of
/// \p Left as they are). Sets \p Changed when one did.
static Error takeMetadata(KernelsAnalysis::Result &R, const KernelInfo &K,
                          const KernelInfo &RK, ArrayRef<KernelField> Left,
                          std::optional<uint64_t> SGPRCountFloor,
                          const SwapOptions &Opts, PassContext &Ctx,
                          bool &Changed) {
  const std::string Cannot = "kernel '" + K.Name + "' cannot be swapped";
  Expected<std::vector<MetadataEdit>> Edits =
      metadataEdits(K, RK, SGPRCountFloor, Opts.With);
  if (!Edits)
    return prefixError(Cannot, Edits.takeError());
  for (const MetadataEdit &E : *Edits) {
    if (llvm::is_contained(Left, E.Field))
      continue;
    if (Error Err = R.Metadata->setField(K.KDSymbol, E.Field, E.Value))
      return prefixError(Cannot, std::move(Err));
    Changed = true;
    Ctx.Stats.add(SwapKernelsPass::Name, "metadata",
                  "metadata values rewritten");
  }
  return Error::success();
}

/// `<kernel>.swap` at \p Code, the replacement \p RK's code, unless there
/// is one already.
static void addSwapSymbol(Object &Obj, const KernelInfo &K,
                          const KernelInfo &RK, uint64_t Code,
                          const SwapReplacement &F, bool Exists,
                          PassContext &Ctx) {
  SymbolTable *ST = Obj.symtab();
  if (!ST) {
    Ctx.Stats.add(SwapKernelsPass::Name, "no-symtab",
                  "kernels swapped without a .swap symbol (no .symtab)");
    return;
  }
  if (Exists)
    return;
  const std::string Name = K.Name + SwapSymbolSuffix.str();
  Symbol S;
  S.Name = Name; // the table keeps a copy
  S.Binding = ELF::STB_GLOBAL;
  S.Type = ELF::STT_FUNC;
  S.Other = ELF::STV_DEFAULT;
  S.Sec = Obj.sectionForAddress(Code);
  S.Value = Code;
  auto FI = F.Functions.find(RK.Name);
  if (FI != F.Functions.end() && FI->second.first == RK.CodeEntry)
    S.Size = FI->second.second;
  ST->add(std::move(S));
  Ctx.Stats.add(SwapKernelsPass::Name, "symbols",
                "<kernel>.swap symbols added");
}

Expected<PreservedAnalyses>
SwapKernelsPass::runOnKernels(Object &Obj, KernelsAnalysis::Result &R,
                              AnalysisManager &AM, PassContext &Ctx) {
  Expected<const SwapReplacement &> FOr = replacement();
  if (!FOr)
    return FOr.takeError();
  const SwapReplacement &F = *FOr;
  IntactAt.clear();
  CopiedSwaps.reset();
  Functions.reset();
  const KernelsAnalysis::Result &FR = *F.Kernels;
  const TargetInfo &T = R.Target;
  std::vector<std::pair<size_t, size_t>> Pairs = selected(R, F), Todo;
  for (auto [I, J] : Pairs)
    if (!isSwapped(Obj, R, R.Kernels[I], FR.Kernels[J]))
      Todo.push_back({I, J});
  if (Todo.empty())
    return PreservedAnalyses::all();
  Expected<std::vector<SwapPlan>> Plans = planSwaps(R, F, Todo, Opts, Ctx);
  if (!Plans)
    return Plans.takeError();
  if (Plans->empty())
    return PreservedAnalyses::all();
  Expected<uint64_t> Delta = placeImage(Obj, F, R, Pairs, Opts, IntactAt, Ctx);
  if (!Delta)
    return Delta.takeError();
  std::vector<SwapSegment> Image;
  for (const SwapReplacement::Load &L : F.Loads)
    Image.push_back({L.VAddr + *Delta, L.FileSize, L.MemSize,
                     swapDigestHex(SwapDigest::SHA256, L.Bytes)});

  auto TA = AM.getResult<TargetAnalysis>(Obj);
  if (!TA)
    return TA.takeError();
  StubEncoders Encoders(Obj, *TA);
  std::vector<SwapRecord> NewRecords;
  bool MetadataChanged = false;
  for (const SwapPlan &P : *Plans) {
    const KernelInfo &K = R.Kernels[P.I], &RK = FR.Kernels[P.J];
    const uint64_t Code = RK.CodeEntry + *Delta;
    KernelDescriptor KD = RK.KD;
    StubEntry Enter{Code, std::nullopt};
    if (const PoolStub *Stub = stubOf(K)) {
      Expected<StubEntry> SE =
          retargetStub(K, *Stub, Code, KD, T, Encoders, name(), "swapped", Ctx);
      if (!SE)
        return SE.takeError();
      Enter = *SE;
    }
    if (!KD.setEntryAddress(K.KDAddr, Enter.Entry))
      return makeError("kernel '" + K.Name + "' cannot be swapped: the entry " +
                       hex(Enter.Entry) +
                       " is not reachable from the descriptor at " +
                       hex(K.KDAddr) + " with a signed 64-bit offset");
    std::array<uint8_t, kd::Size> KDBytes;
    KD.write(KDBytes);
    if (Error E = K.KDSection->overwrite(K.KDAddr - K.KDSection->Addr, KDBytes))
      return prefixError("kernel '" + K.Name + "'", std::move(E));
    if (Error E = takeMetadata(R, K, RK, P.Left, Enter.SGPRCountFloor, Opts,
                               Ctx, MetadataChanged))
      return std::move(E);
    // (Before the symbols this run adds: each names its own kernel.)
    addSwapSymbol(Obj, K, RK, Code, F, swapSymbolAt(Obj, K, Code), Ctx);
    NewRecords.push_back({K.Name, Opts.With, SwapDigest::SHA256,
                          F.digest(SwapDigest::SHA256), RK.KDAddr + *Delta,
                          Code, Image});
    Ctx.Stats.add(name(), "swapped", "kernels swapped");
  }
  if (MetadataChanged)
    if (Error E = commitKernelMetadata(Obj, R, Ctx, name()))
      return std::move(E);
  if (Error E = appendSwapRecords(Obj, NewRecords))
    return std::move(E);
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<TargetAnalysis>();
  return PA;
}
