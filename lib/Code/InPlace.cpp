//===- lib/Code/InPlace.cpp - Code run from a site, in place --------------===//

#include "hotswap/Code/InPlace.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/MC/MCInst.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

namespace {
constexpr StringLiteral StoreWait = "s_waitcnt_vscnt null, 0x0";

Expected<std::vector<uint8_t>> branchTo(const amdgpu::TargetMC &MC,
                                        uint64_t From, uint64_t To) {
  std::optional<int16_t> Off =
      branchOffset(From, To, MC.hasFeature("offset-3f-bug"));
  if (!Off)
    return makeError("a branch at " + hex(From) + " does not reach " + hex(To));
  return MC.assemble("s_branch " + std::to_string(*Off));
}

/// The one instruction of \p Bytes at \p At, if it is exactly one.
std::optional<std::pair<Insn, std::string>>
onlyInsn(const amdgpu::TargetMC &MC, ArrayRef<uint8_t> Bytes, uint64_t At) {
  std::optional<std::pair<Insn, std::string>> Out;
  unsigned N = 0;
  DecodedRange R =
      decodeRange(MC, Bytes, At, [&](const Insn &I, const MCInst &M) {
        ++N;
        Out = {I, InsnKinds::get(MC.instrInfo()).baseName(I.Opcode).str()};
        (void)M;
      });
  if (N != 1 || R.Insns.size() != 1 || R.Insns[0].Size != Bytes.size())
    return std::nullopt;
  return Out;
}
} // namespace

std::optional<int16_t> code::branchOffset(uint64_t From, uint64_t To,
                                          bool Offset3fBug) {
  const int64_t Dist = static_cast<int64_t>(To - (From + 4));
  if (Dist % 4 || !isInt<18>(Dist))
    return std::nullopt;
  const int64_t Words = Dist / 4;
  // gfx1010's erratum: a branch of exactly 0x3f dwords goes wrong (LLVM
  // pads such branches with an s_nop).
  if (Offset3fBug && Words == 0x3f)
    return std::nullopt;
  return static_cast<int16_t>(Words);
}

std::string code::movableRefusal(const amdgpu::TargetMC &MC,
                                 const FunctionCFG &G, const MCInst &MI,
                                 uint32_t I) {
  const Insn &In = G.Insns[I];
  if (In.F != Flow::Next)
    return "its instruction is control flow (" + flowName(In.F).str() +
           "), which a body elsewhere would change";
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  StringRef Name = K.baseName(MI.getOpcode());
  if (Name == "S_GETPC_B64")
    return "its instruction reads the PC, which a body elsewhere would change";
  // Instructions that say something of the instructions after them.
  if (Name == "S_CLAUSE" || Name == "S_DELAY_ALU")
    return "its instruction applies to the instructions after it, which a "
           "body elsewhere would change";
  return "";
}

bool code::bodyWaitsAtEnds(const amdgpu::TargetMC &MC) {
  return MC.hasFeature("lds-branch-vmem-war-hazard");
}

uint64_t code::inPlaceBodySize(const amdgpu::TargetMC &MC, SiteWhere Where,
                               uint64_t OrigSize, uint64_t InsertedSize) {
  return (bodyWaitsAtEnds(MC) ? 8 : 0) + InsertedSize +
         (Where == SiteWhere::Replace ? 0 : OrigSize) + 4;
}

Expected<InPlaceBody> code::inPlaceBody(const amdgpu::TargetMC &MC,
                                        SiteWhere Where, uint64_t Site,
                                        ArrayRef<uint8_t> Orig,
                                        ArrayRef<uint8_t> Inserted,
                                        uint64_t At) {
  std::vector<uint8_t> Wait;
  if (bodyWaitsAtEnds(MC)) {
    Expected<std::vector<uint8_t>> W = MC.assemble(StoreWait);
    if (!W)
      return W.takeError();
    Wait = std::move(*W);
  }
  InPlaceBody B;
  llvm::append_range(B.Bytes, Wait);
  if (Where == SiteWhere::After) {
    B.OrigAt = B.Bytes.size();
    llvm::append_range(B.Bytes, Orig);
  }
  B.InsertBegin = B.Bytes.size();
  llvm::append_range(B.Bytes, Inserted);
  B.InsertEnd = B.Bytes.size();
  if (Where == SiteWhere::Before) {
    B.OrigAt = B.Bytes.size();
    llvm::append_range(B.Bytes, Orig);
  }
  llvm::append_range(B.Bytes, Wait);
  Expected<std::vector<uint8_t>> Back =
      branchTo(MC, At + B.Bytes.size(), Site + Orig.size());
  if (!Back)
    return Back.takeError();
  llvm::append_range(B.Bytes, *Back);
  assert(B.Bytes.size() ==
             inPlaceBodySize(MC, Where, Orig.size(), Inserted.size()) &&
         "inPlaceBodySize disagrees");
  return B;
}

