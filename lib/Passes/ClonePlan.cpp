//===- lib/Passes/ClonePlan.cpp - print<clones>
//------------------------------===//

#include "hotswap/Passes/ClonePlan.h"

#include "hotswap/Code/Hazards.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CallReads.h"
#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Code/RelocationProof.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/CloneRecord.h"
#include "hotswap/Passes/CodeSymbols.h"
#include "hotswap/Passes/KernelsPass.h"
#include "hotswap/Passes/StubRetarget.h"
#include "hotswap/Passes/TargetAnalysis.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

std::vector<std::pair<uint64_t, uint64_t>>
hotswap::cloneOffsetMap(const FunctionCFG &G, const Relocated &C) {
  std::vector<std::pair<uint64_t, uint64_t>> Map;
  std::optional<uint64_t> Distance;
  for (size_t I = 0; I < G.Insns.size(); ++I) {
    uint64_t O = G.Insns[I].Addr - G.Begin, N = C.LandAddr[I] - C.Base;
    if (Distance != N - O)
      Map.push_back({O, N});
    Distance = N - O;
  }
  return Map;
}

std::vector<code::RegisterLimits> hotswap::functionLimits(
    const KernelsAnalysis::Result &R, ArrayRef<size_t> Functions,
    const DenseMap<size_t, std::vector<size_t>> &KernelsOf) {
  std::vector<code::RegisterLimits> Limits;
  for (size_t FI : Functions)
    Limits.push_back(kernelLimits(R, KernelsOf.lookup(FI)));
  return Limits;
}

code::RegisterLimits hotswap::kernelLimits(const KernelsAnalysis::Result &R,
                                           ArrayRef<size_t> Kernels) {
  RegisterLimits L{~0u, ~0u};
  for (size_t I : Kernels) {
    L.SGPRs = std::min(L.SGPRs, R.Kernels[I].KD.usableSGPRs(R.Target));
    L.VGPRs = std::min(L.VGPRs, R.Kernels[I].KD.usableVGPRs(R.Target));
  }
  return L;
}

