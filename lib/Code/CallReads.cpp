//===- lib/Code/CallReads.cpp - What a call may read ----------------------===//

#include "hotswap/Code/CallReads.h"

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Liveness.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/MC/MCInst.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

CallReads::CallReads(const amdgpu::TargetMC &MC, const FunctionMap &M,
                     BytesFn Bytes)
    : MC(MC), M(M), Bytes(std::move(Bytes)) {}

const CallReads::Summary &CallReads::summary(const CodeFunction &F) {
  auto It = Summaries.find(F.Begin);
  if (It != Summaries.end())
    return It->second;
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  Summary S{RM.emptySet(), {}, false};
  std::optional<ArrayRef<uint8_t>> B = Bytes(F);
  if (!B) {
    S.Unknown = true;
  } else {
    std::vector<MCInst> Decoded;
    FunctionCFG G = buildCFG(MC, F, *B, M, &Decoded);
    if (Decoded.size() != G.Insns.size())
      S.Unknown = true;
    for (const CodeFinding &Fd : G.Findings)
      S.Unknown |= Fd.Blocking;
    for (const CallSite &C : G.Calls) {
      if (!C.Target || !M.startingAt(*C.Target))
        S.Unknown = true;
      else
        S.Callees.push_back(*C.Target);
    }
    if (!S.Unknown)
      for (const MCInst &MI : Decoded)
        for (uint16_t U : instructionRegs(MC, MI, F.Wave32).Uses)
          S.Uses.set(U);
  }
  return Summaries.try_emplace(F.Begin, std::move(S)).first->second;
}

std::optional<RegSet> CallReads::of(uint64_t Entry) {
  auto It = Results.find(Entry);
  if (It != Results.end())
    return It->second;
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  std::optional<RegSet> Out = RM.emptySet();
  // Every function reachable through calls from Entry, once.
  DenseSet<uint64_t> Seen{Entry};
  std::vector<uint64_t> Work{Entry};
  while (!Work.empty() && Out) {
    uint64_t At = Work.back();
    Work.pop_back();
    const CodeFunction *F = M.startingAt(At);
    if (!F) {
      Out.reset();
      break;
    }
    const Summary &S = summary(*F);
    if (S.Unknown) {
      Out.reset();
      break;
    }
    *Out |= S.Uses;
    for (uint64_t C : S.Callees)
      if (Seen.insert(C).second)
        Work.push_back(C);
  }
  Results[Entry] = Out;
  return Out;
}