Expected<std::vector<uint8_t>> code::inPlaceSlot(const amdgpu::TargetMC &MC,
                                                 uint64_t Site, uint64_t Size,
                                                 uint64_t Body) {
  Expected<std::vector<uint8_t>> B = branchTo(MC, Site, Body);
  if (!B)
    return B.takeError();
  Expected<std::vector<uint8_t>> Nop = MC.assemble("s_nop 0");
  if (!Nop)
    return Nop.takeError();
  if (Size % 4 || Size < B->size())
    return makeError("a site of " + Twine(Size) + " bytes holds no branch");
  while (B->size() < Size)
    llvm::append_range(*B, *Nop);
  return B;
}

std::string code::checkInPlaceSlot(const amdgpu::TargetMC &MC,
                                   ArrayRef<uint8_t> Slot, uint64_t Site,
                                   uint64_t Body) {
  if (Slot.size() < 4)
    return "the site at " + hex(Site) + " is too small for a branch";
  std::optional<std::pair<Insn, std::string>> Br =
      onlyInsn(MC, Slot.take_front(4), Site);
  if (!Br || Br->second != "S_BRANCH" || Br->first.Target != Body)
    return "the site at " + hex(Site) + " is not a branch to its body at " +
           hex(Body);
  // The rest never runs; it is s_nop 0, as inPlaceSlot writes it.
  Expected<std::vector<uint8_t>> Nop = MC.assemble("s_nop 0");
  if (!Nop)
    return toString(Nop.takeError());
  for (uint64_t Off = 4; Off < Slot.size(); Off += 4)
    if (Slot.slice(Off, 4) != ArrayRef<uint8_t>(*Nop))
      return "the site at " + hex(Site) +
             " holds more than its branch: " + hex(Site + Off) +
             " is not s_nop 0";
  return "";
}

std::vector<std::string>
code::checkInPlaceBody(const amdgpu::TargetMC &MC, SiteWhere Where,
                       uint64_t Site, ArrayRef<uint8_t> Orig,
                       ArrayRef<uint8_t> Body, uint64_t At,
                       uint64_t InsertBegin, uint64_t InsertEnd) {
  std::vector<std::string> P;
  const std::string Of =
      "the body at " + hex(At) + " of the site at " + hex(Site) + ": ";
  if (InsertBegin > InsertEnd || InsertEnd > Body.size()) {
    P.push_back(Of + "its inserted code lies outside it");
    return P;
  }
  // Cut the body into the parts its layout has, each checked.
  uint64_t Pos = 0;
  auto Take = [&](uint64_t N) -> std::optional<ArrayRef<uint8_t>> {
    if (N > Body.size() - Pos)
      return std::nullopt;
    ArrayRef<uint8_t> R = Body.slice(Pos, N);
    Pos += N;
    return R;
  };
  auto Wait = [&](StringRef Which) {
    if (!bodyWaitsAtEnds(MC))
      return;
    uint64_t W = Pos;
    std::optional<ArrayRef<uint8_t>> B = Take(4);
    Expected<std::vector<uint8_t>> Want = MC.assemble(StoreWait);
    if (!Want) {
      P.push_back(Of + toString(Want.takeError()));
      return;
    }
    if (!B || *B != ArrayRef<uint8_t>(*Want))
      P.push_back(Of + Which.str() + " at " + hex(At + W) + " is not '" +
                  StoreWait.str() + "' (the LDS / branch / VMEM hazard)");
  };
  auto OrigHere = [&] {
    uint64_t O = Pos;
    std::optional<ArrayRef<uint8_t>> B = Take(Orig.size());
    if (!B || *B != Orig)
      P.push_back(Of + "the site's instruction is not at " + hex(At + O));
  };
  Wait("its first instruction");
  if (Where == SiteWhere::After)
    OrigHere();
  if (Pos != InsertBegin)
    P.push_back(Of + "its inserted code does not start at " + hex(At + Pos));
  Pos = InsertEnd;
  if (Where == SiteWhere::Before)
    OrigHere();
  Wait("the instruction before its branch back");
  uint64_t Back = Pos;
  std::optional<ArrayRef<uint8_t>> B = Take(4);
  std::optional<std::pair<Insn, std::string>> Br;
  if (B)
    Br = onlyInsn(MC, *B, At + Back);
  if (!Br || Br->second != "S_BRANCH" || Br->first.Target != Site + Orig.size())
    P.push_back(Of + "it does not end with a branch back to " +
                hex(Site + Orig.size()));
  else if (Pos != Body.size())
    P.push_back(Of + "it holds bytes after its branch back");
  return P;
}
