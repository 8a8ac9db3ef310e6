//===- lib/AMDGPU/ScratchSGPR.cpp - Scratch pair for stubs ----------------===//

#include "hotswap/AMDGPU/ScratchSGPR.h"

#include "llvm/Support/MathExtras.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

Expected<std::optional<unsigned>>
amdgpu::granuleForPair(const TargetInfo &TI, const KernelDescriptor &KD,
                       unsigned N) {
  if (!TI.HasSGPRGranule)
    return std::nullopt;
  if (N % 2 != 0)
    return createStringError("scratch pair s[" + Twine(N) + ":" +
                             Twine(N + 1) + "] is not even-aligned");
  if (N + 2 > TI.AddressableSGPRs)
    return createStringError("scratch pair s[" + Twine(N) + ":" +
                             Twine(N + 1) + "] is above the " +
                             Twine(TI.AddressableSGPRs) +
                             " addressable SGPRs of " + TI.Name);
  unsigned Need = N + 2 + TI.SGPRGranuleExtra;
  unsigned Have = (KD.sgprGranule() + 1) * 8;
  if (Need <= Have)
    return std::nullopt;
  if (TI.HasSGPRInitBug)
    return createStringError(
        "scratch pair s[" + Twine(N) + ":" + Twine(N + 1) +
        "] needs " + Twine(Need) + " SGPRs but " + TI.Name +
        " has a fixed SGPR allocation (SGPR init bug)");
  unsigned G = static_cast<unsigned>(divideCeil(Need, 8)) - 1;
  if (G > 15)
    return createStringError("SGPR granule " + Twine(G) + " out of range");
  return G;
}

Expected<ScratchChoice> amdgpu::chooseScratch(const TargetInfo &TI,
                                              const KernelDescriptor &KD,
                                              unsigned UsedSGPRs) {
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
  Expected<std::optional<unsigned>> G = granuleForPair(TI, KD, N);
  if (!G)
    return createStringError("no free SGPR pair: the kernel uses " +
                             Twine(UsedSGPRs) + " SGPRs; " +
                             toString(G.takeError()));
  C.SGPR = N;
  return C;
}
