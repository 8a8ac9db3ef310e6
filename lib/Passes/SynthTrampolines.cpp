//===- lib/Passes/SynthTrampolines.cpp - synth-trampolines ----------------===//

#include "hotswap/Passes/SynthTrampolines.h"

#include "hotswap/AMDGPU/Prologue.h"
#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Code/EntryPolicy.h"
#include "hotswap/Object/InputFile.h"
#include "hotswap/Passes/CodeSymbols.h"
#include "hotswap/Passes/TargetAnalysis.h"

#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

SynthTrampolinesPass::SynthTrampolinesPass(TrampolineOptions O)
    : Opts(std::move(O)) {
  if (!Opts.Only.empty())
    OnlyRE.emplace(Opts.Only);
}

Expected<std::unique_ptr<Pass>> SynthTrampolinesPass::create(StringRef Params) {
  TrampolineOptions O;
  SmallVector<StringRef, 4> Parts;
  Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts) {
    auto [Key, Value] = P.split('=');
    if (Key == "prologue") {
      if (Value == "none")
        O.Prologue = TrampolineOptions::PrologueKind::None;
      else if (Value == "gfx1250-vmem")
        O.Prologue = TrampolineOptions::PrologueKind::GFX1250VMem;
      else if (Value.starts_with("asm:") && Value.size() > 4) {
        O.Prologue = TrampolineOptions::PrologueKind::AsmFile;
        O.PrologueFile = Value.drop_front(4).str();
      } else
        return makeError("invalid prologue '" + Value +
                         "' (expected none, gfx1250-vmem or "
                         "asm:FILE)");
    } else if (Key == "only") {
      if (Error E = regexParam(Key, Value, O.Only))
        return E;
    } else if (Key == "form") {
      if (Value == "long")
        O.ForceLong = true;
      else if (Value != "auto")
        return makeError("invalid form '" + Value +
                         "' (expected auto or long)");
    } else if (Key == "skip-unwrappable" && P == Key) {
      O.SkipUnwrappable = true;
    } else {
      return makeError("unknown parameter '" + P + "'");
    }
  }
  return std::make_unique<SynthTrampolinesPass>(std::move(O));
}

void SynthTrampolinesPass::printPipeline(raw_ostream &OS) const {
  OS << name();
  SmallVector<std::string, 4> Ps;
  if (Opts.Prologue == TrampolineOptions::PrologueKind::GFX1250VMem)
    Ps.push_back("prologue=gfx1250-vmem");
  else if (Opts.Prologue == TrampolineOptions::PrologueKind::AsmFile)
    Ps.push_back("prologue=asm:" + Opts.PrologueFile);
  if (!Opts.Only.empty())
    Ps.push_back("only=" + Opts.Only);
  if (Opts.ForceLong)
    Ps.push_back("form=long");
  if (Opts.SkipUnwrappable)
    Ps.push_back("skip-unwrappable");
  if (!Ps.empty())
    OS << "<" << join(Ps, ";") << ">";
}

Expected<std::vector<uint8_t>>
SynthTrampolinesPass::prologueBytes(const TargetInfo &TI,
                                    const TargetMC &MC) const {
  switch (Opts.Prologue) {
  case TrampolineOptions::PrologueKind::None:
    return std::vector<uint8_t>();
  case TrampolineOptions::PrologueKind::GFX1250VMem:
    return assembleErratumPrologue(TI, MC);
  case TrampolineOptions::PrologueKind::AsmFile: {
    // A regular file only: a FIFO or a device would be waited on or read
    // without end.
    Expected<std::unique_ptr<MemoryBuffer>> B =
        readRegularFile(Opts.PrologueFile);
    if (!B)
      return prefixError("cannot read prologue file '" + Opts.PrologueFile +
                             "'",
                         B.takeError());
    Expected<std::vector<uint8_t>> Bytes = MC.assemble((*B)->getBuffer());
    if (!Bytes)
      return prefixError("prologue '" + Opts.PrologueFile + "'",
                         Bytes.takeError());
    return std::move(*Bytes);
  }
  }
  llvm_unreachable("bad prologue kind");
}

