//===- lib/Code/EntryPolicy.cpp - Entering a kernel through a stub --------===//

#include "hotswap/Code/EntryPolicy.h"

#include "hotswap/AMDGPU/ScratchSGPR.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace hotswap::code;

Expected<StubSpec> code::chooseStubForm(const TargetInfo &T,
                                        const KernelDescriptor &KD,
                                        const StubEncoder &Enc,
                                        const StubPlace &Place,
                                        FormRules Rules) {
  StubSpec Spec;
  Spec.StubAddr = Place.StubAddr;
  Spec.Target = Place.Target;
  Spec.Dual = Place.Dual;
  const bool Reaches =
      Enc.shortFormReaches(Place.StubAddr, Place.Target) &&
      (!Place.Dual || Enc.shortFormReaches(Place.StubAddr + StubSlotSize,
                                           Place.Target + StubSlotSize));
  if (Rules.AllowShort && Reaches) {
    Spec.Form = StubSpec::Short;
    return Spec;
  }
  Expected<ScratchChoice> SC = chooseScratch(T, KD);
  if (!SC)
    return SC.takeError();
  Spec.Form = SC->UseVCC ? StubSpec::VCC : StubSpec::SGPRPair;
  Spec.SGPR = SC->SGPR;
  return Spec;
}

Expected<EntryEffects>
code::enterThroughStub(const TargetInfo &T, KernelDescriptor &KD,
                       uint64_t KDAddr, uint64_t StubAddr, uint64_t StubSize,
                       StubSpec::RegKind Form, unsigned SGPR) {
  KernelDescriptor New = KD;
  if (!New.setEntryAddress(KDAddr, StubAddr))
    return makeError("stub " + hex(StubAddr) +
                     " is not reachable from the descriptor at " + hex(KDAddr) +
                     " with a signed 64-bit offset");
  EntryEffects Out;
  // The hardware prefetches INST_PREF_SIZE cache lines from the entry: no
  // more than the stub holds.
  if (T.InstPrefWidth) {
    unsigned Max = static_cast<unsigned>(StubSize / 128);
    if (New.instPrefSize(T) > Max) {
      New.setInstPrefSize(T, Max);
      Out.InstPrefClamped = true;
    }
  }
  // gfx6-9: the allocation must hold what the stub clobbers, below the
  // special registers at its top.
  const unsigned Specials = kernelSpecialSGPRs(T, New);
  Expected<std::optional<unsigned>> G =
      Form == StubSpec::SGPRPair ? granuleForPair(T, New, SGPR, Specials)
      : Form == StubSpec::VCC ? granuleForVCC(T, New, Specials)
                              : Expected<std::optional<unsigned>>(std::nullopt);
  if (!G)
    return G.takeError();
  if (*G) {
    New.setSGPRGranule(**G);
    Out.GranuleRaised = true;
  }
  if (Form == StubSpec::SGPRPair)
    Out.SGPRCountFloor = sgprCountCoveringPair(T, SGPR, Specials);
  KD = New;
  return Out;
}
