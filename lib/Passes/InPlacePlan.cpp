//===- lib/Passes/InPlacePlan.cpp - Sites patched in place ----------------===//

#include "hotswap/Passes/InPlacePlan.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Passes/ClonePlan.h"
#include "hotswap/Passes/PatchRecord.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/MC/MCInst.h"

#include <array>

using namespace llvm;
using namespace hotswap;

namespace {
/// The site of \p KS whose instruction cannot move to a body, and why
/// (nullopt: they all can).
std::optional<std::pair<size_t, std::string>>
cannotMove(const amdgpu::TargetMC &MC, const KernelSites &KS) {
  const code::FunctionCFG &G = KS.Code->G;
  DenseSet<uint32_t> Seen;
  for (size_t I = 0; I < KS.Sites.size(); ++I) {
    const SitePlan &S = KS.Sites[I];
    if (!S.Refusal.empty())
      continue;
    if (!Seen.insert(S.Insn).second)
      return std::pair{I, std::string("two bodies at one instruction (the "
                                      "entry's and the rule's)")};
    if (std::string Why =
            code::movableRefusal(MC, G, KS.Code->Decoded[S.Insn], S.Insn);
        !Why.empty())
      return std::pair{I, Why};
  }
  return std::nullopt;
}

/// The reason for site \p At of \p KS, said of site \p Of.
std::string reason(const KernelSites &KS, size_t At, size_t Of,
                   const std::string &Why) {
  if (At == Of)
    return Why;
  const SitePlan &S = KS.Sites[At];
  return "at another site of the kernel, +" + hex(S.Offset) + " (" + S.Text +
         "): " + Why;
}
} // namespace

Expected<InPlacePlan> hotswap::planInPlace(const Object &Obj,
                                           const amdgpu::TargetMC &MC,
                                           std::vector<KernelSites> &All,
                                           uint64_t Base, bool FarFail) {
  InPlacePlan P;
  P.Base = Base;
  P.InPlace.assign(All.size(), 0);
  P.Why.assign(All.size(), "");
  P.WhySite.assign(All.size(), 0);
  for (size_t K = 0; K < All.size(); ++K) {
    if (!All[K].applied())
      continue;
    if (!All[K].Code)
      return makeError("internal: sites planned without their code");
    if (auto Bad = cannotMove(MC, All[K])) {
      P.WhySite[K] = Bad->first;
      P.Why[K] = Bad->second;
    }
    P.InPlace[K] = P.Why[K].empty();
  }
  const bool Bug3f = MC.hasFeature("offset-3f-bug");
  // Lay the bodies out; a kernel with a site out of reach leaves, which
  // only brings the others' bodies nearer: repeat until all reach.
  for (bool Changed = true; Changed;) {
    Changed = false;
    P.Sites.clear();
    uint64_t At = Base;
    for (size_t K = 0; K < All.size(); ++K) {
      if (!P.InPlace[K])
        continue;
      const code::FunctionCFG &G = All[K].Code->G;
      for (size_t S = 0; S < All[K].Sites.size(); ++S) {
        const SitePlan &SP = All[K].Sites[S];
        if (!SP.Refusal.empty())
          continue;
        const code::Insn &I = G.Insns[SP.Insn];
        InPlaceSite IS;
        IS.Kernel = K;
        IS.Site = S;
        IS.Addr = I.Addr;
        IS.BodyAddr = At;
        const uint64_t Size =
            code::inPlaceBodySize(MC, SP.Where, I.Size, SP.Body.size());
        At += Size;
        if (!code::branchOffset(I.Addr, IS.BodyAddr, Bug3f) ||
            !code::branchOffset(IS.BodyAddr + Size - 4, I.end(), Bug3f)) {
          P.InPlace[K] = 0;
          P.WhySite[K] = S;
          P.Why[K] = "its body at " + hex(IS.BodyAddr) +
                     " is out of a branch's reach (2^15 dwords either way)";
          Changed = true;
          break;
        }
        P.Sites.push_back(std::move(IS));
      }
      if (Changed)
        break;
    }
  }
  for (InPlaceSite &IS : P.Sites) {
    const SitePlan &SP = All[IS.Kernel].Sites[IS.Site];
    const code::Insn &I = All[IS.Kernel].Code->G.Insns[SP.Insn];
    std::optional<ArrayRef<uint8_t>> Orig = Obj.bytesIfAt(I.Addr, I.Size);
    if (!Orig)
      return makeError("internal: the site at " + hex(I.Addr) +
                       " is not in the object");
    IS.Orig.assign(Orig->begin(), Orig->end());
    Expected<code::InPlaceBody> B =
        code::inPlaceBody(MC, SP.Where, I.Addr, IS.Orig, SP.Body, IS.BodyAddr);
    if (!B)
      return B.takeError();
    IS.Body = std::move(*B);
    Expected<std::vector<uint8_t>> Slot =
        code::inPlaceSlot(MC, I.Addr, I.Size, IS.BodyAddr);
    if (!Slot)
      return Slot.takeError();
    IS.Slot = std::move(*Slot);
  }
  if (FarFail)
    for (size_t K = 0; K < All.size(); ++K)
      if (!P.InPlace[K] && !P.Why[K].empty())
        for (size_t S = 0; S < All[K].Sites.size(); ++S)
          if (All[K].Sites[S].Refusal.empty())
            All[K].Sites[S].Refusal = "not patched in place (far=fail): " +
                                      reason(All[K], P.WhySite[K], S, P.Why[K]);
  return P;
}

