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
                               uint64_t OrigSize, uint64_t InsertedSize,
                               const LongJumpRegs *Back) {
  return (bodyWaitsAtEnds(MC) ? 8 : 0) + InsertedSize +
         (Where == SiteWhere::Replace ? 0 : OrigSize) +
         (Back ? relaxationSize(false, *Back) : 4);
}

Expected<InPlaceBody> code::inPlaceBody(const amdgpu::TargetMC &MC,
                                        SiteWhere Where, uint64_t Site,
                                        ArrayRef<uint8_t> Orig,
                                        ArrayRef<uint8_t> Inserted, uint64_t At,
                                        const LongJumpRegs *Back) {
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
  Expected<std::vector<uint8_t>> Return =
      Back ? relaxationCode(MC, false, *Back, At + B.Bytes.size(),
                            Site + Orig.size())
           : branchTo(MC, At + B.Bytes.size(), Site + Orig.size());
  if (!Return)
    return Return.takeError();
  llvm::append_range(B.Bytes, *Return);
  assert(B.Bytes.size() ==
             inPlaceBodySize(MC, Where, Orig.size(), Inserted.size(), Back) &&
         "inPlaceBodySize disagrees");
  return B;
}

RegSet code::jumpScratch(const RegisterModel &RM, const SiteRegisters &Free,
                         const RegSet &Named) {
  RegSet Keep = Named;
  Keep.resize(RM.numUnits());
  RM.addClass(RegClass::SCC, Keep);
  RegSet Out = Free.Scratch;
  Out &= Keep;
  return Out;
}

std::optional<LongJumpRegs> code::jumpRegisters(const RegisterModel &RM,
                                                const SiteRegisters &Free,
                                                const RegSet &Named,
                                                amdgpu::Generation Gen) {
  SiteRegisters Masked = Free;
  Masked.Scratch = jumpScratch(RM, Free, Named);
  std::optional<LongJumpRegs> R = longJumpRegisters(RM, Masked);
  // gfx12: its SALU writes waited for (Hazards.h's SGPR rule), as the
  // relaxations of a copy do.
  if (R)
    R->WaitSALU = Gen == amdgpu::Generation::GFX12;
  return R;
}

bool code::isGatewayRoom(const CodeGap &Gap, const FunctionMap &M) {
  return (Gap.Kind == GapKind::Nops || Gap.Kind == GapKind::CodeEnd ||
          Gap.Kind == GapKind::Zeros) &&
         Gap.Begin % 4 == 0 && Gap.End > Gap.Begin &&
         Gap.End - Gap.Begin < 256 && M.startingAt(Gap.End);
}

Expected<std::vector<uint8_t>> code::gatewayCode(const amdgpu::TargetMC &MC,
                                                 const LongJumpRegs &Regs,
                                                 uint64_t At, uint64_t Body) {
  return relaxationCode(MC, false, Regs, At, Body);
}

Expected<ReadRelaxation> code::readLongJump(const amdgpu::TargetMC &MC,
                                            ArrayRef<uint8_t> Bytes,
                                            uint64_t At) {
  // readRelaxation reads a long jump after the branch to it: a graph of
  // that branch (4 bytes before) and the bytes decoded.
  FunctionCFG C;
  std::vector<MCInst> Ops;
  Expected<std::vector<uint8_t>> Br = MC.assemble("s_branch 0");
  if (!Br)
    return Br.takeError();
  std::optional<amdgpu::DecodedInst> D = MC.decodeOne(*Br, At - 4);
  if (!D)
    return makeError("internal: s_branch does not decode");
  Insn B;
  B.Addr = At - 4;
  B.Size = 4;
  B.F = Flow::Jump;
  B.Target = At;
  C.Insns.push_back(B);
  Ops.push_back(D->Inst);
  DecodedRange R = decodeRange(
      MC, Bytes, At, [&](const Insn &, const MCInst &M) { Ops.push_back(M); });
  llvm::append_range(C.Insns, R.Insns);
  const uint64_t End = R.Insns.empty() ? At : R.Insns.back().end();
  if (C.Insns.size() != Ops.size() || End != At + Bytes.size())
    return makeError("the long jump at " + hex(At) + " does not decode");
  Expected<ReadRelaxation> J = readRelaxation(MC, C, Ops, 0, At + Bytes.size());
  if (!J)
    return J.takeError();
  // Byte for byte what its registers and target make (fields the decoder
  // ignores included).
  Expected<std::vector<uint8_t>> Want =
      relaxationCode(MC, false, J->Regs, At, J->Target);
  if (!Want)
    return Want.takeError();
  if (ArrayRef<uint8_t>(*Want) != Bytes)
    return makeError("the long jump at " + hex(At) +
                     " is not the code its registers and target make");
  return J;
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
                                   uint64_t Body, StringRef What) {
  if (Slot.size() < 4)
    return "the site at " + hex(Site) + " is too small for a branch";
  std::optional<std::pair<Insn, std::string>> Br =
      onlyInsn(MC, Slot.take_front(4), Site);
  if (!Br || Br->second != "S_BRANCH" || Br->first.Target != Body)
    return "the site at " + hex(Site) + " is not a branch to " + What.str() +
           " at " + hex(Body);
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
                       uint64_t InsertBegin, uint64_t InsertEnd,
                       std::optional<ReadRelaxation> *Back) {
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
  const uint64_t Return = Pos;
  const uint64_t Next = Site + Orig.size();
  if (Return >= Body.size()) {
    P.push_back(Of + "it ends before its branch back");
    return P;
  }
  // A branch back, or a long jump to the same place.
  if (Body.size() - Return == 4) {
    std::optional<std::pair<Insn, std::string>> Br =
        onlyInsn(MC, Body.slice(Return), At + Return);
    if (!Br || Br->second != "S_BRANCH" || Br->first.Target != Next)
      P.push_back(Of + "it does not end with a branch back to " + hex(Next));
    return P;
  }
  Expected<ReadRelaxation> J =
      readLongJump(MC, Body.slice(Return), At + Return);
  if (!J)
    P.push_back(Of + "it does not end with a branch back to " + hex(Next) +
                " (nor a long jump: " + toString(J.takeError()) + ")");
  else if (J->Target != Next)
    P.push_back(Of + "its long jump back reaches " + hex(J->Target) + ", not " +
                hex(Next));
  else if (!Back)
    P.push_back(Of + "it returns with a long jump, which its site does not "
                     "prove");
  else
    *Back = std::move(*J);
  return P;
}
