//===- lib/Code/SiteHazards.cpp - Hazards at the seams of inserted code ---===//

#include "hotswap/Code/SiteHazards.h"
#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/MC/MCInst.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

/// Guest instructions after a seam whose hazards are looked at: every rule
/// that counts wait states reaches fewer than NearReach instructions back
/// (5 wait states at most); the others are looked for FarReach on.
static constexpr unsigned NearReach = 8, FarReach = 64;

SeamHazards::SeamHazards(const amdgpu::TargetMC &MC, const HazardRules &Rules,
                         const FunctionCFG &G, ArrayRef<MCInst> Decoded,
                         FunctionKind Kind)
    : Rules(Rules), Orig(MC, G, Decoded, Kind), Code(Orig) {
  Succs.resize(Orig.size());
  for (uint32_t I = 0; I < Orig.size(); ++I)
    for (uint32_t P : Orig.preds(I))
      Succs[P].push_back(I);
  KnownAt.assign(Orig.size(), false);
}

std::vector<uint32_t> SeamHazards::splice(uint32_t I, SiteWhere W,
                                          ArrayRef<MCInst> Body) {
  std::vector<uint32_t> In;
  if (Body.empty())
    return In;
  // What comes before the body, and the guest instruction after it.
  SmallVector<uint32_t, 2> Before;
  std::optional<uint32_t> After;
  if (W == SiteWhere::Before) {
    llvm::append_range(Before, Code.preds(I));
    After = I;
  } else {
    if (W == SiteWhere::After)
      Before.push_back(I);
    else
      llvm::append_range(Before, Code.preds(I));
    if (I + 1 < Orig.size())
      After = I + 1;
  }
  for (const MCInst &MI : Body) {
    uint32_t X = Code.add(MI, Code.addr(I), Before,
                          "the inserted code's instruction " +
                              std::to_string(In.size() + 1));
    In.push_back(X);
    Before.assign({X});
  }
  if (After) {
    // The guest instruction after the seam comes from the body where it
    // came from the seam (Before: from its own predecessors; After and
    // Replace: from the instruction).
    SmallVector<uint32_t, 2> Ps;
    for (uint32_t P : Code.preds(*After)) {
      const bool Seam = W == SiteWhere::Before || P == I;
      if (!Seam)
        Ps.push_back(P);
    }
    Ps.push_back(In.back());
    Code.setPreds(*After, Ps);
  }
  return In;
}

std::vector<Hazard> SeamHazards::newHazards(uint32_t I, SiteWhere W,
                                            ArrayRef<uint32_t> In) {
  // Where to look: the body, and the guest instructions after the seam
  // within reach; all of them where the body tracks an SGPR pair for
  // gfx12's rule (any later write and read of it may be one).
  std::vector<uint32_t> To(In.begin(), In.end());
  bool All = false;
  if (Rules.SGPRReadAfterWrite)
    for (uint32_t X : In)
      All |= Code.facts(X).C == HazardInsn::VALU &&
             !Code.facts(X).SGPRReads.empty();
  if (All) {
    for (uint32_t J = 0; J < Orig.size(); ++J)
      To.push_back(J);
  } else {
    std::vector<uint32_t> Work;
    std::vector<bool> Seen(Orig.size());
    const uint32_t Start = W == SiteWhere::Before ? I : I + 1;
    if (Start < Orig.size()) {
      Work.push_back(Start);
      Seen[Start] = true;
    }
    const unsigned Reach = Rules.farReaching() ? FarReach : NearReach;
    for (size_t K = 0; K < Work.size() && To.size() < In.size() + Reach; ++K) {
      To.push_back(Work[K]);
      for (uint32_t S : Succs[Work[K]])
        if (!Seen[S]) {
          Seen[S] = true;
          Work.push_back(S);
        }
    }
  }
  std::vector<Hazard> Out, Found;
  for (uint32_t T : To) {
    Found.clear();
    findHazards(Code, Rules, T, Found);
    for (Hazard &H : Found) {
      auto Guest = [&](uint32_t X) {
        return X == HazardCode::None || X < Orig.size();
      };
      if (Guest(H.To) && Guest(H.From) && (!H.Origin || Guest(*H.Origin))) {
        if (!KnownAt[H.To]) {
          std::vector<Hazard> O;
          findHazards(Orig, Rules, H.To, O);
          for (const Hazard &X : O)
            Known.insert({X.Kind, X.From, X.To});
          KnownAt[H.To] = true;
        }
        if (Known.count({H.Kind, H.From, H.To}))
          continue;
      }
      Out.push_back(std::move(H));
    }
  }
  return Out;
}

/// The body instruction (an index of \p In, the body spliced) hazard \p H
/// lands on: its last part, else its first, if either is the body's.
static std::optional<uint32_t> bodyIndex(ArrayRef<uint32_t> In,
                                         const Hazard &H) {
  for (uint32_t X : {H.To, H.From})
    if (auto It = llvm::find(In, X); It != In.end())
      return uint32_t(It - In.begin());
  return std::nullopt;
}

SeamGuards SeamHazards::guards(uint32_t I, SiteWhere W, ArrayRef<MCInst> Body) {
  SeamGuards G;
  HazardCode::Mark M = Code.mark();
  std::vector<uint32_t> In = splice(I, W, Body);
  auto InBody = [&](uint32_t X) { return llvm::is_contained(In, X); };
  unsigned NopsBefore = 0, NopsAfter = 0;
  std::vector<std::string> WaitsBefore, WaitsAfter;
  for (const Hazard &H : newHazards(I, W, In)) {
    const bool ToIn = InBody(H.To), FromIn = InBody(H.From);
    const bool OriginIn = H.Origin && InBody(*H.Origin);
    std::string What = describeHazard(Code, H);
    if ((ToIn && FromIn) || H.Guard.empty() || (!ToIn && !FromIn && OriginIn)) {
      if (!G.Problem)
        G.Problem = SeamProblem{What, bodyIndex(In, H)};
      continue;
    }
    const bool Before = ToIn;
    if (H.Need) {
      unsigned &N = Before ? NopsBefore : NopsAfter;
      N = std::max(N, H.Need - std::min(H.Need, H.Have));
    } else {
      std::vector<std::string> &Ws = Before ? WaitsBefore : WaitsAfter;
      if (!llvm::is_contained(Ws, H.Guard))
        Ws.push_back(H.Guard);
    }
    G.Why.push_back(What);
  }
  Code.restore(M);
  auto Text = [](const std::vector<std::string> &Ws, unsigned Nops) {
    std::string S;
    for (const std::string &X : Ws)
      S += (S.empty() ? "" : "\n") + X;
    while (Nops) {
      unsigned K = std::min(Nops, 8u);
      S += (S.empty() ? "" : "\n") + ("s_nop " + std::to_string(K - 1));
      Nops -= K;
    }
    return S;
  };
  G.Before = Text(WaitsBefore, NopsBefore);
  G.After = Text(WaitsAfter, NopsAfter);
  return G;
}

std::optional<SeamProblem> SeamHazards::accept(uint32_t I, SiteWhere W,
                                               ArrayRef<MCInst> Body) {
  HazardCode::Mark M = Code.mark();
  std::vector<uint32_t> In = splice(I, W, Body);
  std::vector<Hazard> Hs = newHazards(I, W, In);
  if (Hs.empty())
    return std::nullopt;
  SeamProblem P{describeHazard(Code, Hs.front()), bodyIndex(In, Hs.front())};
  Code.restore(M);
  return P;
}