std::string InPlacePlan::whyNot(const std::vector<KernelSites> &All,
                                size_t K) const {
  if (InPlace[K] || Why[K].empty())
    return "";
  const SitePlan &S = All[K].Sites[WhySite[K]];
  return "+" + hex(S.Offset) + " (" + S.Text + "): " + Why[K];
}

Error hotswap::placeInPlace(Object &Obj, KernelsAnalysis::Result &R,
                            const code::FunctionMap &M,
                            ArrayRef<KernelSites> All, const InPlacePlan &P) {
  if (P.Sites.empty())
    return Error::success();
  const amdgpu::TargetInfo &T = R.Target;
  std::vector<uint8_t> Bytes;
  for (const InPlaceSite &IS : P.Sites) {
    if (P.Base + Bytes.size() != IS.BodyAddr)
      return makeError("internal: the bodies are not laid out in order");
    llvm::append_range(Bytes, IS.Body.Bytes);
  }
  // The prefetch guard LLVM itself puts after code follows the bodies.
  for (unsigned G = 0; G < T.PoolGuardBytes; G += 4)
    for (unsigned B = 0; B < 4; ++B)
      Bytes.push_back(static_cast<uint8_t>(T.PadWord >> (8 * B)));
  Expected<Section &> Sec =
      code::CodeAppender(Obj).append(code::CodePurpose::SiteBodies, CloneAlign,
                                     ELF::SHF_EXECINSTR, std::move(Bytes));
  if (!Sec)
    return Sec.takeError();
  if (Sec->Addr != P.Base)
    return makeError("internal: the bodies moved from " + hex(P.Base) + " to " +
                     hex(Sec->Addr));
  std::vector<PatchRecord> Records;
  for (const InPlaceSite &IS : P.Sites) {
    Section *S = Obj.sectionForAddress(IS.Addr);
    if (!S)
      return makeError("internal: the site at " + hex(IS.Addr) +
                       " is in no section");
    if (Error E = S->overwrite(IS.Addr - S->Addr, IS.Slot))
      return E;
    const KernelSites &KS = All[IS.Kernel];
    const SitePlan &SP = KS.Sites[IS.Site];
    const code::CodeFunction &F = M.Functions[KS.Function];
    PatchRecord Rec;
    Rec.Kernel = F.Name;
    Rec.Code = F.Begin;
    Rec.Size = F.size();
    Rec.Site = IS.Addr - F.Begin;
    Rec.Orig = IS.Orig;
    Rec.Where = SP.Where;
    Rec.Body = IS.BodyAddr;
    Rec.BodySize = IS.Body.Bytes.size();
    Rec.InsertBegin = IS.Body.InsertBegin;
    Rec.InsertEnd = IS.Body.InsertEnd;
    for (const std::string &L : SP.Asm)
      Rec.Asm += (Rec.Asm.empty() ? "" : "\n") + L;
    Records.push_back(std::move(Rec));
  }
  // Descriptors growDescriptors raised (grow-sgprs, reserved pairs).
  for (size_t K = 0; K < All.size(); ++K) {
    if (!P.InPlace[K])
      continue;
    for (size_t I : All[K].Kernels) {
      const KernelInfo &KI = R.Kernels[I];
      std::array<uint8_t, amdgpu::kd::Size> KD;
      KI.KD.write(KD);
      if (Error E = KI.KDSection->overwrite(KI.KDAddr - KI.KDSection->Addr, KD))
        return prefixError("kernel '" + KI.Name + "'", std::move(E));
    }
  }
  return appendPatchRecords(Obj, Records);
}
