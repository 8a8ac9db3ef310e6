//===- lib/Passes/ClonePlan.cpp - print<clones>
//------------------------------===//

#include "hotswap/Passes/ClonePlan.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Code/RelocationProof.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Pass/PipelineParser.h"
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

std::vector<ClonePlan> hotswap::planClones(CodeAnalysis::Result &R,
                                           ArrayRef<size_t> Functions,
                                           uint64_t Base) {
  const FunctionMap &M = R.functions();
  amdgpu::TargetMC &MC = R.mc();
  std::vector<ClonePlan> Plans;
  // Each kernel's graph and decoded instructions, kept for the proof.
  struct Kept {
    FunctionCFG G;
    std::vector<MCInst> Decoded;
  };
  std::vector<Kept> Graphs;
  uint64_t At = Base;
  for (size_t I : Functions) {
    const CodeFunction &F = M.Functions[I];
    Kept K;
    K.G = buildCFG(MC, F, R.bytes(F), M, &K.Decoded);
    ClonePlan P;
    P.Function = I;
    RelocationResult RR = relocate(MC, K.G, K.Decoded, R.bytes(F), At);
    P.Refusal = std::move(RR.Refusal);
    if (RR.Code) {
      At = alignTo(At + RR.Code->Bytes.size(), CloneAlign);
      P.OffsetMap = cloneOffsetMap(K.G, *RR.Code);
      P.Code = std::move(RR.Code);
    }
    Plans.push_back(std::move(P));
    Graphs.push_back(std::move(K));
  }
  // The proof reads the copies as functions of their own, beside the
  // originals, in one map.
  FunctionMap WithCopies = M;
  for (const ClonePlan &P : Plans) {
    if (!P.Code)
      continue;
    CodeFunction C = M.Functions[P.Function];
    C.Name += ".clone";
    C.Sec = nullptr;
    C.Begin = P.Code->Base;
    C.End = P.Code->Base + P.Code->Bytes.size();
    WithCopies.Functions.push_back(std::move(C));
  }
  size_t Copy = M.Functions.size();
  for (size_t I = 0; I < Plans.size(); ++I) {
    ClonePlan &P = Plans[I];
    if (!P.Code)
      continue;
    const CodeFunction &F = M.Functions[P.Function];
    RelocationProofResult Proof = proveRelocation(
        MC, Graphs[I].G, Graphs[I].Decoded, R.bytes(F), WithCopies,
        WithCopies.Functions[Copy++], P.Code->Bytes, P.Code->insertedRanges());
    P.Problems = std::move(Proof.Problems);
  }
  return Plans;
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
  std::vector<ClonePlan> Plans = planClones(*R, Selected, *Base);

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
         << " pc-relative adds, "
         << (P.Problems.empty() ? "proven" : "NOT proven") << "\n";
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
