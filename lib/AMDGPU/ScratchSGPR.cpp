//===- lib/AMDGPU/ScratchSGPR.cpp - Scratch pair for stubs ----------------===//

#include "hotswap/AMDGPU/ScratchSGPR.h"

#include "hotswap/Support/Error.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

unsigned amdgpu::targetSpecialSGPRs(const TargetInfo &TI) {
  if (!TI.HasSGPRGranule)
    return 0;
  unsigned N = 2; // VCC
  if (TI.Gen == Generation::GFX8 || TI.Gen == Generation::GFX9) {
    if (TI.HasXnack && TI.Xnack != FeatureSetting::Off)
      N = 4; // XNACK_MASK
    if (TI.ArchitectedFlatScratch)
      N = 6; // FLAT_SCRATCH, below XNACK_MASK whether or not XNACK is on
  }
  return N;
}

unsigned amdgpu::kernelSpecialSGPRs(const TargetInfo &TI,
                                    const KernelDescriptor &KD) {
  unsigned N = targetSpecialSGPRs(TI);
  if (TI.HasSGPRGranule && KD.enablesFlatScratchInit()) {
    bool GFX8Plus = TI.Gen == Generation::GFX8 || TI.Gen == Generation::GFX9;
    N = std::max(N, GFX8Plus ? 6u : 4u);
  }
  return N;
}

Expected<std::optional<unsigned>>
amdgpu::granuleForPair(const TargetInfo &TI, const KernelDescriptor &KD,
                       unsigned N, unsigned Specials) {
  if (!TI.HasSGPRGranule)
    return std::nullopt;
  if (N % 2 != 0)
    return makeError("scratch pair s[" + Twine(N) + ":" + Twine(N + 1) +
                     "] is not even-aligned");
  if (N + 2 > TI.AddressableSGPRs)
    return makeError("scratch pair s[" + Twine(N) + ":" + Twine(N + 1) +
                     "] is above the " + Twine(TI.AddressableSGPRs) +
                     " addressable SGPRs of " + TI.Name);
  unsigned Need = sgprsNeededForPair(N, Specials);
  unsigned Have = (KD.sgprGranule() + 1) * 8;
  if (Need <= Have)
    return std::nullopt;
  if (TI.HasSGPRInitBug)
    return makeError("scratch pair s[" + Twine(N) + ":" + Twine(N + 1) +
                     "] needs " + Twine(Need) + " SGPRs but " + TI.Name +
                     " has a fixed SGPR allocation (SGPR init bug)");
  unsigned G = static_cast<unsigned>(divideCeil(Need, 8)) - 1;
  if (G > maxSGPRGranule(TI))
    return makeError("SGPR granule " + Twine(G) + " out of range");
  return G;
}

unsigned amdgpu::sgprsNeededForPair(unsigned N, unsigned Specials) {
  return N + 2 + Specials;
}

unsigned amdgpu::sgprsNeededForVCC(unsigned LiveIns, unsigned Specials) {
  // VCC is the topmost pair of the allocation.
  return LiveIns + std::max(Specials, 2u);
}

uint64_t amdgpu::sgprCountCoveringPair(const TargetInfo &TI, unsigned N,
                                       unsigned Specials) {
  return N + 2 + (TI.HasSGPRGranule ? Specials : 0);
}

unsigned amdgpu::maxSGPRGranule(const TargetInfo &TI) {
  return static_cast<unsigned>(
             divideCeil(TI.AddressableSGPRs + TI.SGPRGranuleExtra, 8)) -
         1;
}

Expected<std::optional<unsigned>>
amdgpu::granuleForVCC(const TargetInfo &TI, const KernelDescriptor &KD,
                      unsigned Specials) {
  if (!TI.HasSGPRGranule)
    return std::nullopt;
  unsigned LiveIns = KD.liveInSGPRs(TI);
  unsigned Need = sgprsNeededForVCC(LiveIns, Specials);
  unsigned Have = (KD.sgprGranule() + 1) * 8;
  if (Need <= Have)
    return std::nullopt;
  if (TI.HasSGPRInitBug)
    return makeError("VCC would alias the kernel's live-in SGPRs and " +
                     TI.Name + " has a fixed SGPR allocation");
  unsigned G = static_cast<unsigned>(divideCeil(Need, 8)) - 1;
  if (G > maxSGPRGranule(TI))
    return makeError("VCC would alias the kernel's live-in SGPRs (" +
                     Twine(LiveIns) + ")");
  return G;
}

Expected<ScratchChoice> amdgpu::chooseScratch(const TargetInfo &TI,
                                              const KernelDescriptor &KD) {
  unsigned LiveIns = KD.liveInSGPRs(TI);
  unsigned N = static_cast<unsigned>(alignTo(LiveIns, 2));
  ScratchChoice Pair, VCC;
  Pair.SGPR = N;
  VCC.UseVCC = true;
  if (!TI.HasSGPRGranule)
    return N + 2 <= TI.AddressableSGPRs ? Pair : VCC;

  // gfx6-9: the allocation as it is, first for the pair, then for VCC;
  // only then a larger granule (which may lower occupancy).
  unsigned Specials = kernelSpecialSGPRs(TI, KD);
  unsigned Have = (KD.sgprGranule() + 1) * 8;
  if (N + 2 <= TI.AddressableSGPRs && sgprsNeededForPair(N, Specials) <= Have)
    return Pair;
  if (sgprsNeededForVCC(LiveIns, Specials) <= Have)
    return VCC;
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, N, Specials);
  if (G)
    return Pair;
  std::string PairErr = toString(G.takeError());
  Expected<std::optional<unsigned>> V = granuleForVCC(TI, KD, Specials);
  if (V)
    return VCC;
  return makeError("no free SGPR pair: the kernel has " + Twine(LiveIns) +
                   " live-in SGPRs; " + PairErr + "; " +
                   toString(V.takeError()));
}