std::vector<ClonePlan>
hotswap::planClones(CodeAnalysis::Result &R, ArrayRef<size_t> Functions,
                    uint64_t Base, ArrayRef<std::vector<Insertion>> Inserts,
                    bool InsertedMayReadPC, ArrayRef<RegisterLimits> Limits,
                    ArrayRef<const DecodedFunction *> Code) {
  const FunctionMap &M = R.functions();
  amdgpu::TargetMC &MC = R.mc();
  // What calls read, for the liveness of relaxations (made on first use).
  std::optional<CallReads> Calls;
  std::vector<ClonePlan> Plans;
  // The proof reads each copy as a function of its own beside the
  // originals, in one map: a copy reaches originals (callees, data), never
  // another copy, so the map holds the copy being proven as its last
  // function (above every original, so the map stays in address order).
  // Each copy is proven as soon as it is made, and its graph dropped.
  FunctionMap WithCopy = M;
  WithCopy.Functions.emplace_back();
  uint64_t At = Base;
  for (size_t X = 0; X < Functions.size(); ++X) {
    size_t I = Functions[X];
    const CodeFunction &F = M.Functions[I];
    std::optional<DecodedFunction> Own;
    const DecodedFunction *DF = X < Code.size() ? Code[X] : nullptr;
    if (!DF) {
      Own.emplace();
      Own->G = buildCFG(MC, F, R.bytes(F), M, &Own->Decoded);
      DF = &*Own;
    }
    const FunctionCFG &G = DF->G;
    ArrayRef<MCInst> Decoded = DF->Decoded;
    ClonePlan P;
    P.Function = I;
    ArrayRef<Insertion> Ins;
    if (!Inserts.empty())
      Ins = Inserts[X];
    std::vector<uint32_t> Replaced;
    for (const Insertion &In : Ins)
      if (In.Replace && In.Before < G.Insns.size()) {
        Replaced.push_back(In.Before);
        P.Replaced.push_back(G.Insns[In.Before].Addr - F.Begin);
      }
    // Registers for long jumps: free at the target by the original's
    // analyses, inside the allocation of every kernel of the code.
    std::optional<FunctionSeams> Seams;
    LongJumpScratch Scratch;
    if (!Limits.empty() && Limits[X].SGPRs != ~0u) {
      if (!Calls)
        Calls.emplace(MC, M, [&R](const CodeFunction &C) {
          return std::optional<ArrayRef<uint8_t>>(R.bytes(C));
        });
      Seams.emplace(MC, G, Decoded, F.Kind, F.Wave32, R.generation(), Limits[X],
                    &*Calls);
      Scratch = [&](uint32_t T) {
        std::optional<LongJumpRegs> Regs = longJumpRegisters(
            RegisterModel::get(MC.regInfo()), Seams->before(T));
        // gfx12: its SALU writes waited for (Hazards.h's SGPR rule).
        if (Regs)
          Regs->WaitSALU = R.generation() == amdgpu::Generation::GFX12;
        return Regs;
      };
    }
    RelocationResult RR =
        relocate(MC, G, Decoded, R.bytes(F), At, Ins, Scratch);
    P.Refusal = std::move(RR.Refusal);
    if (RR.Code) {
      // Where each recorded assembly landed: code inserted before an
      // instruction starts where control reaching it lands.
      for (const Insertion &In : Ins)
        if (!In.Asm.empty() && !In.FallThrough &&
            In.Before < RR.Code->LandAddr.size()) {
          const uint64_t Start = RR.Code->LandAddr[In.Before];
          if (!P.Asm.empty() && P.Asm.back().first == Start)
            P.Asm.back().second += "\n" + In.Asm;
          else
            P.Asm.push_back({Start, In.Asm});
        }
      At = alignTo(At + RR.Code->Bytes.size(), CloneAlign);
      P.OffsetMap = cloneOffsetMap(G, *RR.Code);
      P.Code = std::move(RR.Code);
      CodeFunction &C = WithCopy.Functions.back();
      C = F;
      C.Name += ".clone";
      C.Sec = nullptr;
      C.Begin = P.Code->Base;
      C.End = P.Code->Base + P.Code->Bytes.size();
      RelocationProofResult Proof = proveRelocation(
          MC, G, Decoded, R.bytes(F), WithCopy, C, P.Code->Bytes,
          P.Code->insertedRanges(), Replaced, InsertedMayReadPC,
          P.Code->Relaxed, Seams ? &*Seams : nullptr, P.Code->FallThrough);
      P.Problems = std::move(Proof.Problems);
      // Long jumps are code no planner checked against hazards (a body's
      // seam is the site planner's): the copy must have none its original
      // has not, or it is not placed (verify asks the same of the bytes).
      if (P.Problems.empty() && !P.Code->Relaxed.empty()) {
        std::vector<MCInst> CopyDecoded;
        FunctionCFG CG = buildCFG(MC, C, P.Code->Bytes, WithCopy, &CopyDecoded);
        for (const NewHazard &NH : newHazards(
                 MC,
                 HazardRules::of(MC, R.generation(), /*Xnack=*/true, F.Wave32),
                 F.Kind, G, Decoded, CG, CopyDecoded, Proof.InsnAddr, Replaced))
          P.Problems.push_back("hazard: " + NH.Message);
      }
    }
    Plans.push_back(std::move(P));
  }
  return Plans;
}

/// The statistic a refusal of kind \p Kind counts in.
static std::pair<StringRef, StringRef> refusalStat(StringRef Kind) {
  if (Kind == "blocking finding")
    return {"refused-finding", "kernels left alone: a blocking finding"};
  if (Kind == "unknown PC use")
    return {"refused-pc", "kernels left alone: the PC used otherwise"};
  if (Kind == "branch out of reach")
    return {"refused-reach", "kernels left alone: a branch out of reach"};
  return {"refused-other", "kernels left alone: other reasons"};
}

