//===- lib/Passes/StubRetarget.cpp - A kernel's stub led elsewhere --------===//

#include "hotswap/Passes/StubRetarget.h"

#include "hotswap/Code/EntryPolicy.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

const PoolStub *hotswap::stubOf(const KernelInfo &K) {
  return K.EntryStub     ? &*K.EntryStub
         : K.PendingStub ? &*K.PendingStub
                         : nullptr;
}

Expected<StubEncoder &> StubEncoders::forStub(const PoolStub &S) {
  Expected<ArrayRef<uint8_t>> P = Obj.bytesAt(S.Addr, S.Decoded.PrologueSize);
  if (!P)
    return P.takeError();
  std::vector<uint8_t> Prologue(P->begin(), P->end());
  auto It = Encoders.find(Prologue);
  if (It != Encoders.end())
    return *It->second;
  TargetAnalysis::Result &TA = Target;
  Expected<std::unique_ptr<StubEncoder>> E =
      StubEncoder::create(TA.info(), [&TA]() { return TA.mc(); }, Prologue);
  if (!E)
    return E.takeError();
  return *Encoders.emplace(std::move(Prologue), std::move(*E)).first->second;
}

Expected<StubEntry>
hotswap::retargetStub(const KernelInfo &K, const PoolStub &Stub, uint64_t Code,
                      KernelDescriptor &KD, const TargetInfo &T,
                      StubEncoders &Encoders, StringRef PassName,
                      StringRef Done, PassContext &Ctx) {
  const std::string Cannot = "kernel '" + K.Name + "' cannot be " + Done.str();
  Expected<StubEncoder &> Enc = Encoders.forStub(Stub);
  if (!Enc)
    return prefixError("kernel '" + K.Name + "'", Enc.takeError());
  // A stub keeps its form while the new code is in its reach.
  Expected<StubSpec> Spec = code::chooseStubForm(
      T, KD, *Enc, {Stub.Addr, Code, Stub.Dual},
      {/*AllowShort=*/Stub.Decoded.Form == StubSpec::Short});
  if (!Spec)
    return prefixError(Cannot + ": its stub at " + hex(Stub.Addr) +
                           " cannot reach the new code at " + hex(Code),
                       Spec.takeError());
  Expected<std::vector<uint8_t>> Bytes = Enc->encode(*Spec);
  if (!Bytes)
    return prefixError("kernel '" + K.Name + "'", Bytes.takeError());
  if (Error E = Stub.Sec->overwrite(Stub.Addr - Stub.Sec->Addr, *Bytes))
    return prefixError("kernel '" + K.Name + "'", std::move(E));
  Ctx.Stats.add(PassName, "stubs", "stubs retargeted");
  if (!K.EntryStub)
    return StubEntry{Code, std::nullopt};

  Expected<code::EntryEffects> Effects = code::enterThroughStub(
      T, KD, K.KDAddr, Stub.Addr, Stub.size(), Spec->Form, Spec->SGPR);
  if (!Effects)
    return prefixError(Cannot, Effects.takeError());
  if (Effects->GranuleRaised)
    Ctx.Stats.add(PassName, "granule-raised",
                  "SGPR granules raised for a stub's scratch pair");
  Ctx.Stats.add(PassName, "through-stub",
                ("kernels " + Done + " through their stub").str());
  return StubEntry{Stub.Addr, Effects->SGPRCountFloor};
}
