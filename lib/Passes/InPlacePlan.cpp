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

Expected<InPlacePlan> hotswap::planInPlace(Object &Obj,
                                           const amdgpu::TargetMC &MC,
                                           const code::FunctionMap &M,
                                           std::vector<KernelSites> &All,
                                           bool FarFail) {
  // The bodies go first in the run's appended code, nearest the code.
  Expected<uint64_t> Base = code::CodeAppender(Obj).nextAddress(CloneAlign);
  if (!Base)
    return Base.takeError();
  InPlacePlan P;
  P.Base = *Base;
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
  // Padding between functions a gateway may take: s_nop, s_code_end or
  // zero words that align the function after them (never the tail after
  // the last one).
  struct Room {
    uint64_t Begin, End, Used;
  };
  std::vector<Room> Rooms;
  for (const code::CodeGap &Gap : M.Gaps)
    if (code::isGatewayRoom(Gap, M))
      Rooms.push_back({Gap.Begin, Gap.End, 0});
  llvm::sort(Rooms,
             [](const Room &A, const Room &B) { return A.Begin < B.Begin; });
  // Room for \p Size bytes of a gateway the site at \p Site reaches, the
  // nearest there is; nullopt when none.
  auto TakeRoom = [&](uint64_t Site, uint64_t Size) -> std::optional<uint64_t> {
    constexpr uint64_t Reach = uint64_t(1) << 17;
    auto Fits = [&](const Room &R) {
      return R.End - R.Begin - R.Used >= Size &&
             code::branchOffset(Site, R.Begin + R.Used, Bug3f);
    };
    const size_t At = llvm::lower_bound(Rooms, Site,
                                        [](const Room &R, uint64_t A) {
                                          return R.Begin < A;
                                        }) -
                      Rooms.begin();
    Room *Best = nullptr;
    uint64_t Dist = ~uint64_t(0);
    for (size_t J = At; J < Rooms.size() && Rooms[J].Begin - Site <= Reach; ++J)
      if (Fits(Rooms[J])) {
        Best = &Rooms[J];
        Dist = Rooms[J].Begin + Rooms[J].Used - Site;
        break;
      }
    for (size_t J = At; J-- > 0 && Site - Rooms[J].End <= Reach;)
      if (Fits(Rooms[J])) {
        if (Site - (Rooms[J].Begin + Rooms[J].Used) < Dist)
          Best = &Rooms[J];
        break;
      }
    if (!Best)
      return std::nullopt;
    const uint64_t Gw = Best->Begin + Best->Used;
    Best->Used += Size;
    return Gw;
  };
  // Which sites reach their body only through a gateway (by kernel, site).
  std::vector<std::vector<char>> Far(All.size());
  for (size_t K = 0; K < All.size(); ++K)
    Far[K].assign(All[K].Sites.size(), 0);
  auto Leave = [&](size_t K, size_t S, std::string Why) {
    P.InPlace[K] = 0;
    P.WhySite[K] = S;
    P.Why[K] = std::move(Why);
  };
  // Lay the bodies out. A site out of its body's reach takes a gateway
  // (its body grows by the long jump back, so the layout is made again);
  // a kernel with a site that takes none leaves, which only brings the
  // others' bodies nearer. Repeat until nothing changes.
  for (bool Changed = true; Changed;) {
    Changed = false;
    P.Sites.clear();
    uint64_t At = P.Base;
    bool Left = false;
    for (size_t K = 0; K < All.size() && !Left; ++K) {
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
        const code::LongJumpRegs *Back = Far[K][S] ? &*SP.ReturnRegs : nullptr;
        const uint64_t Size =
            code::inPlaceBodySize(MC, SP.Where, I.Size, SP.Body.size(), Back);
        At += Size;
        if (!Far[K][S] &&
            (!code::branchOffset(I.Addr, IS.BodyAddr, Bug3f) ||
             !code::branchOffset(IS.BodyAddr + Size - 4, I.end(), Bug3f))) {
          // Every site out of reach in this layout takes a gateway at
          // once (the layout only grows by it, so none comes back in
          // reach): a few rounds, not one per site.
          Changed = true;
          if (SP.GatewayRegs && SP.ReturnRegs) {
            Far[K][S] = 1;
            continue;
          }
          Leave(K, S,
                "its body at " + hex(IS.BodyAddr) +
                    " is out of a branch's reach (2^15 dwords either way), "
                    "and no registers are free for a gateway there");
          Left = true;
          break;
        }
        P.Sites.push_back(std::move(IS));
      }
    }
    if (Changed)
      continue;
    // Gateways, in padding within reach of their sites.
    for (Room &R : Rooms)
      R.Used = 0;
    for (InPlaceSite &IS : P.Sites) {
      const SitePlan &SP = All[IS.Kernel].Sites[IS.Site];
      if (!Far[IS.Kernel][IS.Site])
        continue;
      const uint64_t Size = relaxationSize(false, *SP.GatewayRegs);
      std::optional<uint64_t> Gw = TakeRoom(IS.Addr, Size);
      if (!Gw) {
        Leave(IS.Kernel, IS.Site,
              "its body is out of a branch's reach (2^15 dwords either "
              "way), and no padding within reach has room for a gateway");
        Changed = true;
        break;
      }
      IS.Gateway = *Gw;
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
    const code::LongJumpRegs *Back = IS.Gateway ? &*SP.ReturnRegs : nullptr;
    Expected<code::InPlaceBody> B = code::inPlaceBody(
        MC, SP.Where, I.Addr, IS.Orig, SP.Body, IS.BodyAddr, Back);
    if (!B)
      return B.takeError();
    IS.Body = std::move(*B);
    if (IS.Gateway) {
      Expected<std::vector<uint8_t>> Gw =
          code::gatewayCode(MC, *SP.GatewayRegs, *IS.Gateway, IS.BodyAddr);
      if (!Gw)
        return Gw.takeError();
      IS.GatewayBytes = std::move(*Gw);
    }
    Expected<std::vector<uint8_t>> Slot = code::inPlaceSlot(
        MC, I.Addr, I.Size, IS.Gateway ? *IS.Gateway : IS.BodyAddr);
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
    if (IS.Gateway) {
      Section *GS = Obj.sectionForAddress(*IS.Gateway);
      if (!GS)
        return makeError("internal: the gateway at " + hex(*IS.Gateway) +
                         " is in no section");
      if (Error E = GS->overwrite(*IS.Gateway - GS->Addr, IS.GatewayBytes))
        return E;
    }
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
    if (IS.Gateway) {
      Rec.Gateway = *IS.Gateway;
      Rec.GatewaySize = IS.GatewayBytes.size();
    }
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
