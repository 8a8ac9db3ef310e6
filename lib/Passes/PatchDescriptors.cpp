//===- lib/Passes/PatchDescriptors.cpp - patch-descriptors ----------------===//

#include "hotswap/Passes/PatchDescriptors.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "hotswap/AMDGPU/ScratchSGPR.h"
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

/// The scratch pair N a stub clobbers, if it uses an SGPR pair.
static std::optional<unsigned> pairOf(const DecodedStub &D) {
  if (D.Form == StubSpec::SGPRPair)
    return D.SGPR;
  return std::nullopt;
}

/// gfx6-9: the granule the kernel needs for what its stub \p S clobbers
/// to lie inside its allocation, below the special registers at its top
/// (nullopt: the current one will do).
static Expected<std::optional<unsigned>>
granuleFor(const TargetInfo &TI, const KernelInfo &K, const PoolStub &S) {
  unsigned Specials = kernelSpecialSGPRs(TI, K.KD);
  if (std::optional<unsigned> N = pairOf(S.Decoded))
    return granuleForPair(TI, K.KD, *N, Specials);
  if (S.Decoded.Form == StubSpec::VCC)
    return granuleForVCC(TI, K.KD, Specials);
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
    if (!KD.setEntryAddress(K.KDAddr, S.Addr))
      return makeError(Who + ": stub " + hex(S.Addr) +
                       " is not reachable from the descriptor at " +
                       hex(K.KDAddr) + " with a signed 64-bit offset");
    if (TI.InstPrefWidth) {
      unsigned Max = static_cast<unsigned>(S.size() / 128);
      if (KD.instPrefSize(TI) > Max) {
        KD.setInstPrefSize(TI, Max);
        Ctx.Stats.add(name(), "inst-pref-clamped",
                      "INST_PREF_SIZE fields clamped to the stub");
      }
    }
    // gfx6-9: the allocation must hold what the stub clobbers.
    std::optional<unsigned> N = pairOf(S.Decoded);
    Expected<std::optional<unsigned>> G = granuleFor(TI, K, S);
    if (!G)
      return prefixError(Who, G.takeError());
    if (*G) {
      KD.setSGPRGranule(**G);
      Ctx.Stats.add(name(), "granule-raised",
                    "SGPR granules raised for the scratch pair (may lower "
                    "occupancy)");
    }
    if (N) {
      // Raised only when the pair (with the specials above it on gfx6-9)
      // lies above what the compiler counted.
      uint64_t NewCount =
          sgprCountCoveringPair(TI, *N, kernelSpecialSGPRs(TI, K.KD));
      if (R.Metadata && K.MD && K.MD->SGPRCount &&
          *K.MD->SGPRCount < NewCount) {
        if (Error E = R.Metadata->setSGPRCount(K.KDSymbol, NewCount))
          return std::move(E);
        MetadataChanged = true;
        Ctx.Stats.add(name(), "sgpr-count-raised",
                      "metadata .sgpr_count values raised");
      }
    }
    std::array<uint8_t, kd::Size> Bytes;
    KD.write(Bytes);
    if (Error E = K.KDSection->overwrite(K.KDAddr - K.KDSection->Addr, Bytes))
      return prefixError(Who, std::move(E));
    Patched.push_back(I);
    Ctx.Stats.add(name(), "patched", "descriptors pointed at their stub");
  }

  if (MetadataChanged) {
    Expected<NoteRewrite> NR = R.Metadata->rewrite();
    if (!NR)
      return NR.takeError();
    // The whole note section, the same size (checked by rewrite()): moved
    // in, not copied over a copy of the input's bytes.
    if (NR->Bytes.size() != R.MetadataSection->size())
      return makeError("metadata: the rewritten note section changed size");
    R.MetadataSection->setContents(std::move(NR->Bytes));
  }
  if (Patched.empty())
    return PreservedAnalyses::all();

  // Bring the kernels analysis up to date instead of having it recomputed
  // (metadata parsing and stub decoding dominate the run time on large
  // objects): each patched kernel now enters through the stub that was
  // pending.
  for (size_t I : Patched) {
    if (!R.enterPendingStub(I, MetadataChanged)) {
      PreservedAnalyses Recompute = PreservedAnalyses::none();
      return preserveTargetAndCode(Recompute);
    }
  }
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<KernelsAnalysis>();
  return preserveTargetAndCode(PA);
}