Expected<std::vector<uint8_t>>
SynthTrampolinesPass::prologueFor(Object &Obj, const KernelsAnalysis::Result &R,
                                  AnalysisManager &AM) const {
  if (Opts.Prologue == TrampolineOptions::PrologueKind::None)
    return std::vector<uint8_t>();
  auto TA = AM.getResult<TargetAnalysis>(Obj);
  if (!TA)
    return TA.takeError();
  Expected<TargetMC &> MC = TA->mc();
  if (!MC)
    return MC.takeError();
  return prologueBytes(R.Target, *MC);
}

std::vector<size_t>
SynthTrampolinesPass::candidates(Object &Obj, const KernelsAnalysis::Result &R,
                                 ArrayRef<uint8_t> Prologue,
                                 PassContext *Ctx) const {
  std::vector<size_t> Out;
  for (size_t I = 0; I < R.Kernels.size(); ++I) {
    const KernelInfo &K = R.Kernels[I];
    if (OnlyRE && !OnlyRE->match(K.Name))
      continue;
    if (K.hasStub() || K.PendingStub)
      continue;
    // A kernel that already begins with the erratum prologue needs no stub.
    if (Opts.Prologue == TrampolineOptions::PrologueKind::GFX1250VMem &&
        !Prologue.empty()) {
      // (Code shorter than the prologue does not begin with it: the
      // kernel needs a stub like any other.)
      std::optional<ArrayRef<uint8_t>> Code =
          Obj.bytesIfAt(K.CodeEntry, Prologue.size());
      if (Code && *Code == Prologue) {
        if (Ctx)
          Ctx->Stats.add(name(), "has-prologue",
                         "kernels that already begin with the prologue");
        continue;
      }
    }
    Out.push_back(I);
  }
  return Out;
}

Expected<bool> SynthTrampolinesPass::holds(Object &Obj,
                                           KernelsAnalysis::Result &R,
                                           AnalysisManager &AM,
                                           PassContext &Ctx) {
  Expected<std::vector<uint8_t>> Prologue = prologueFor(Obj, R, AM);
  if (!Prologue)
    return Prologue.takeError();
  return candidates(Obj, R, *Prologue, nullptr).empty();
}

/// The encoder of this run's stubs, after checking \p Prologue decodes as
/// instructions of the target. MC is started only if StubBodyWords does not
/// give a stub's template.
static Expected<std::unique_ptr<StubEncoder>>
encoderFor(Object &Obj, AnalysisManager &AM, const TargetInfo &TI,
           ArrayRef<uint8_t> Prologue) {
  auto TA = AM.getResult<TargetAnalysis>(Obj);
  if (!TA)
    return TA.takeError();
  if (!Prologue.empty()) {
    Expected<TargetMC &> MC = TA->mc();
    if (!MC)
      return MC.takeError();
    if (Error E = checkPrologue(TI, *MC, Prologue))
      return std::move(E);
  }
  auto &Target = *TA;
  return StubEncoder::create(TI, [&Target]() { return Target.mc(); }, Prologue);
}

