//===- lib/Passes/CodeAnalysis.cpp - Decoded code, per function -----------===//

#include "hotswap/Passes/CodeAnalysis.h"

#include "hotswap/Passes/Kernels.h"
#include "hotswap/Support/Format.h"

#include "llvm/MC/MCInst.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

AnalysisKey CodeAnalysis::Key;

CodeAnalysis::Result::Result(Object &Obj, std::unique_ptr<amdgpu::TargetMC> MC,
                             FunctionMap Map, amdgpu::Generation Gen)
    : MC(std::move(MC)), Map(std::move(Map)), Gen(Gen) {
  Code.resize(this->Map.Functions.size());
  Graphs.resize(this->Map.Functions.size());
}

CodeAnalysis::Result::~Result() = default;

Expected<amdgpu::TargetMC &> CodeAnalysis::Result::workerMC(size_t Worker) {
  if (Worker == 0)
    return *MC;
  if (WorkerMCs.size() < Worker)
    WorkerMCs.resize(Worker);
  std::unique_ptr<amdgpu::TargetMC> &Slot = WorkerMCs[Worker - 1];
  if (!Slot) {
    Expected<std::unique_ptr<amdgpu::TargetMC>> New =
        amdgpu::TargetMC::create(MC->mcpu(), MC->features());
    if (!New)
      return New.takeError();
    Slot = std::move(*New);
  }
  return *Slot;
}

ArrayRef<uint8_t> CodeAnalysis::Result::bytes(const CodeFunction &F) const {
  return F.Sec->contents().slice(F.Begin - F.Sec->Addr, F.size());
}

const FunctionCFG &CodeAnalysis::Result::cfg(size_t I) {
  if (Code[I])
    return Code[I]->CFG;
  if (!Graphs[I]) {
    const CodeFunction &F = Map.Functions[I];
    Graphs[I] = std::make_unique<FunctionCFG>(buildCFG(*MC, F, bytes(F), Map));
  }
  return *Graphs[I];
}

/// \p FC's liveness and wait counts from its graph and the decoded
/// instructions (decoded once: the graph keeps no operands).
static void analyse(CodeAnalysis::FunctionCode &FC, const amdgpu::TargetMC &MC,
                    const CodeFunction &F, ArrayRef<MCInst> Decoded,
                    amdgpu::Generation Gen) {
  FC.Live = computeLiveness(MC, FC.CFG, Decoded, F.Kind, F.Wave32);
  FC.Waits = computeWaitCounts(MC, FC.CFG, Decoded, F.Kind, Gen);
}

std::unique_ptr<CodeAnalysis::FunctionCode>
CodeAnalysis::Result::computeFunction(size_t I, amdgpu::TargetMC &With) const {
  const CodeFunction &F = Map.Functions[I];
  auto FC = std::make_unique<FunctionCode>();
  std::vector<MCInst> Decoded;
  FC->CFG = buildCFG(With, F, bytes(F), Map, &Decoded);
  analyse(*FC, With, F, Decoded, Gen);
  return FC;
}

const CodeAnalysis::FunctionCode &CodeAnalysis::Result::function(size_t I) {
  if (!Code[I]) {
    if (Graphs[I]) {
      const CodeFunction &F = Map.Functions[I];
      auto FC = std::make_unique<FunctionCode>();
      FC->CFG = std::move(*Graphs[I]);
      analyse(*FC, *MC, F, decodeInsns(*MC, FC->CFG.Insns, bytes(F), F.Begin),
              Gen);
      Code[I] = std::move(FC);
    } else {
      Code[I] = computeFunction(I, *MC);
    }
    Graphs[I].reset();
  }
  return *Code[I];
}

void CodeAnalysis::Result::invalidate(size_t I) {
  if (I < Code.size()) {
    Code[I].reset();
    Graphs[I].reset();
  }
}

std::optional<std::string>
CodeAnalysis::Result::firstDifference(const Result &Fresh) const {
  const auto &A = Map.Functions, &B = Fresh.Map.Functions;
  if (A.size() != B.size())
    return "functions (" + std::to_string(A.size()) + " kept, " +
           std::to_string(B.size()) + " fresh)";
  for (size_t I = 0; I < A.size(); ++I) {
    if (A[I].Name != B[I].Name || A[I].Begin != B[I].Begin ||
        A[I].End != B[I].End || A[I].Kind != B[I].Kind)
      return "function " + std::to_string(I) + " ('" + A[I].Name + "' kept, '" +
             B[I].Name + "' fresh)";
    if (!Code[I] && !Graphs[I])
      continue;
    // A kept graph must be the one the bytes give now.
    FunctionCFG G = buildCFG(*Fresh.MC, B[I], Fresh.bytes(B[I]), Fresh.Map);
    const FunctionCFG &K = Code[I] ? Code[I]->CFG : *Graphs[I];
    if (G.Insns.size() != K.Insns.size() || G.Blocks.size() != K.Blocks.size())
      return "code of function '" + A[I].Name + "'";
  }
  return std::nullopt;
}

std::vector<KernelEntry>
hotswap::kernelEntries(const KernelsAnalysis::Result &K) {
  std::vector<KernelEntry> Entries;
  for (const KernelInfo &KI : K.Kernels)
    Entries.push_back(
        {KI.Name, KI.CodeEntry,
         K.Target.Gen >= amdgpu::Generation::GFX10 && KI.KD.isWave32(),
         K.Target.PreloadSkipsPrologue && KI.KD.kernargPreloadLength() > 0});
  return Entries;
}

Expected<std::unique_ptr<ObjectCode>>
ObjectCode::read(const Object &Obj, const KernelsAnalysis::Result &R) {
  auto C = std::make_unique<ObjectCode>();
  Expected<std::unique_ptr<amdgpu::TargetMC>> MC =
      amdgpu::TargetMC::create(R.Target.MCPU, R.Target.Features);
  if (!MC)
    return MC.takeError();
  C->MC = std::move(*MC);
  C->Map = findFunctions(Obj, kernelEntries(R), C->MC.get());
  C->Calls = std::make_unique<CallReads>(
      *C->MC, C->Map, [&Obj](const CodeFunction &F) {
        return Obj.bytesIfAt(F.Begin, F.End - F.Begin);
      });
  for (const KernelInfo &K : R.Kernels)
    C->ByName[K.Name] = &K;
  return C;
}

Expected<CodeAnalysis::Result> CodeAnalysis::run(Object &Obj,
                                                 AnalysisManager &AM) {
  auto K = AM.getResult<KernelsAnalysis>(Obj);
  if (!K)
    return K.takeError();
  Expected<std::unique_ptr<amdgpu::TargetMC>> MC =
      amdgpu::TargetMC::create(K->Target.MCPU, K->Target.Features);
  if (!MC)
    return MC.takeError();
  FunctionMap Map = findFunctions(Obj, kernelEntries(*K), MC->get());
  return Result(Obj, std::move(*MC), std::move(Map), K->Target.Gen);
}
