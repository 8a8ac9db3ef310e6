//===- lib/Passes/PatchDescriptors.cpp - patch-descriptors ----------------===//

#include "hotswap/Passes/PatchDescriptors.h"
#include "hotswap/Support/Format.h"

#include "hotswap/AMDGPU/ScratchSGPR.h"
#include "hotswap/Passes/Kernels.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;


Expected<std::unique_ptr<Pass>> PatchDescriptorsPass::create(StringRef Params) {
  if (!Params.empty())
    return createStringError("unknown parameter '" + Params + "'");
  return std::make_unique<PatchDescriptorsPass>();
}

Expected<bool> PatchDescriptorsPass::isSatisfied(Object &Obj,
                                                 AnalysisManager &AM,
                                                 PassContext &Ctx) {
  auto R = AM.getResult<KernelsAnalysis>(Obj);
  if (!R)
    return R.takeError();
  // Without any stub the invariant holds vacuously: let the precondition
  // say why nothing happens (and fail under --strict).
  if (R->PoolStubs.empty())
    return false;
  for (const KernelInfo &K : R->Kernels)
    if (K.PendingStub)
      return false;
  return true;
}

Expected<std::optional<std::string>>
PatchDescriptorsPass::unmetPrecondition(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) {
  auto R = AM.getResult<KernelsAnalysis>(Obj);
  if (!R)
    return R.takeError();
  if (R->PoolStubs.empty())
    return std::optional<std::string>(
        "no stubs in a pool section (run synth-trampolines first)");
  return std::nullopt;
}

/// The scratch pair N a stub clobbers, if it uses an SGPR pair.
static std::optional<unsigned> pairOf(const DecodedStub &D) {
  if (D.Form == StubSpec::SGPRPair)
    return D.SGPR;
  return std::nullopt;
}

Expected<PreservedAnalyses> PatchDescriptorsPass::run(Object &Obj,
                                                      AnalysisManager &AM,
                                                      PassContext &Ctx) {
  auto RO = AM.getResult<KernelsAnalysis>(Obj);
  if (!RO)
    return RO.takeError();
  KernelsAnalysis::Result &R = *RO;
  const TargetInfo &TI = R.Target;
  bool MetadataChanged = false;
  std::vector<size_t> Patched;
  for (size_t I = 0; I < R.Kernels.size(); ++I) {
    const KernelInfo &K = R.Kernels[I];
    if (!K.PendingStub)
      continue;
    const PoolStub &S = *K.PendingStub;
    std::string Who = "kernel '" + K.Name + "'";
    if (K.needsDualStub(TI) && !S.Dual)
      return createStringError(Who + " preloads kernel arguments (entered at "
                               "+256 by the firmware) but its stub at " +
                               hex(S.Addr) + " is not a dual stub");
    KernelDescriptor KD = K.KD;
    if (!KD.setEntryAddress(K.KDAddr, S.Addr))
      return createStringError(Who + ": stub " + hex(S.Addr) +
                               " is not reachable from the descriptor at " +
                               hex(K.KDAddr) + " with a signed 64-bit offset");
    uint64_t StubSize = S.Dual ? 2 * StubSlotSize : StubSlotSize;
    if (TI.InstPrefWidth) {
      unsigned Max = static_cast<unsigned>(StubSize / 128);
      if (KD.instPrefSize(TI) > Max) {
        KD.setInstPrefSize(TI, Max);
        Ctx.Stats.add(name(), "inst-pref-clamped",
                      "INST_PREF_SIZE fields clamped to the stub");
      }
    }
    // gfx6-9: the allocation must hold what the stub clobbers.
    std::optional<unsigned> N = pairOf(S.Decoded);
    if (N || S.Decoded.Form == StubSpec::VCC) {
      Expected<std::optional<unsigned>> G =
          N ? granuleForPair(TI, KD, *N, K.ReservedTopSGPRs)
            : granuleForVCC(TI, KD, K.UsedSGPRs, K.ReservedTopSGPRs);
      if (!G)
        return createStringError(Who + ": " + toString(G.takeError()));
      if (*G) {
        KD.setSGPRGranule(**G);
        Ctx.Stats.add(name(), "granule-raised",
                      "SGPR granules raised for the scratch pair (may lower "
                      "occupancy)");
      }
    }
    if (N) {
      uint64_t NewCount = sgprCountCoveringPair(TI, *N, K.ReservedTopSGPRs);
      if (R.Metadata && K.MD && K.MD->SGPRCount &&
          *K.MD->SGPRCount < NewCount) {
        if (Error E = R.Metadata->setSGPRCount(K.KDSymbol, NewCount))
          return std::move(E);
        MetadataChanged = true;
        Ctx.Stats.add(name(), "sgpr-count-raised",
                      "metadata .sgpr_count values raised");
      }
    }
    MutableArrayRef<uint8_t> Sec = K.KDSection->mutableContents();
    KD.write(Sec.slice(K.KDAddr - K.KDSection->Addr, 64));
    Patched.push_back(I);
    Ctx.Stats.add(name(), "patched", "descriptors pointed at their stub");
  }

  if (MetadataChanged) {
    Expected<NoteRewrite> NR = R.Metadata->rewrite();
    if (!NR)
      return NR.takeError();
    MutableArrayRef<uint8_t> Note = R.MetadataSection->mutableContents();
    std::copy(NR->Bytes.begin(), NR->Bytes.end(), Note.begin());
  }
  if (Patched.empty())
    return PreservedAnalyses::all();

  // Bring the kernels analysis up to date instead of having it recomputed
  // (metadata parsing and stub decoding dominate the run time on large
  // objects). Each patched kernel now enters through the stub that was
  // pending; its metadata values are the ones just written (the kept
  // CodeObjectMetadata reports its pending values, and a later rewrite()
  // starts again from the note as read, with every change so far). Fields
  // are derived exactly as KernelsAnalysis::run derives them.
  for (size_t I : Patched) {
    KernelInfo &K = R.Kernels[I];
    K.KD = KernelDescriptor::read(K.KDSection->contents().slice(
        K.KDAddr - K.KDSection->Addr, 64));
    std::optional<uint64_t> Entry = K.KD.entryAddress(K.KDAddr);
    if (!Entry || *Entry != K.PendingStub->Addr)
      return PreservedAnalyses::none();
    K.Entry = *Entry;
    K.EntryStub = std::move(K.PendingStub);
    K.PendingStub.reset();
    if (MetadataChanged)
      if (const KernelMD *MD = R.Metadata->findBySymbol(K.KDSymbol))
        K.MD = *MD;
    K.deriveSGPRUse(TI);
  }
  return PreservedAnalyses::none().preserve<KernelsAnalysis>();
}