Expected<size_t>
hotswap::placeClones(Object &Obj, KernelsAnalysis::Result &R,
                     CodeAnalysis::Result &CA, ArrayRef<ClonePlan> Plans,
                     const DenseMap<size_t, std::vector<size_t>> &KernelsOf,
                     uint64_t Base, StringRef PassName, AnalysisManager &AM,
                     PassContext &Ctx) {
  const amdgpu::TargetInfo &T = R.Target;
  const FunctionMap &M = CA.functions();

  // Everything is decided before anything changes: refusals are warned
  // (errors with --strict), a copy the proof does not accept fails the
  // pass (that is a bug of the relocator, never of the input).
  std::vector<uint8_t> Bytes;
  std::vector<const ClonePlan *> Placed;
  for (const ClonePlan &P : Plans) {
    const CodeFunction &F = M.Functions[P.Function];
    if (!P.Code) {
      std::string Msg = "kernel '" + F.Name + "' cannot be cloned (" +
                        P.Refusal.Kind + "): " + P.Refusal.Message;
      if (Ctx.Strict)
        return makeError(Msg);
      Ctx.Warn(Msg + "; left as it is");
      auto [Key, Desc] = refusalStat(P.Refusal.Kind);
      Ctx.Stats.add(PassName, Key, Desc, KernelsOf.lookup(P.Function).size());
      continue;
    }
    if (!P.Problems.empty())
      return makeError("kernel '" + F.Name +
                       "': its copy is not proven: " + P.Problems.front());
    // Copies follow each other CloneAlign-aligned: pad to this one's
    // address with the target's padding word.
    while (Base + Bytes.size() < P.Code->Base)
      for (unsigned B = 0; B < 4; ++B)
        Bytes.push_back(static_cast<uint8_t>(T.PadWord >> (8 * B)));
    assert(Base + Bytes.size() == P.Code->Base && "copies are word-aligned");
    llvm::append_range(Bytes, P.Code->Bytes);
    Placed.push_back(&P);
  }
  if (Placed.empty())
    return 0;
  // The prefetch guard LLVM itself puts after code follows the copies.
  for (unsigned G = 0; G < T.PoolGuardBytes; G += 4)
    for (unsigned B = 0; B < 4; ++B)
      Bytes.push_back(static_cast<uint8_t>(T.PadWord >> (8 * B)));
  Expected<Section &> Sec = CodeAppender(Obj).append(
      CodePurpose::Clones, CloneAlign, ELF::SHF_EXECINSTR, std::move(Bytes));
  if (!Sec)
    return Sec.takeError();
  assert(Sec->Addr == Base && "the copies moved");

  std::vector<CloneRecord> Records;
  SymbolTable *ST = Obj.symtab();
  // A kernel entered through a stub (or about to be) keeps it: the stub is
  // led to the copy (StubRetarget.h).
  std::optional<StubEncoders> Encoders;
  bool MetadataChanged = false;
  for (const ClonePlan *P : Placed) {
    const CodeFunction &F = M.Functions[P->Function];
    const Relocated &C = *P->Code;
    for (size_t I : KernelsOf.lookup(P->Function)) {
      const KernelInfo &K = R.Kernels[I];
      amdgpu::KernelDescriptor KD = K.KD;
      StubEntry Enter{C.Base, std::nullopt};
      if (const PoolStub *Stub = stubOf(K)) {
        if (!Encoders) {
          auto TA = AM.getResult<TargetAnalysis>(Obj);
          if (!TA)
            return TA.takeError();
          Encoders.emplace(Obj, *TA);
        }
        Expected<StubEntry> SE = retargetStub(
            K, *Stub, C.Base, KD, T, *Encoders, PassName, "cloned", Ctx);
        if (!SE)
          return SE.takeError();
        Enter = *SE;
      }
      if (!KD.setEntryAddress(K.KDAddr, Enter.Entry))
        return makeError("kernel '" + K.Name + "': its entry " +
                         hex(Enter.Entry) +
                         " is not reachable from the descriptor at " +
                         hex(K.KDAddr) + " with a signed 64-bit offset");
      // The stub's scratch pair in the metadata (.sgpr_count).
      if (Enter.SGPRCountFloor && R.Metadata && K.MD && K.MD->SGPRCount &&
          *K.MD->SGPRCount < *Enter.SGPRCountFloor) {
        if (Error E =
                R.Metadata->setSGPRCount(K.KDSymbol, *Enter.SGPRCountFloor))
          return prefixError("kernel '" + K.Name + "'", std::move(E));
        MetadataChanged = true;
      }
      std::array<uint8_t, amdgpu::kd::Size> KDBytes;
      KD.write(KDBytes);
      if (Error E =
              K.KDSection->overwrite(K.KDAddr - K.KDSection->Addr, KDBytes))
        return prefixError("kernel '" + K.Name + "'", std::move(E));
      if (ST) {
        const std::string SymName = K.Name + CloneSymbolSuffix.str();
        Symbol S;
        S.Name = SymName; // the table keeps a copy
        S.Binding = ELF::STB_GLOBAL;
        S.Type = ELF::STT_FUNC;
        S.Other = ELF::STV_DEFAULT;
        S.Sec = &*Sec;
        S.Value = C.Base;
        S.Size = C.Bytes.size();
        ST->add(std::move(S));
        Ctx.Stats.add(PassName, "symbols", "<kernel>.clone symbols added");
      }
      Records.push_back({K.Name, F.Begin, F.size(), C.Base, C.Bytes.size(),
                         P->OffsetMap, C.insertedRanges(), P->Replaced,
                         C.Relaxed, C.FallThrough, P->Asm});
      Ctx.Stats.add(PassName, "cloned", "kernels cloned");
    }
    Ctx.Stats.add(PassName, "copies", "copies of code placed");
    Ctx.Stats.add(PassName, "branches", "branches encoded again",
                  C.BranchesEncoded);
    Ctx.Stats.add(PassName, "pc-relative", "PC-relative adds re-derived",
                  C.PCRelAdjusted);
    if (C.BranchesRelaxed)
      Ctx.Stats.add(PassName, "relaxed",
                    "branches out of reach relaxed to long jumps",
                    C.BranchesRelaxed);
  }
  if (MetadataChanged)
    if (Error E = commitKernelMetadata(Obj, R, Ctx, PassName))
      return std::move(E);
  // Inserted and relaxed ranges are recorded as offsets of the copy.
  for (CloneRecord &Rec : Records)
    for (auto *Ranges : {&Rec.Inserted, &Rec.Relaxed, &Rec.FallThrough})
      for (auto &[B, E] : *Ranges) {
        B -= Rec.Clone;
        E -= Rec.Clone;
      }
  for (CloneRecord &Rec : Records)
    for (auto &[At, Text] : Rec.Asm)
      At -= Rec.Clone;
  if (Error E = appendCloneRecords(Obj, Records))
    return std::move(E);
  return Placed.size();
}