Expected<PreservedAnalyses>
SynthTrampolinesPass::runOnKernels(Object &Obj, KernelsAnalysis::Result &R,
                                   AnalysisManager &AM, PassContext &Ctx) {
  const TargetInfo &TI = R.Target;
  Ctx.Stats.add(name(), "kernels", "kernels seen", R.Kernels.size());

  Expected<std::vector<uint8_t>> Prologue = prologueFor(Obj, R, AM);
  if (!Prologue)
    return Prologue.takeError();
  std::vector<size_t> Cands = candidates(Obj, R, *Prologue, &Ctx);
  if (Cands.empty())
    return PreservedAnalyses::all();

  Expected<std::unique_ptr<StubEncoder>> Enc =
      encoderFor(Obj, AM, TI, *Prologue);
  if (!Enc)
    return Enc.takeError();

  // The pool's address is fixed before anything is encoded: stub addresses,
  // deltas, descriptor offsets and symbol values all derive from it.
  code::CodeAppender Appender(Obj);
  Expected<uint64_t> PoolAddrOr = Appender.nextAddress(StubSlotSize);
  if (!PoolAddrOr)
    return PoolAddrOr.takeError();
  const uint64_t PoolAddr = *PoolAddrOr;

  // The form of each stub comes first: the short form needs no SGPRs. A
  // long one takes its scratch registers from what the descriptor says is
  // live at entry and allocated (chooseScratch), never from the code.
  std::vector<uint8_t> Pool;
  // What each new stub is, as the kernels analysis would decode it.
  struct NewStub {
    size_t Kernel;
    StubSpec Spec;
  };
  std::vector<NewStub> Added;
  Pool.reserve(Cands.size() * StubSlotSize + TI.PoolGuardBytes);
  // A kernel that cannot be wrapped fails the pass, or with
  // skip-unwrappable is left as it is (warned and counted).
  auto Unwrappable = [&](const KernelInfo &K, Error Why) -> Error {
    std::string Msg = "kernel '" + K.Name +
                      "' cannot be wrapped: " + toString(std::move(Why));
    if (!Opts.SkipUnwrappable)
      return makeError(Msg + " (use synth-trampolines<skip-unwrappable> to "
                             "leave it alone)");
    Ctx.Warn(Msg + "; left unwrapped");
    Ctx.Stats.add(name(), "unwrappable", "kernels left unwrapped");
    return Error::success();
  };
  // verify checks a stub leads where the symbol table puts the kernel's
  // code: a kernel whose descriptor enters elsewhere cannot be wrapped.
  const CodeSymbols Code(Obj);
  for (size_t I : Cands) {
    KernelInfo &K = R.Kernels[I];
    if (std::optional<CodeSymbols::Claim> C =
            Code.disagreement(K, K.CodeEntry)) {
      if (Error E = Unwrappable(
              K, makeError(Twine(C->Swapped ? "its swapped code ('"
                                            : "its function symbol ('") +
                           K.Name + (C->Swapped ? ".swap')" : "')") +
                           " is at " + hex(C->Addr) +
                           ", but its descriptor at " + hex(K.KDAddr) +
                           " enters its code at " + hex(K.CodeEntry))))
        return std::move(E);
      continue;
    }
    Expected<StubSpec> Spec = code::chooseStubForm(
        TI, K.KD, **Enc,
        {PoolAddr + Pool.size(), K.CodeEntry, K.needsDualStub(TI)},
        {/*AllowShort=*/!Opts.ForceLong});
    if (!Spec) {
      if (Error E = Unwrappable(K, Spec.takeError()))
        return std::move(E);
      continue;
    }
    Expected<std::vector<uint8_t>> Bytes = (*Enc)->encode(*Spec);
    if (!Bytes)
      return prefixError("kernel '" + K.Name + "'", Bytes.takeError());
    Pool.insert(Pool.end(), Bytes->begin(), Bytes->end());
    Added.push_back({I, *Spec});
    Ctx.Stats.add(name(), "stubs", "stubs added");
    if (Spec->Dual)
      Ctx.Stats.add(name(), "dual", "dual (kernarg preload) stubs");
    if (Spec->Form == StubSpec::Short)
      Ctx.Stats.add(name(), "short", "short-form (s_branch) stubs");
    else if (Spec->Form == StubSpec::VCC)
      Ctx.Stats.add(name(), "vcc", "stubs using VCC as scratch");
  }
  if (Pool.empty())
    return PreservedAnalyses::all();

  // The prefetch guard LLVM itself puts after code follows the stubs.
  for (unsigned G = 0; G < TI.PoolGuardBytes; G += 4)
    for (unsigned B = 0; B < 4; ++B)
      Pool.push_back(static_cast<uint8_t>(TI.PadWord >> (8 * B)));
  Expected<Section &> PoolSec =
      Appender.append(code::CodePurpose::EntryStubs, StubSlotSize,
                      ELF::SHF_EXECINSTR, std::move(Pool));
  if (!PoolSec)
    return PoolSec.takeError();
  assert(PoolSec->Addr == PoolAddr && "the pool moved");

  // Keep the kernels analysis instead of re-decoding the pool and
  // re-parsing the metadata.
  uint64_t PrologueSize = (*Enc)->prologue().size();
  for (const NewStub &N : Added)
    R.addStub(N.Kernel, *PoolSec, N.Spec, PrologueSize);
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<KernelsAnalysis>();
  return preserveTargetAndCode(PA);
}
