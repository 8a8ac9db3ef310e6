//===- lib/Passes/PatchDescriptors.cpp - patch-descriptors ----------------===//

#include "hotswap/Passes/PatchDescriptors.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "hotswap/Code/EntryPolicy.h"
#include "hotswap/Passes/KernelsPass.h"
#include "hotswap/Passes/TargetAnalysis.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

Expected<bool> PatchDescriptorsPass::holds(Object &Obj,
                                           KernelsAnalysis::Result &R,
                                           AnalysisManager &AM,
                                           PassContext &Ctx) {
  // Without any stub the invariant holds vacuously: let the precondition
  // say why nothing happens (and fail under --strict).
  if (R.PoolStubs.empty())
    return false;
  for (const KernelInfo &K : R.Kernels)
    if (K.PendingStub)
      return false;
  return true;
}

Expected<std::optional<std::string>>
PatchDescriptorsPass::precondition(Object &Obj, KernelsAnalysis::Result &R,
                                   AnalysisManager &AM, PassContext &Ctx) {
  if (R.PoolStubs.empty())
    return std::optional<std::string>(
        "no stubs in a pool section (run synth-trampolines first)");
  return std::nullopt;
}

Expected<PreservedAnalyses>
PatchDescriptorsPass::runOnKernels(Object &Obj, KernelsAnalysis::Result &R,
                                   AnalysisManager &AM, PassContext &Ctx) {
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
      return makeError(Who +
                       " preloads kernel arguments (entered at "
                       "+256 by the firmware) but its stub at " +
                       hex(S.Addr) + " is not a dual stub");
    KernelDescriptor KD = K.KD;
    Expected<code::EntryEffects> Effects = code::enterThroughStub(
        TI, KD, K.KDAddr, S.Addr, S.size(), S.Decoded.Form, S.Decoded.SGPR);
    if (!Effects)
      return prefixError(Who, Effects.takeError());
    if (Effects->InstPrefClamped)
      Ctx.Stats.add(name(), "inst-pref-clamped",
                    "INST_PREF_SIZE fields clamped to the stub");
    if (Effects->GranuleRaised)
      Ctx.Stats.add(name(), "granule-raised",
                    "SGPR granules raised for the scratch pair (may lower "
                    "occupancy)");
    // .sgpr_count is raised only when the pair (with the specials above it
    // on gfx6-9) lies above what the compiler counted.
    if (Effects->SGPRCountFloor && R.Metadata && K.MD && K.MD->SGPRCount &&
        *K.MD->SGPRCount < *Effects->SGPRCountFloor) {
      if (Error E =
              R.Metadata->setSGPRCount(K.KDSymbol, *Effects->SGPRCountFloor))
        return std::move(E);
      MetadataChanged = true;
      Ctx.Stats.add(name(), "sgpr-count-raised",
                    "metadata .sgpr_count values raised");
    }
    std::array<uint8_t, kd::Size> Bytes;
    KD.write(Bytes);
    if (Error E = K.KDSection->overwrite(K.KDAddr - K.KDSection->Addr, Bytes))
      return prefixError(Who, std::move(E));
    Patched.push_back(I);
    Ctx.Stats.add(name(), "patched", "descriptors pointed at their stub");
  }

  if (MetadataChanged)
    if (Error E = commitKernelMetadata(Obj, R, Ctx, name()))
      return std::move(E);
  if (Patched.empty())
    return PreservedAnalyses::all();

  // Bring the kernels analysis up to date instead of having it recomputed
  // (metadata parsing and stub decoding dominate the run time on large
  // objects): each patched kernel now enters through the stub that was
  // pending.
  for (size_t I : Patched) {
    if (!R.enterPendingStub(I)) {
      PreservedAnalyses Recompute = PreservedAnalyses::none();
      return preserveTargetAndCode(Recompute);
    }
  }
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<KernelsAnalysis>();
  return preserveTargetAndCode(PA);
}