ClonePlanPrinterPass::ClonePlanPrinterPass(std::string Only)
    : Only(std::move(Only)) {}

Expected<std::unique_ptr<Pass>> ClonePlanPrinterPass::create(StringRef Params) {
  std::string Only;
  if (Error E = parseOnlyParams("print<clones>", Params, Only))
    return std::move(E);
  return std::make_unique<ClonePlanPrinterPass>(std::move(Only));
}

void ClonePlanPrinterPass::printPipeline(raw_ostream &OS) const {
  OS << "print<clones";
  if (!Only.empty())
    OS << ";only=" << Only;
  OS << ">";
}

Expected<PreservedAnalyses>
ClonePlanPrinterPass::run(Object &Obj, AnalysisManager &AM, PassContext &Ctx) {
  auto R = AM.getResult<CodeAnalysis>(Obj);
  if (!R)
    return R.takeError();
  Expected<uint64_t> Base = CodeAppender(Obj).nextAddress(CloneAlign);
  if (!Base)
    return Base.takeError();
  std::optional<Regex> OnlyRE;
  if (!Only.empty())
    OnlyRE.emplace(Only);
  const FunctionMap &M = R->functions();
  std::vector<size_t> Selected;
  for (size_t I = 0; I < M.Functions.size(); ++I)
    if (M.Functions[I].Kind == FunctionKind::Kernel &&
        (!OnlyRE || OnlyRE->match(M.Functions[I].Name)))
      Selected.push_back(I);
  // Each kernel's allocation bounds the registers of long jumps.
  auto KR = AM.getResult<KernelsAnalysis>(Obj);
  if (!KR)
    return KR.takeError();
  DenseMap<uint64_t, std::vector<size_t>> ByEntry;
  for (size_t I = 0; I < KR->Kernels.size(); ++I)
    ByEntry[KR->Kernels[I].CodeEntry].push_back(I);
  std::vector<RegisterLimits> Limits;
  for (size_t FI : Selected)
    Limits.push_back(kernelLimits(*KR, ByEntry.lookup(M.Functions[FI].Begin)));
  std::vector<ClonePlan> Plans =
      planClones(*R, Selected, *Base, {}, false, Limits);

  size_t Proven = 0, Unproven = 0;
  StringMap<size_t> Refused;
  for (const ClonePlan &P : Plans) {
    if (!P.Code)
      ++Refused[P.Refusal.Kind];
    else if (P.Problems.empty())
      ++Proven;
    else
      ++Unproven;
  }
  std::vector<std::pair<std::string, size_t>> ByKind;
  for (const auto &E : Refused)
    ByKind.push_back({E.getKey().str(), E.getValue()});
  llvm::sort(ByKind);

  if (!Ctx.JSON) {
    raw_ostream &OS = *Ctx.Out;
    OS << "clones: " << Plans.size() << " kernels from " << hex(*Base) << ", "
       << Proven << " proven, " << Unproven << " not proven, "
       << Plans.size() - Proven - Unproven << " refused\n";
    for (const ClonePlan &P : Plans) {
      const CodeFunction &F = M.Functions[P.Function];
      OS << "kernel " << F.Name << ": ";
      if (!P.Code) {
        OS << "refused (" << P.Refusal.Kind << "): " << P.Refusal.Message
           << "\n";
        continue;
      }
      const Relocated &C = *P.Code;
      OS << hex(F.Begin) << " -> " << hex(C.Base) << ", " << C.Bytes.size()
         << " bytes, " << C.BranchesEncoded << " branches, " << C.PCRelAdjusted
         << " pc-relative adds, ";
      if (C.BranchesRelaxed)
        OS << C.BranchesRelaxed << " relaxed, ";
      OS << (P.Problems.empty() ? "proven" : "NOT proven") << "\n";
      for (const std::string &Pr : P.Problems)
        OS << "  problem: " << Pr << "\n";
    }
    for (const auto &[Kind, N] : ByKind)
      OS << "refused: " << N << " " << Kind << "\n";
    return PreservedAnalyses::all();
  }
  json::Array Kernels;
  for (const ClonePlan &P : Plans) {
    const CodeFunction &F = M.Functions[P.Function];
    json::Object K{{"name", F.Name}, {"begin", int64_t(F.Begin)}};
    if (!P.Code) {
      K["refused"] = P.Refusal.Kind;
      K["reason"] = P.Refusal.Message;
    } else {
      K["clone"] = int64_t(P.Code->Base);
      K["size"] = int64_t(P.Code->Bytes.size());
      K["branches"] = P.Code->BranchesEncoded;
      K["pc_relative_adds"] = P.Code->PCRelAdjusted;
      K["relaxed"] = P.Code->BranchesRelaxed;
      K["proven"] = P.Problems.empty();
      json::Array Problems;
      for (const std::string &Pr : P.Problems)
        Problems.push_back(Pr);
      K["problems"] = std::move(Problems);
    }
    Kernels.push_back(std::move(K));
  }
  json::Object Kinds;
  for (const auto &[Kind, N] : ByKind)
    Kinds[Kind] = int64_t(N);
  json::Value V(json::Object{{"clones", json::Object{
                                            {"base", int64_t(*Base)},
                                            {"kernels", std::move(Kernels)},
                                            {"proven", int64_t(Proven)},
                                            {"not_proven", int64_t(Unproven)},
                                            {"refused", std::move(Kinds)},
                                        }}});
  if (Ctx.JSONOut)
    Ctx.JSONOut->push_back(std::move(V));
  else
    *Ctx.Out << formatv("{0:2}", V) << "\n";
  return PreservedAnalyses::all();
}
