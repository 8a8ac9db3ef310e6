//===- lib/AMDGPU/StubEncoder.cpp - Kernel-entry stub encoding ------------===//
//
// Builds stubs from MC-assembled templates (one per form and register,
// literal fields zero; StubBodyWords gives them without starting MC
// where it knows them) by patching the literal dwords per kernel, and
// recognizes stubs by decoding them with the MC disassembler and emulating
// getpc/add/addc/setpc or s_branch.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/StubBodyWords.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCExpr.h"
#include "llvm/Support/Endian.h"

#include <cstring>

using namespace llvm;
using namespace llvm::support;

namespace hotswap {
namespace amdgpu {

namespace {

uint32_t read32(ArrayRef<uint8_t> B, uint64_t Off) {
  return endian::read32le(B.data() + Off);
}

void write32(uint8_t *P, uint32_t V) { endian::write32le(P, V); }

std::string pairName(StubSpec::RegKind Form, unsigned N) {
  if (Form == StubSpec::VCC)
    return "vcc";
  return "s[" + utostr(N) + ":" + utostr(N + 1) + "]";
}

std::string loName(StubSpec::RegKind Form, unsigned N) {
  return Form == StubSpec::VCC ? "vcc_lo" : "s" + utostr(N);
}

std::string hiName(StubSpec::RegKind Form, unsigned N) {
  return Form == StubSpec::VCC ? "vcc_hi" : "s" + utostr(N + 1);
}

constexpr unsigned ShortKey = ~0u;
constexpr unsigned VCCKey = ~0u - 1;

unsigned templateKey(StubSpec::RegKind Form, unsigned SGPR) {
  switch (Form) {
  case StubSpec::Short:
    return ShortKey;
  case StubSpec::VCC:
    return VCCKey;
  case StubSpec::SGPRPair:
    return SGPR;
  }
  return ShortKey;
}

/// Byte offsets where \p A and \p B differ.
std::vector<unsigned> diffOffsets(ArrayRef<uint8_t> A, ArrayRef<uint8_t> B) {
  std::vector<unsigned> D;
  for (unsigned I = 0; I < A.size(); ++I)
    if (A[I] != B[I])
      D.push_back(I);
  return D;
}

/// Whether \p D is exactly the bytes [Off, Off+Len) for each (Off, Len).
bool diffIsExactly(ArrayRef<unsigned> D,
                   ArrayRef<std::pair<unsigned, unsigned>> Fields) {
  std::vector<unsigned> Want;
  for (auto [Off, Len] : Fields)
    for (unsigned I = 0; I < Len; ++I)
      Want.push_back(Off + I);
  return std::vector<unsigned>(D.begin(), D.end()) == Want;
}

} // namespace

//===----------------------------------------------------------------------===//
// Encoder
//===----------------------------------------------------------------------===//

StubEncoder::~StubEncoder() = default;

Expected<std::unique_ptr<StubEncoder>>
StubEncoder::create(const TargetInfo &TI, TargetMC &MC,
                    std::vector<uint8_t> PrologueBytes) {
  return create(
      TI, [&MC]() -> Expected<TargetMC &> { return MC; },
      std::move(PrologueBytes));
}

Expected<std::unique_ptr<StubEncoder>>
StubEncoder::create(const TargetInfo &TI, MCSource GetMC,
                    std::vector<uint8_t> PrologueBytes) {
  if (TI.MCPU.empty())
    return makeError("target has no processor name for MC");
  if (TI.GetPC.empty() || TI.SetPC.empty() || TI.AddLo.empty() ||
      TI.AddHi.empty())
    return makeError("target " + TI.MCPU + " lacks stub mnemonics");
  if (PrologueBytes.size() % 4 != 0)
    return makeError("stub prologue size " + utostr(PrologueBytes.size()) +
                     " is not a multiple of 4");
  if (PrologueBytes.size() + LongBodySize > StubSlotSize)
    return makeError("stub prologue of " + utostr(PrologueBytes.size()) +
                     " bytes leaves no room for the jump in 256 bytes");
  std::unique_ptr<StubEncoder> E(
      new StubEncoder(TI, std::move(PrologueBytes), std::move(GetMC)));
  E->HasOffset3fBug = TI.HasOffset3fBug;
  // Build the templates every kernel can use now, so a target MC cannot
  // handle fails here rather than in the middle of a rewrite.
  for (StubSpec::RegKind Form : {StubSpec::Short, StubSpec::VCC})
    if (auto T = E->getTemplate(Form, 0); !T)
      return T.takeError();
  return std::move(E);
}

std::string StubEncoder::longFormAsm(StubSpec::RegKind Form, unsigned SGPR,
                                     uint32_t Lo, uint32_t Hi) const {
  std::string Pair = pairName(Form, SGPR);
  std::string S;
  S += TI.GetPC + " " + Pair + "\n";
  S += TI.AddLo + " " + loName(Form, SGPR) + ", " + loName(Form, SGPR) +
       ", lit(" + hex(Lo) + ")\n";
  S += TI.AddHi + " " + hiName(Form, SGPR) + ", " + hiName(Form, SGPR) +
       ", lit(" + hex(Hi) + ")\n";
  S += TI.SetPC + " " + Pair + "\n";
  return S;
}

std::string StubEncoder::shortFormAsm(int16_t SImm16) const {
  return "s_branch " + itostr(SImm16) + "\n";
}

Expected<StubEncoder::Template>
StubEncoder::buildTemplate(StubSpec::RegKind Form, unsigned SGPR) const {
  Template T;
  if (Form != StubSpec::Short) {
    T.LoOffset = 8;
    T.HiOffset = 16;
  }
  if (std::optional<std::vector<uint8_t>> Body =
          stubBodyWords(TI, Form, SGPR)) {
    T.Bytes = std::move(*Body);
    return T;
  }
  Expected<TargetMC &> MC = GetMC();
  if (!MC)
    return MC.takeError();
  if (Form == StubSpec::Short) {
    auto Zero = MC->assemble(shortFormAsm(0));
    if (!Zero)
      return Zero.takeError();
    auto Other = MC->assemble(shortFormAsm(-21555)); // 0xabcd
    if (!Other)
      return Other.takeError();
    if (Zero->size() != ShortBodySize || Other->size() != ShortBodySize ||
        !diffIsExactly(diffOffsets(*Zero, *Other), {{0, 2}}) ||
        endian::read16le(Other->data()) != 0xabcd)
      return makeError("unexpected s_branch encoding on " + TI.MCPU);
    T.Bytes = std::move(*Zero);
    return T;
  }

  // Assemble with zero literals and with distinctive ones; the difference
  // locates the literal dwords, which must be the trailing dwords of the two
  // 8-byte SOP2 instructions after the 4-byte getpc.
  const uint32_t Lo = 0x89abcdef, Hi = 0x76543210;
  auto Zero = MC->assemble(longFormAsm(Form, SGPR, 0, 0));
  if (!Zero)
    return Zero.takeError();
  auto Other = MC->assemble(longFormAsm(Form, SGPR, Lo, Hi));
  if (!Other)
    return Other.takeError();
  if (Zero->size() != LongBodySize || Other->size() != LongBodySize ||
      !diffIsExactly(diffOffsets(*Zero, *Other),
                     {{T.LoOffset, 4}, {T.HiOffset, 4}}) ||
      read32(*Other, T.LoOffset) != Lo || read32(*Other, T.HiOffset) != Hi)
    return makeError("unexpected long stub encoding on " + TI.MCPU + " for " +
                     pairName(Form, SGPR) + " (" + utostr(Zero->size()) +
                     " bytes)");
  T.Bytes = std::move(*Zero);
  return T;
}

Expected<const StubEncoder::Template *>
StubEncoder::getTemplate(StubSpec::RegKind Form, unsigned SGPR) const {
  unsigned Key = templateKey(Form, SGPR);
  auto It = Templates.find(Key);
  if (It != Templates.end())
    return &It->second;
  auto T = buildTemplate(Form, SGPR);
  if (!T)
    return T.takeError();
  return &Templates.emplace(Key, std::move(*T)).first->second;
}

std::optional<int16_t> StubEncoder::branchOffset(uint64_t StubAddr,
                                                 uint64_t Target) const {
  uint64_t Next = StubAddr + Prologue.size() + ShortBodySize;
  int64_t D = static_cast<int64_t>(Target - Next);
  if (D % 4 != 0)
    return std::nullopt;
  int64_t Q = D / 4;
  if (Q < INT16_MIN || Q > INT16_MAX)
    return std::nullopt;
  // GFX10.1 hardware mis-executes a branch whose offset is 0x3f; LLVM
  // relaxes such branches by inserting an s_nop.
  if (HasOffset3fBug && Q == 0x3f)
    return std::nullopt;
  return static_cast<int16_t>(Q);
}

bool StubEncoder::shortFormReaches(uint64_t StubAddr, uint64_t Target) const {
  return branchOffset(StubAddr, Target).has_value();
}

Error StubEncoder::checkSpec(const StubSpec &Spec) const {
  if (Spec.StubAddr % StubSlotSize != 0)
    return makeError("stub address " + hex(Spec.StubAddr) +
                     " is not 256-byte aligned");
  uint64_t Size = stubSize(Spec.Dual);
  if (Spec.StubAddr + (Size - 1) < Spec.StubAddr)
    return makeError("stub at " + hex(Spec.StubAddr) +
                     " wraps around the address space");
  switch (Spec.Form) {
  case StubSpec::Short:
  case StubSpec::VCC:
    return Error::success();
  case StubSpec::SGPRPair:
    if (Spec.SGPR % 2 != 0)
      return makeError("stub scratch pair must start at an even SGPR, not s" +
                       utostr(Spec.SGPR));
    if (TI.AddressableSGPRs != 0 && Spec.SGPR + 1 >= TI.AddressableSGPRs)
      return makeError("stub scratch pair s[" + utostr(Spec.SGPR) + ":" +
                       utostr(Spec.SGPR + 1) + "] is beyond the " +
                       utostr(TI.AddressableSGPRs) + " addressable SGPRs of " +
                       TI.MCPU);
    return Error::success();
  }
  return makeError("unknown stub form");
}

Error StubEncoder::encodeHalf(const StubSpec &Spec, uint64_t HalfAddr,
                              uint64_t Target, uint8_t *Out) const {
  // No memcpy: an empty prologue has a null data() (UB for memcpy).
  llvm::copy(Prologue, Out);
  uint8_t *Body = Out + Prologue.size();
  auto TOrErr = getTemplate(Spec.Form, Spec.SGPR);
  if (!TOrErr)
    return TOrErr.takeError();
  const Template &T = **TOrErr;
  std::memcpy(Body, T.Bytes.data(), T.Bytes.size());

  if (Spec.Form == StubSpec::Short) {
    std::optional<int16_t> Off = branchOffset(HalfAddr, Target);
    if (!Off)
      return makeError("s_branch at " + hex(HalfAddr + Prologue.size()) +
                       " cannot reach " + hex(Target));
    endian::write16le(Body, static_cast<uint16_t>(*Off));
    return Error::success();
  }
  // getpc yields the address of the add, which follows the 4-byte getpc.
  uint64_t AddAddr = HalfAddr + Prologue.size() + 4;
  uint64_t Delta = Target - AddAddr;
  write32(Body + T.LoOffset, static_cast<uint32_t>(Delta));
  write32(Body + T.HiOffset, static_cast<uint32_t>(Delta >> 32));
  return Error::success();
}

Expected<std::vector<uint8_t>> StubEncoder::encode(const StubSpec &Spec) const {
  if (Error E = checkSpec(Spec))
    return std::move(E);
  unsigned Halves = Spec.Dual ? 2 : 1;
  std::vector<uint8_t> Out(Halves * StubSlotSize);
  for (uint64_t Off = 0; Off < Out.size(); Off += 4)
    write32(Out.data() + Off, TI.PadWord);
  for (unsigned H = 0; H < Halves; ++H)
    if (Error E = encodeHalf(Spec, Spec.StubAddr + H * StubSlotSize,
                             Spec.Target + H * StubSlotSize,
                             Out.data() + H * StubSlotSize))
      return std::move(E);
  return Out;
}

//===----------------------------------------------------------------------===//
// Decoder
//===----------------------------------------------------------------------===//

namespace {

struct StubOpcodes {
  unsigned GetPC, SetPC, AddLo, AddHi, Branch;
};

Expected<StubOpcodes> stubOpcodes(const TargetInfo &TI, const TargetMC &MC) {
  StubOpcodes O;
  std::pair<unsigned *, std::string> Wanted[] = {
      {&O.GetPC, TI.GetPC + " s[0:1]"},
      {&O.SetPC, TI.SetPC + " s[0:1]"},
      {&O.AddLo, TI.AddLo + " s0, s0, lit(0x0)"},
      {&O.AddHi, TI.AddHi + " s1, s1, lit(0x0)"},
      {&O.Branch, "s_branch 0"}};
  for (auto &[Slot, Text] : Wanted) {
    auto OpcOrErr = MC.decodedOpcodeOf(Text);
    if (!OpcOrErr)
      return OpcOrErr.takeError();
    *Slot = *OpcOrErr;
  }
  return O;
}

/// The register pair of a long-form stub.
struct Pair {
  StubSpec::RegKind Form;
  unsigned N;
  std::string Lo, Hi; // LLVM register names of the halves
};

std::optional<Pair> parsePair(StringRef Name, unsigned AddressableSGPRs) {
  if (Name == "VCC")
    return Pair{StubSpec::VCC, 0, "VCC_LO", "VCC_HI"};
  auto [A, B] = Name.split('_');
  unsigned NA, NB;
  if (!A.consume_front("SGPR") || !B.consume_front("SGPR") ||
      A.getAsInteger(10, NA) || B.getAsInteger(10, NB) || NB != NA + 1 ||
      NA % 2 != 0)
    return std::nullopt;
  if (AddressableSGPRs != 0 && NB >= AddressableSGPRs)
    return std::nullopt;
  return Pair{StubSpec::SGPRPair, NA, "SGPR" + utostr(NA), "SGPR" + utostr(NB)};
}

/// The literal of an add that computes Reg = Reg + literal, where Reg is
/// named \p RegName in both the destination and one source, and the other
/// source is a 32-bit literal (hence an 8-byte instruction). The value comes
/// from the operand MC decoded.
std::optional<uint32_t> addLiteral(const TargetMC &MC, const DecodedInst &D,
                                   StringRef RegName) {
  const MCInst &I = D.Inst;
  if (D.Size != 8 || I.getNumOperands() != 3 || !I.getOperand(0).isReg() ||
      MC.regName(I.getOperand(0).getReg()) != RegName)
    return std::nullopt;
  const MCOperand *Lit = nullptr;
  for (unsigned Src : {1u, 2u}) {
    const MCOperand &Other = I.getOperand(Src == 1 ? 2 : 1);
    if (Other.isReg() && MC.regName(Other.getReg()) == RegName)
      Lit = &I.getOperand(Src);
  }
  if (!Lit)
    return std::nullopt;
  if (Lit->isImm())
    return static_cast<uint32_t>(Lit->getImm());
  // LLVM 22 decodes a literal as the expression lit(value).
  int64_t V;
  if (Lit->isExpr() && Lit->getExpr()->evaluateAsAbsolute(V))
    return static_cast<uint32_t>(V);
  return std::nullopt;
}

Expected<std::optional<DecodedStub>>
decodeHalf(const TargetInfo &TI, const TargetMC &MC, ArrayRef<uint8_t> Bytes,
           uint64_t Addr, ArrayRef<uint8_t> Prologue) {
  using Result = std::optional<DecodedStub>;
  // Cheap checks on raw bytes first.
  if (Bytes.size() < StubSlotSize || Prologue.size() % 4 != 0 ||
      Prologue.size() + 4 > StubSlotSize ||
      Bytes.take_front(Prologue.size()) != Prologue)
    return Result();
  Bytes = Bytes.take_front(StubSlotSize);
  uint64_t P = Prologue.size();
  if (!looksLikeStubSlot(TI, Bytes, P))
    return Result();

  auto OpcOrErr = stubOpcodes(TI, MC);
  if (!OpcOrErr)
    return OpcOrErr.takeError();
  const StubOpcodes &Opc = *OpcOrErr;

  DecodedStub S;
  S.PrologueSize = P;
  uint64_t Off = P;
  auto Next = [&]() -> std::optional<DecodedInst> {
    std::optional<DecodedInst> D =
        MC.decodeOne(Bytes.drop_front(Off), Addr + Off);
    if (D)
      Off += D->Size;
    return D;
  };

  std::optional<DecodedInst> D = Next();
  if (!D)
    return Result();
  if (D->Inst.getOpcode() == Opc.Branch) {
    if (D->Inst.getNumOperands() < 1 || !D->Inst.getOperand(0).isImm())
      return Result();
    int16_t SImm = static_cast<int16_t>(D->Inst.getOperand(0).getImm());
    S.Form = StubSpec::Short;
    S.Target = Addr + Off + static_cast<uint64_t>(int64_t(SImm) * 4);
  } else if (D->Inst.getOpcode() == Opc.GetPC) {
    // Emulate: getpc, add (carry out), addc (carry in), setpc.
    if (D->Inst.getNumOperands() != 1 || !D->Inst.getOperand(0).isReg())
      return Result();
    StringRef PairName = MC.regName(D->Inst.getOperand(0).getReg());
    std::optional<Pair> R = parsePair(PairName, TI.AddressableSGPRs);
    if (!R)
      return Result();
    uint64_t PC = Addr + Off;
    uint32_t Lo = static_cast<uint32_t>(PC);
    uint32_t Hi = static_cast<uint32_t>(PC >> 32);

    D = Next();
    if (!D || D->Inst.getOpcode() != Opc.AddLo)
      return Result();
    std::optional<uint32_t> LitLo = addLiteral(MC, *D, R->Lo);
    if (!LitLo)
      return Result();
    uint64_t Sum = uint64_t(Lo) + *LitLo;
    Lo = static_cast<uint32_t>(Sum);
    unsigned Carry = Sum >> 32;

    D = Next();
    if (!D || D->Inst.getOpcode() != Opc.AddHi)
      return Result();
    std::optional<uint32_t> LitHi = addLiteral(MC, *D, R->Hi);
    if (!LitHi)
      return Result();
    Hi = static_cast<uint32_t>(uint64_t(Hi) + *LitHi + Carry);

    D = Next();
    if (!D || D->Inst.getOpcode() != Opc.SetPC ||
        D->Inst.getNumOperands() != 1 || !D->Inst.getOperand(0).isReg() ||
        MC.regName(D->Inst.getOperand(0).getReg()) != PairName)
      return Result();
    S.Form = R->Form;
    S.SGPR = R->N;
    S.Target = (uint64_t(Hi) << 32) | Lo;
  } else {
    return Result();
  }
  S.BodySize = Off - P;

  // Everything after the body is padding.
  if (Off % 4 != 0)
    return Result();
  for (; Off < StubSlotSize; Off += 4)
    if (read32(Bytes, Off) != TI.PadWord)
      return Result();
  return Result(S);
}

} // namespace

bool looksLikeStubStart(ArrayRef<uint8_t> Bytes) {
  if (Bytes.size() < 4)
    return false;
  uint32_t First = support::endian::read32le(Bytes.data());
  return (First >> 23) == 0x17d     // SOP1: s_getpc_b64 / s_get_pc_i64
         || (First >> 23) == 0x17f; // SOPP: s_branch
}

bool looksLikeStubSlot(const TargetInfo &TI, ArrayRef<uint8_t> Slot,
                       uint64_t PrologueSize) {
  if (Slot.size() < StubSlotSize || PrologueSize % 4 != 0 ||
      PrologueSize > StubSlotSize - 4 ||
      !looksLikeStubStart(Slot.drop_front(PrologueSize)))
    return false;
  // The jump is one word (s_branch, a SOPP word) or at most 24 bytes
  // (s_getpc, s_add and s_addc with their literals, s_setpc); padding
  // fills the slot after it. Code that starts like a stub has no run of
  // padding words there.
  const bool Short = (read32(Slot, PrologueSize) >> 23) == 0x17f;
  for (uint64_t Off = PrologueSize + (Short ? 4 : 24); Off < StubSlotSize;
       Off += 4)
    if (read32(Slot, Off) != TI.PadWord)
      return false;
  return true;
}

Expected<std::optional<DecodedStub>>
decodeStub(const TargetInfo &TI, const TargetMC &MC, ArrayRef<uint8_t> Bytes,
           uint64_t Addr, ArrayRef<uint8_t> ExpectedPrologue) {
  auto First = decodeHalf(TI, MC, Bytes, Addr, ExpectedPrologue);
  if (!First || !*First || Bytes.size() < 2 * StubSlotSize)
    return First;
  auto Second = decodeHalf(TI, MC, Bytes.drop_front(StubSlotSize),
                           Addr + StubSlotSize, ExpectedPrologue);
  if (!Second)
    return Second.takeError();
  if (*Second)
    (*First)->HalfTarget2 = (*Second)->Target;
  return First;
}

} // namespace amdgpu
} // namespace hotswap
