//===- lib/AMDGPU/ScratchSGPR.cpp - Scratch pair for stubs ----------------===//

#include "hotswap/AMDGPU/ScratchSGPR.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

Expected<std::optional<unsigned>>
amdgpu::granuleForPair(const TargetInfo &TI, const KernelDescriptor &KD,
                       unsigned N, unsigned ReservedTop) {
  if (!TI.HasSGPRGranule)
    return std::nullopt;
  if (N % 2 != 0)
    return createStringError("scratch pair s[" + Twine(N) + ":" + Twine(N + 1) +
                             "] is not even-aligned");
  if (N + 2 > TI.AddressableSGPRs)
    return createStringError("scratch pair s[" + Twine(N) + ":" + Twine(N + 1) +
                             "] is above the " + Twine(TI.AddressableSGPRs) +
                             " addressable SGPRs of " + TI.Name);
  unsigned Need = sgprsNeededForPair(N, ReservedTop);
  unsigned Have = (KD.sgprGranule() + 1) * 8;
  if (Need <= Have)
    return std::nullopt;
  if (TI.HasSGPRInitBug)
    return createStringError("scratch pair s[" + Twine(N) + ":" + Twine(N + 1) +
                             "] needs " + Twine(Need) + " SGPRs but " +
                             TI.Name +
                             " has a fixed SGPR allocation (SGPR init bug)");
  unsigned G = static_cast<unsigned>(divideCeil(Need, 8)) - 1;
  if (G > maxSGPRGranule(TI))
    return createStringError("SGPR granule " + Twine(G) + " out of range");
  return G;
}

unsigned amdgpu::sgprsNeededForPair(unsigned N, unsigned ReservedTop) {
  return N + 2 + ReservedTop;
}

unsigned amdgpu::sgprsNeededForVCC(unsigned UsedSGPRs, unsigned ReservedTop) {
  // VCC is the topmost pair of the allocation.
  return UsedSGPRs + std::max(ReservedTop, 2u);
}

uint64_t amdgpu::sgprCountCoveringPair(const TargetInfo &TI, unsigned N,
                                       unsigned ReservedTop) {
  return N + 2 + (TI.HasSGPRGranule ? ReservedTop : 0);
}

unsigned amdgpu::maxSGPRGranule(const TargetInfo &TI) {
  return static_cast<unsigned>(
             divideCeil(TI.AddressableSGPRs + TI.SGPRGranuleExtra, 8)) -
         1;
}

Expected<std::optional<unsigned>>
amdgpu::granuleForVCC(const TargetInfo &TI, const KernelDescriptor &KD,
                      unsigned UsedSGPRs, unsigned ReservedTop) {
  if (!TI.HasSGPRGranule)
    return std::nullopt;
  unsigned Need = sgprsNeededForVCC(UsedSGPRs, ReservedTop);
  unsigned Have = (KD.sgprGranule() + 1) * 8;
  if (Need <= Have)
    return std::nullopt;
  if (TI.HasSGPRInitBug)
    return createStringError("VCC would alias the kernel's SGPRs and " +
                             TI.Name + " has a fixed SGPR allocation");
  unsigned G = static_cast<unsigned>(divideCeil(Need, 8)) - 1;
  if (G > maxSGPRGranule(TI))
    return createStringError("VCC would alias the kernel's SGPRs (" +
                             Twine(UsedSGPRs) + " in use)");
  return G;
}

Expected<ScratchChoice> amdgpu::chooseScratch(const TargetInfo &TI,
                                              const KernelDescriptor &KD,
                                              unsigned UsedSGPRs,
                                              unsigned ReservedTop) {
  unsigned N = static_cast<unsigned>(alignTo(UsedSGPRs, 2));
  ScratchChoice C;
  if (!TI.HasSGPRGranule) {
    if (N + 2 <= TI.AddressableSGPRs) {
      C.SGPR = N;
      return C;
    }
    C.UseVCC = true;
    return C;
  }
  // gfx6-9: the pair must fit in the (possibly raised) allocation.
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, N, ReservedTop);
  if (G) {
    C.SGPR = N;
    return C;
  }
  std::string PairErr = toString(G.takeError());
  // Every SGPR taken: VCC, if the specials stay above the kernel's SGPRs.
  Expected<std::optional<unsigned>> V =
      granuleForVCC(TI, KD, UsedSGPRs, ReservedTop);
  if (V) {
    C.UseVCC = true;
    return C;
  }
  return createStringError("no free SGPR pair: the kernel uses " +
                           Twine(UsedSGPRs) + " SGPRs; " + PairErr + "; " +
                           toString(V.takeError()));
}
