//===- unittests/StubEncoderTest.cpp - Stub encoder/decoder tests ---------===//
//
// Encodes stubs on every supported processor, decodes and emulates them
// again, and checks the patched templates against MC assembling the full
// text from scratch.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/Support/Endian.h"

#include "gtest/gtest.h"

#include "TestTargets.h"
#include "TestUtil.h"

#include <atomic>
#include <random>
#include <thread>

using namespace llvm;
using namespace hotswap::amdgpu;
using namespace hotswap::unittest;

namespace {

template <typename T> bool failed(Expected<T> &&E) {
  if (E)
    return false;
  consumeError(E.takeError());
  return true;
}

/// The TargetInfo fields the stub code uses, filled by hand.
TargetInfo makeTI(StringRef Name) {
  TargetInfo TI;
  TI.Name = TI.MCPU = Name.str();
  if (Name.starts_with("gfx125"))
    TI.Gen = Generation::GFX125;
  else if (Name.starts_with("gfx12"))
    TI.Gen = Generation::GFX12;
  else if (Name.starts_with("gfx11"))
    TI.Gen = Generation::GFX11;
  else if (Name.starts_with("gfx10"))
    TI.Gen = Generation::GFX10;
  else if (Name.starts_with("gfx9"))
    TI.Gen = Generation::GFX9;
  else if (Name.starts_with("gfx8"))
    TI.Gen = Generation::GFX8;
  else if (Name.starts_with("gfx7"))
    TI.Gen = Generation::GFX7;
  else
    TI.Gen = Generation::GFX6;
  bool GFX10Plus = TI.Gen >= Generation::GFX10;
  bool GFX12Plus = TI.Gen >= Generation::GFX12;
  TI.HasCodeEnd = GFX10Plus;
  TI.PadWord = GFX10Plus ? 0xBF9F0000 : 0xBF800000;
  bool PC64 = TI.Gen == Generation::GFX125;
  TI.GetPC = PC64 ? "s_get_pc_i64" : "s_getpc_b64";
  TI.SetPC = PC64 ? "s_set_pc_i64" : "s_setpc_b64";
  TI.AddLo = GFX12Plus ? "s_add_co_u32" : "s_add_u32";
  TI.AddHi = GFX12Plus ? "s_add_co_ci_u32" : "s_addc_u32";
  if (GFX10Plus)
    TI.AddressableSGPRs = 106;
  else if (Name == "gfx802")
    TI.AddressableSGPRs = 96;
  else if (TI.Gen >= Generation::GFX8)
    TI.AddressableSGPRs = 102;
  else
    TI.AddressableSGPRs = 104;
  TI.PoolGuardBytes = GFX10Plus ? 384 : 0;
  TI.HasOffset3fBug = Name == "gfx1010";
  return TI;
}

const char *const AllTargets[] = {
    "gfx600",       "gfx700",          "gfx801",        "gfx802",
    "gfx803",       "gfx900",          "gfx906",        "gfx908",
    "gfx90a",       "gfx942",          "gfx950",        "gfx1010",
    "gfx1030",      "gfx1100",         "gfx1102",       "gfx1151",
    "gfx1200",      "gfx1201",         "gfx1250",       "gfx1251",
    "gfx9-generic", "gfx10-3-generic", "gfx11-generic", "gfx12-generic"};

class StubTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override { TI = makeTI(GetParam()); }

  TargetMC &mc() {
    auto MCOrErr = testMC(TI.MCPU, TI.Features);
    EXPECT_TRUE(isOk(MCOrErr));
    return *MCOrErr;
  }

  std::vector<uint8_t> assemble(StringRef Text) {
    auto B = mc().assemble(Text);
    EXPECT_TRUE(isOk(B)) << Text.str();
    return B ? *B : std::vector<uint8_t>();
  }

  std::unique_ptr<StubEncoder> encoder(std::vector<uint8_t> Prologue = {}) {
    auto E = StubEncoder::create(TI, testMC(TI), std::move(Prologue));
    EXPECT_TRUE(isOk(E));
    return E ? std::move(*E) : nullptr;
  }

  /// Prologues to test: none, s_nop 0, and the gfx125x erratum pair.
  std::vector<std::string> prologueTexts() {
    std::vector<std::string> P = {"", "s_nop 0\n"};
    if (TI.Gen == Generation::GFX125)
      P.push_back("global_prefetch_b8 v0, s[0:1] scope:SCOPE_SE\nv_nop\n");
    return P;
  }

  /// \p B followed by the target's padding word up to a 256-byte slot.
  std::vector<uint8_t> padded(std::vector<uint8_t> B) const {
    while (B.size() < 256) {
      uint8_t W[4];
      support::endian::write32le(W, TI.PadWord);
      B.insert(B.end(), W, W + 4);
    }
    return B;
  }

  /// The highest even pair the target allows.
  unsigned highPair() const { return (TI.AddressableSGPRs - 2) & ~1u; }

  std::optional<DecodedStub> decode(ArrayRef<uint8_t> Bytes, uint64_t Addr,
                                    ArrayRef<uint8_t> Prologue) {
    auto D = decodeStub(TI, testMC(TI), Bytes, Addr, Prologue);
    EXPECT_TRUE(isOk(D));
    return D ? *D : std::nullopt;
  }

  /// Encodes, checks size and padding, decodes and checks the emulation.
  void roundTrip(const StubEncoder &E, const StubSpec &S) {
    SCOPED_TRACE("stub " + utohexstr(S.StubAddr) + " -> " +
                 utohexstr(S.Target) + " form " + utostr(S.Form) + " s" +
                 utostr(S.SGPR) + (S.Dual ? " dual" : ""));
    auto Bytes = E.encode(S);
    ASSERT_TRUE(isOk(Bytes));
    ASSERT_EQ(Bytes->size(), S.Dual ? 512u : 256u);
    uint64_t P = E.prologue().size();
    uint64_t Body = S.Form == StubSpec::Short ? 4 : 24;
    for (unsigned H = 0; H < (S.Dual ? 2u : 1u); ++H) {
      ArrayRef<uint8_t> Half = ArrayRef<uint8_t>(*Bytes).slice(H * 256, 256);
      EXPECT_EQ(Half.take_front(P), E.prologue());
      for (uint64_t Off = P + Body; Off < 256; Off += 4)
        ASSERT_EQ(read32(Half, Off), TI.PadWord) << "offset " << Off;
    }
    std::optional<DecodedStub> D = decode(*Bytes, S.StubAddr, E.prologue());
    ASSERT_TRUE(D) << mc().disassemble(*Bytes, S.StubAddr);
    EXPECT_EQ(D->Form, S.Form);
    EXPECT_EQ(D->Target, S.Target);
    EXPECT_EQ(D->SGPR, S.Form == StubSpec::SGPRPair ? S.SGPR : 0u);
    EXPECT_EQ(D->BodySize, Body);
    EXPECT_EQ(D->PrologueSize, P);
    if (S.Dual) {
      ASSERT_TRUE(D->HalfTarget2.has_value());
      EXPECT_EQ(*D->HalfTarget2, S.Target + 256);
      // The second half on its own is a stub to Target+256.
      std::optional<DecodedStub> D2 =
          decode(ArrayRef<uint8_t>(*Bytes).drop_front(256), S.StubAddr + 256,
                 E.prologue());
      ASSERT_TRUE(D2);
      EXPECT_EQ(D2->Target, S.Target + 256);
      EXPECT_FALSE(D2->HalfTarget2.has_value());
    } else {
      EXPECT_FALSE(D->HalfTarget2.has_value());
    }
  }

  TargetInfo TI;
};

TEST_P(StubTest, LongFormRoundTrips) {
  const std::pair<uint64_t, uint64_t> Jumps[] = {
      {0x20000, 0x1000},                   // backward
      {0x1000, 0x7fff00001100},            // far forward
      {0x7fff00001100 & ~0xffull, 0x1000}, // far backward
      {0xffffff00, 0x100001000},           // carry across 4 GiB
      {0x100001000, 0xffffff00},           // borrow across 4 GiB
      {0x100000000, 0xfffff000},           // just below 4 GiB
      {0xffffffffffffff00, 0x100},         // wraps the address space
      {0x4000, 0x4004},                    // delta 0
  };
  for (const std::string &PT : prologueTexts()) {
    SCOPED_TRACE("prologue: " + PT);
    auto E = encoder(assemble(PT));
    ASSERT_TRUE(E);
    for (auto [Stub, Target] : Jumps) {
      for (unsigned N : {8u, 0u, highPair()}) {
        StubSpec S;
        S.StubAddr = Stub;
        S.Target = Target + E->prologue().size();
        S.Form = StubSpec::SGPRPair;
        S.SGPR = N;
        roundTrip(*E, S);
      }
      StubSpec V;
      V.StubAddr = Stub;
      V.Target = Target;
      V.Form = StubSpec::VCC;
      roundTrip(*E, V);
    }
  }
}

TEST_P(StubTest, LiteralSizeIsConstant) {
  auto E = encoder();
  ASSERT_TRUE(E);
  for (int64_t Delta : {0ll, 1ll, 64ll, -1ll, -16ll, 0x7fffffffll, 0x80000000ll,
                        0x100000000ll, -0x100000000ll}) {
    uint64_t D = static_cast<uint64_t>(Delta);
    for (StubSpec::RegKind Form : {StubSpec::SGPRPair, StubSpec::VCC}) {
      std::string Text =
          E->longFormAsm(Form, 10, uint32_t(D), uint32_t(D >> 32));
      EXPECT_EQ(assemble(Text).size(), 24u) << Text;
      StubSpec S;
      S.StubAddr = 0x10000;
      S.Target = 0x10004 + D;
      S.Form = Form;
      S.SGPR = 10;
      roundTrip(*E, S);
    }
  }
}

TEST_P(StubTest, TemplateMatchesMC) {
  std::mt19937_64 Rng(0x5eed);
  for (const std::string &PT : prologueTexts()) {
    std::vector<uint8_t> Prologue = assemble(PT);
    auto E = encoder(Prologue);
    ASSERT_TRUE(E);
    for (unsigned I = 0; I < 24; ++I) {
      StubSpec S;
      S.StubAddr = (Rng() & 0xffffffffffffull) & ~0xffull;
      S.Target = Rng();
      S.Dual = I % 3 == 0;
      S.Form = I % 4 == 0 ? StubSpec::VCC : StubSpec::SGPRPair;
      S.SGPR = 2 * unsigned(Rng() % (TI.AddressableSGPRs / 2));
      auto Bytes = E->encode(S);
      ASSERT_TRUE(isOk(Bytes));
      for (unsigned H = 0; H < (S.Dual ? 2u : 1u); ++H) {
        uint64_t Delta =
            S.Target + 256 * H - (S.StubAddr + 256 * H + Prologue.size() + 4);
        std::vector<uint8_t> Want =
            assemble(PT + E->longFormAsm(S.Form, S.SGPR, uint32_t(Delta),
                                         uint32_t(Delta >> 32)));
        ArrayRef<uint8_t> Got =
            ArrayRef<uint8_t>(*Bytes).slice(256 * H, Want.size());
        EXPECT_EQ(Got, ArrayRef<uint8_t>(Want)) << "iteration " << I;
      }
    }
    // Short form: any in-range offset.
    for (unsigned I = 0; I < 16; ++I) {
      int16_t Q = static_cast<int16_t>(Rng());
      if (Q == 0x3f)
        continue;
      StubSpec S;
      S.StubAddr = 0x40000000;
      S.Target = S.StubAddr + Prologue.size() + 4 + int64_t(Q) * 4;
      S.Form = StubSpec::Short;
      auto Bytes = E->encode(S);
      ASSERT_TRUE(isOk(Bytes));
      std::vector<uint8_t> Want = assemble(PT + E->shortFormAsm(Q));
      EXPECT_EQ(ArrayRef<uint8_t>(*Bytes).take_front(Want.size()),
                ArrayRef<uint8_t>(Want));
    }
  }
}

TEST_P(StubTest, ShortFormEdges) {
  for (const std::string &PT : prologueTexts()) {
    SCOPED_TRACE("prologue: " + PT);
    auto E = encoder(assemble(PT));
    ASSERT_TRUE(E);
    const uint64_t Stub = 0x100000;
    const uint64_t Next = Stub + E->prologue().size() + 4;
    const uint64_t MaxFwd = Next + 4 * 32767, MaxBack = Next - 4 * 32768;
    EXPECT_TRUE(E->shortFormReaches(Stub, MaxFwd));
    EXPECT_TRUE(E->shortFormReaches(Stub, MaxBack));
    EXPECT_FALSE(E->shortFormReaches(Stub, MaxFwd + 4));
    EXPECT_FALSE(E->shortFormReaches(Stub, MaxBack - 4));
    EXPECT_FALSE(E->shortFormReaches(Stub, Next + 2));
    EXPECT_FALSE(E->shortFormReaches(Stub, Next + (1ull << 32)));
    for (uint64_t T : {MaxFwd, MaxBack, Next, Next - 4, uint64_t(0x100200)}) {
      StubSpec S;
      S.StubAddr = Stub;
      S.Target = T;
      S.Form = StubSpec::Short;
      roundTrip(*E, S);
      S.Dual = true;
      roundTrip(*E, S);
    }
    StubSpec Out;
    Out.StubAddr = Stub;
    Out.Target = MaxFwd + 4;
    Out.Form = StubSpec::Short;
    EXPECT_TRUE(failed(E->encode(Out)));
    // Dual: the second half is 256 bytes further, so the same delta.
    Out.Target = MaxFwd;
    Out.Dual = true;
    EXPECT_TRUE(isOk(E->encode(Out)));
  }
}

TEST_P(StubTest, Offset3fBug) {
  auto E = encoder();
  ASSERT_TRUE(E);
  bool Bug = TI.MCPU == "gfx1010";
  EXPECT_EQ(mc().hasFeature("offset-3f-bug"), Bug);
  EXPECT_EQ(E->shortFormReaches(0x1000, 0x1004 + 4 * 0x3f), !Bug);
  EXPECT_TRUE(E->shortFormReaches(0x1000, 0x1004 + 4 * 0x3e));
}

TEST_P(StubTest, DualStubs) {
  for (const std::string &PT : prologueTexts()) {
    auto E = encoder(assemble(PT));
    ASSERT_TRUE(E);
    StubSpec S;
    S.StubAddr = 0x200000;
    S.Target = 0x1100;
    S.Dual = true;
    S.SGPR = 12;
    roundTrip(*E, S);
    S.Form = StubSpec::VCC;
    roundTrip(*E, S);
    S.Form = StubSpec::Short;
    S.StubAddr = 0x10000;
    roundTrip(*E, S);
    S.Target = 0xffffff00; // long form, carry in the second half
    S.StubAddr = 0x100000000;
    S.Form = StubSpec::SGPRPair;
    roundTrip(*E, S);
  }
}

TEST_P(StubTest, BadSpecs) {
  auto E = encoder();
  ASSERT_TRUE(E);
  StubSpec S;
  S.StubAddr = 0x1080; // not 256-aligned
  S.Target = 0x2000;
  EXPECT_TRUE(failed(E->encode(S)));
  S.StubAddr = 0x1000;
  S.SGPR = 9; // odd
  EXPECT_TRUE(failed(E->encode(S)));
  S.SGPR = TI.AddressableSGPRs; // beyond the register file
  EXPECT_TRUE(failed(E->encode(S)));
  S.SGPR = 0;
  S.StubAddr = 0xffffffffffffff00;
  S.Dual = true; // wraps
  EXPECT_TRUE(failed(E->encode(S)));
  EXPECT_TRUE(failed(StubEncoder::create(TI, testMC(TI), {0, 0, 0x80})));
  EXPECT_TRUE(failed(
      StubEncoder::create(TI, testMC(TI), std::vector<uint8_t>(236, 0))));
}

TEST_P(StubTest, NotAStub) {
  auto E = encoder();
  ASSERT_TRUE(E);
  auto Pad = [&](std::vector<uint8_t> B) { return padded(std::move(B)); };
  auto ExpectNot = [&](ArrayRef<uint8_t> B, const Twine &Why) {
    auto D = decodeStub(TI, testMC(TI), B, 0x1000, {});
    ASSERT_TRUE(isOk(D));
    EXPECT_FALSE(D->has_value()) << Why.str() << "\n"
                                 << mc().disassemble(B.take_front(32), 0x1000);
  };
  std::string S8 = "s8", S9 = "s9", S10 = "s10";
  std::string Add = TI.AddLo, Addc = TI.AddHi;
  std::string GetPC = TI.GetPC, SetPC = TI.SetPC;

  ExpectNot(Pad({}), "all padding");
  ExpectNot(std::vector<uint8_t>(100, 0), "too short");
  std::mt19937 Rng(42);
  for (unsigned I = 0; I < 20; ++I) {
    std::vector<uint8_t> R(256);
    for (uint8_t &B : R)
      B = uint8_t(Rng());
    ExpectNot(R, "random bytes");
  }
  ExpectNot(Pad(assemble(GetPC + " s[8:9]\n" + Add + " s10, s10, lit(0x10)\n" +
                         Addc + " s9, s9, lit(0x0)\n" + SetPC + " s[8:9]\n")),
            "add on another register");
  ExpectNot(Pad(assemble(GetPC + " s[8:9]\n" + Add + " s8, s8, lit(0x10)\n" +
                         Addc + " s9, s9, lit(0x0)\n" + SetPC + " s[10:11]\n")),
            "setpc on another pair");
  ExpectNot(Pad(assemble(GetPC + " s[8:9]\n" + Add + " s8, s8, lit(0x10)\n" +
                         Addc + " s11, s11, lit(0x0)\n" + SetPC + " s[8:9]\n")),
            "addc on another register");
  ExpectNot(
      Pad(assemble(GetPC + " s[8:9]\n" + Add + " s8, s8, lit(0x10)\n" + Addc +
                   " vcc_hi, vcc_hi, lit(0x0)\n" + SetPC + " s[8:9]\n")),
      "mix of sgpr pair and vcc");
  ExpectNot(Pad(assemble(GetPC + " s[8:9]\n" + Add + " s8, s8, 16\n" + Addc +
                         " s9, s9, 0\n" + SetPC + " s[8:9]\n")),
            "inline constants instead of literals");
  ExpectNot(Pad(assemble(GetPC + " s[8:9]\n" + Addc + " s9, s9, lit(0x0)\n" +
                         Add + " s8, s8, lit(0x10)\n" + SetPC + " s[8:9]\n")),
            "add and addc swapped");
  ExpectNot(Pad(assemble(GetPC + " s[8:9]\n" + Add + " s8, s8, lit(0x10)\n" +
                         Addc + " s9, s9, lit(0x0)\n")),
            "no setpc");

  StubSpec S;
  S.StubAddr = 0x1000;
  S.Target = 0x5000;
  S.SGPR = 8;
  auto Good = E->encode(S);
  ASSERT_TRUE(isOk(Good));
  std::vector<uint8_t> Bad = *Good;
  Bad[200] ^= 1;
  ExpectNot(Bad, "bad padding");
  Bad = *Good;
  support::endian::write32le(&Bad[24], 0); // right after the body
  ExpectNot(Bad, "bad padding after body");
  // An unexpected prologue: decoded without it, a stub with one is not one.
  auto EP = encoder(assemble("s_nop 0"));
  ASSERT_TRUE(EP);
  auto WithP = EP->encode(S);
  ASSERT_TRUE(isOk(WithP));
  ExpectNot(*WithP, "stub with an unexpected prologue");
  auto D = decodeStub(TI, testMC(TI), *Good, 0x1000, EP->prologue());
  ASSERT_TRUE(isOk(D));
  EXPECT_FALSE(D->has_value()) << "stub without the expected prologue";
  // Second half not a stub: no HalfTarget2.
  std::vector<uint8_t> Two = *Good;
  Two.resize(512, 0);
  auto D2 = decodeStub(TI, testMC(TI), Two, 0x1000, {});
  ASSERT_TRUE(isOk(D2));
  ASSERT_TRUE(D2->has_value());
  EXPECT_FALSE((*D2)->HalfTarget2.has_value());
}

// looksLikeStubSlot turns away, on raw bytes, what decodeStub would turn
// away after asking MC: code that starts like a stub (a kernel reaching its
// data with s_getpc and s_add) but goes on where a stub has padding. Every
// stub the encoder writes passes it.
TEST_P(StubTest, SlotShapeNeedsNoMC) {
  auto Pad = [&](std::vector<uint8_t> B) { return padded(std::move(B)); };
  for (const std::string &PT : prologueTexts()) {
    SCOPED_TRACE("prologue: " + PT);
    auto E = encoder(assemble(PT));
    ASSERT_TRUE(E);
    const uint64_t P = E->prologue().size();
    StubSpec Specs[3];
    Specs[0].Form = StubSpec::Short;
    Specs[0].Target = 0x1100 + P;
    Specs[1].SGPR = highPair();
    Specs[1].Target = 0x7fff00001100 + P;
    Specs[2].Form = StubSpec::VCC;
    Specs[2].Target = 0x20000;
    for (StubSpec &S : Specs) {
      S.StubAddr = 0x10000;
      auto B = E->encode(S);
      ASSERT_TRUE(isOk(B));
      EXPECT_TRUE(looksLikeStubSlot(TI, *B, P)) << "form " << S.Form;
    }
  }
  std::string GetPC = TI.GetPC, Add = TI.AddLo, Addc = TI.AddHi;
  // A kernel's first instructions: the pc-relative address of its data,
  // then more code; the slot ends in padding (its function ends there).
  std::vector<uint8_t> Kernel =
      assemble(GetPC + " s[0:1]\n" + Add + " s0, s0, lit(0x2594)\n" + Addc +
               " s1, s1, lit(0x0)\ns_mov_b32 s2, s3\ns_endpgm\n");
  EXPECT_FALSE(looksLikeStubSlot(TI, Pad(Kernel), 0));
  // Code ending right where a long body would.
  std::vector<uint8_t> Long =
      assemble(GetPC + " s[0:1]\n" + Add + " s0, s0, lit(0x2594)\n" + Addc +
               " s1, s1, lit(0x0)\ns_mov_b32 s2, s3\n");
  EXPECT_TRUE(looksLikeStubSlot(TI, Pad(Long), 0));
  Long.resize(Long.size() + 4, 0);
  EXPECT_FALSE(looksLikeStubSlot(TI, Pad(Long), 0));
  // A SOPP word, then anything but padding.
  EXPECT_FALSE(looksLikeStubSlot(
      TI, Pad(assemble("s_branch 8\ns_mov_b32 s2, s3\n")), 0));
  EXPECT_TRUE(looksLikeStubSlot(TI, Pad(assemble("s_branch 8\n")), 0));
}

TEST_P(StubTest, AssemblerErrorsAreReturned) {
  testing::internal::CaptureStderr();
  auto B = mc().assemble("s_bogus_instruction s0\n");
  auto B2 = mc().assemble("s_branch some_label\n");
  std::string Err = testing::internal::GetCapturedStderr();
  ASSERT_FALSE(B);
  std::string Msg = toString(B.takeError());
  EXPECT_NE(Msg.find("invalid instruction"), std::string::npos) << Msg;
  EXPECT_TRUE(failed(std::move(B2)));
  EXPECT_EQ(Err, "");
}

INSTANTIATE_TEST_SUITE_P(AllTargets, StubTest, ::testing::ValuesIn(AllTargets),
                         [](const testing::TestParamInfo<const char *> &I) {
                           std::string N = I.param;
                           for (char &C : N)
                             if (C == '-')
                               C = '_';
                           return N;
                         });

// LLVM has no GFX6/7 disassembler; decoding goes through gfx1010. That is
// only sound because the stub instructions encode identically.
TEST(TargetMCTest, GFX6And7DecodeViaGFX10) {
  auto Proxy = testMC("gfx1010", "+wavefrontsize64");
  ASSERT_TRUE(isOk(Proxy));
  for (const char *CPU : {"gfx600", "gfx700"}) {
    auto MC = testMC(CPU, "");
    ASSERT_TRUE(isOk(MC));
    EXPECT_TRUE(MC->decodesViaProxy());
    for (const char *Text :
         {"s_getpc_b64 s[8:9]", "s_getpc_b64 s[100:101]", "s_getpc_b64 vcc",
          "s_setpc_b64 s[8:9]", "s_setpc_b64 vcc",
          "s_add_u32 s8, s8, lit(0x12345678)",
          "s_addc_u32 s9, s9, lit(0x9abcdef0)",
          "s_add_u32 vcc_lo, vcc_lo, lit(0x1)",
          "s_addc_u32 vcc_hi, vcc_hi, lit(0x2)", "s_branch -32768",
          "s_branch 32767", "s_nop 0"}) {
      auto A = MC->assemble(Text);
      auto B = Proxy->assemble(Text);
      ASSERT_TRUE(isOk(A));
      ASSERT_TRUE(isOk(B));
      EXPECT_EQ(*A, *B) << CPU << ": " << Text;
    }
  }
  auto MC9 = testMC("gfx900", "");
  ASSERT_TRUE(isOk(MC9));
  EXPECT_FALSE(MC9->decodesViaProxy());
}

TEST(TargetMCTest, KnownEncodings) {
  // The long-stub instructions as `llvm-mc -show-encoding` gives them.
  auto MC = testMC("gfx90a", "");
  ASSERT_TRUE(isOk(MC));
  auto B = MC->assemble("s_getpc_b64 s[8:9]\ns_add_u32 s8, s8, 0x12345678\n"
                        "s_addc_u32 s9, s9, lit(0)\ns_setpc_b64 s[8:9]\n");
  ASSERT_TRUE(isOk(B));
  std::vector<uint8_t> Want = {0x00, 0x1c, 0x88, 0xbe, 0x08, 0xff, 0x08, 0x80,
                               0x78, 0x56, 0x34, 0x12, 0x09, 0xff, 0x09, 0x82,
                               0x00, 0x00, 0x00, 0x00, 0x08, 0x1d, 0x80, 0xbe};
  EXPECT_EQ(*B, Want);
  auto D = MC->decodeOne(*B, 0);
  ASSERT_TRUE(D);
  EXPECT_EQ(D->Size, 4u);
  EXPECT_EQ(MC->printInst(D->Inst, 0), "s_getpc_b64 s[8:9]");
  auto Data = MC->assemble(".long 0xbf800000\n.byte 1, 2\n.short 0x0403\n");
  ASSERT_TRUE(isOk(Data));
  EXPECT_EQ(*Data, std::vector<uint8_t>({0, 0, 0x80, 0xbf, 1, 2, 3, 4}));
  EXPECT_TRUE(failed(MC->assemble(".p2align 8\n")));
  EXPECT_TRUE(failed(testMC("gfx9999", "")));
  EXPECT_TRUE(failed(testMC("gfx90a", "+nosuchfeature")));
  EXPECT_TRUE(failed(testMC("gfx90a", "xnack")));
  EXPECT_TRUE(isOk(testMC("gfx90a", "+xnack,-sramecc")));
}

// VCC is a 64-bit pair usable by getpc/setpc in wave32 mode too.
TEST(TargetMCTest, VCCFormInBothWaveSizes) {
  for (const char *CPU :
       {"gfx1010", "gfx1030", "gfx1100", "gfx1201", "gfx1250"}) {
    for (const char *Features : {"+wavefrontsize32", "+wavefrontsize64"}) {
      TargetInfo TI = makeTI(CPU);
      TI.Features = Features;
      auto E = StubEncoder::create(TI, testMC(TI));
      ASSERT_TRUE(isOk(E)) << CPU << Features;
      StubSpec S;
      S.StubAddr = 0x100000000;
      S.Target = 0xffffff00;
      S.Form = StubSpec::VCC;
      auto B = (*E)->encode(S);
      ASSERT_TRUE(isOk(B));
      auto D = decodeStub(TI, testMC(TI), *B, S.StubAddr);
      ASSERT_TRUE(isOk(D));
      ASSERT_TRUE(D->has_value()) << CPU << Features;
      EXPECT_EQ((*D)->Form, StubSpec::VCC);
      EXPECT_EQ((*D)->Target, S.Target);
      // Same bytes as without a wave size feature.
      auto E0 = StubEncoder::create(makeTI(CPU), testMC(makeTI(CPU)));
      ASSERT_TRUE(isOk(E0));
      auto B0 = (*E0)->encode(S);
      ASSERT_TRUE(isOk(B0));
      EXPECT_EQ(*B, *B0);
    }
  }
}

// Threads of two processors encode and decode at once, each with a TargetMC
// of its own (one TargetMC is used by one thread at a time; testMC()'s are
// not for threads): threads of one processor share only its immutable
// tables.
TEST(TargetMCTest, LiteralCutOffByTheEndIsNotDecoded) {
  // v_add_f32 v2, <literal>, v2 with its 32-bit literal missing: LLVM 22's
  // disassembler crashes on it unless the bytes are padded (found by the
  // fuzzer). The word is not an instruction that fits: it does not decode.
  for (unsigned Mach :
       {ELF::EF_AMDGPU_MACH_AMDGCN_GFX803, ELF::EF_AMDGPU_MACH_AMDGCN_GFX900,
        ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A}) {
    TargetInfo TI = target(Mach);
    Expected<TargetMC &> MC = testMC(TI.MCPU, TI.Features);
    ASSERT_TRUE(bool(MC)) << toString(MC.takeError());
    const uint8_t Cut[] = {0xff, 0x04, 0x04, 0x02};
    EXPECT_FALSE(MC->decodeOne(Cut, 0x1000).has_value()) << TI.Name;
    // With its literal the same word decodes to an 8-byte instruction.
    const uint8_t Whole[] = {0xff, 0x04, 0x04, 0x02, 0x00, 0x00, 0x80, 0x3f};
    std::optional<DecodedInst> D = MC->decodeOne(Whole, 0x1000);
    ASSERT_TRUE(D.has_value()) << TI.Name;
    EXPECT_EQ(D->Size, 8u);
  }
}

// decodeOne() reuses the decode of bytes it has seen: the answer must be the
// one a TargetMC that never saw them gives, for every address, every tail
// after the instruction, fewer bytes than it needs, and either SoftFail
// choice.
TEST(TargetMCTest, RepeatedDecodesAgreeWithFreshOnes) {
  for (const char *CPU : {"gfx90a", "gfx1010", "gfx1100"}) {
    // One TargetMC decodes everything twice; each check also asks a new one.
    auto Seen = TargetMC::create(CPU, "");
    ASSERT_TRUE(isOk(Seen)) << CPU;
    // What \p MC decodes there, as text.
    auto Decode = [](const TargetMC &MC, ArrayRef<uint8_t> Bytes, uint64_t Addr,
                     bool AllowSoftFail) {
      std::optional<DecodedInst> D = MC.decodeOne(Bytes, Addr, AllowSoftFail);
      return D ? std::to_string(D->Size) + " " + MC.printInst(D->Inst, Addr) +
                     (D->SoftFail ? " softfail" : "")
               : std::string("none");
    };
    auto Fresh = [&](ArrayRef<uint8_t> Bytes, uint64_t Addr,
                     bool AllowSoftFail) {
      auto MC = TargetMC::create(CPU, "");
      EXPECT_TRUE(isOk(MC));
      return Decode(**MC, Bytes, Addr, AllowSoftFail);
    };
    auto Again = [&](ArrayRef<uint8_t> Bytes, uint64_t Addr,
                     bool AllowSoftFail) {
      return Decode(**Seen, Bytes, Addr, AllowSoftFail);
    };
    auto B = (*Seen)->assemble("s_branch 5\ns_nop 0\ns_mov_b32 s0, "
                               "0x12345678\ns_nop 1\n");
    ASSERT_TRUE(isOk(B));
    std::vector<uint8_t> Branch(B->begin(), B->begin() + 4);
    std::vector<uint8_t> Mov(B->begin() + 8, B->begin() + 16);
    // The same first word with another literal.
    std::vector<uint8_t> Mov2 = Mov;
    Mov2[7] ^= 0x80;
    // v_cmpx_eq_u32_e64 with an SDST other than EXEC (gfx10: SoftFail).
    const std::vector<uint8_t> Cmpx = {0x04, 0x00, 0xd2, 0xd4,
                                       0x01, 0x05, 0x02, 0x00};
    std::vector<std::pair<std::vector<uint8_t>, uint64_t>> Cases = {
        {*B, 0x1000},
        {*B, 0x2000}, // the branch's target moves with it
        {Branch, 0x3000},
        {std::vector<uint8_t>(B->begin() + 4, B->end()), 0x1004},
        {Mov, 0},
        {Mov2, 0},
        {std::vector<uint8_t>(Mov.begin(), Mov.begin() + 4), 0}, // cut off
        {std::vector<uint8_t>(Mov.begin(), Mov.begin() + 6), 0},
        {Cmpx, 0x100},
        {std::vector<uint8_t>(Cmpx.begin(), Cmpx.begin() + 4), 0x100},
    };
    for (int Round = 0; Round < 2; ++Round)
      for (const auto &[Bytes, Addr] : Cases)
        for (bool Soft : {false, true})
          EXPECT_EQ(Again(Bytes, Addr, Soft), Fresh(Bytes, Addr, Soft))
              << CPU << " round " << Round << " at " << Addr << " of "
              << Bytes.size() << " bytes" << (Soft ? ", soft" : "");
    // A branch decodes to its offset, wherever it is.
    EXPECT_EQ(Again(*B, 0x1000, false), "4 s_branch 5");
    if (StringRef(CPU) == "gfx1010")
      EXPECT_EQ(Again(Cmpx, 0, true), "8 v_cmpx_eq_u32_e64 v1, v2 softfail");
  }
}

// A dependency wait with named fields assembles to what llvm-mc gives in
// a process of its own, for each target, whatever targets the process
// assembled for before: LLVM keeps the default of the fields not named
// from the first subtarget it encoded such a wait for, and gfx10.1 has no
// hold_cnt (bit 7). Without TargetMC's own encoding one of the two
// targets below gets the other's default, in any order.
TEST(TargetMCTest, DependencyWaitsDoNotDependOnEarlierTargets) {
  struct Case {
    const char *CPU, *Text;
    std::vector<uint8_t> Bytes; // llvm-mc -show-encoding, a fresh process
  };
  const Case Cases[] = {
      {"gfx1010",
       "s_waitcnt_depctr depctr_sa_sdst(0)",
       {0x1e, 0xff, 0xa3, 0xbf}},
      {"gfx1100",
       "s_waitcnt_depctr depctr_sa_sdst(0)",
       {0x9e, 0xff, 0x88, 0xbf}},
      {"gfx1010",
       "s_waitcnt_depctr depctr_vm_vsrc(0)",
       {0x03, 0xff, 0xa3, 0xbf}},
      {"gfx1030",
       "s_waitcnt_depctr depctr_vm_vsrc(0)",
       {0x83, 0xff, 0xa3, 0xbf}},
      {"gfx1100",
       "s_waitcnt_depctr depctr_va_vdst(0)",
       {0x9f, 0x0f, 0x88, 0xbf}},
      {"gfx1201",
       "s_waitcnt_depctr depctr_va_sdst(0) depctr_va_vcc(0) depctr_sa_sdst(0)",
       {0x9c, 0xf1, 0x88, 0xbf}},
      {"gfx1201", "s_wait_alu depctr_va_sdst(0)", {0x9f, 0xf1, 0x88, 0xbf}},
      {"gfx1010",
       "s_waitcnt_depctr depctr_va_vcc(0)",
       {0x1d, 0xff, 0xa3, 0xbf}},
  };
  for (int Round = 0; Round < 2; ++Round)
    for (const Case &C : Cases) {
      auto MC = TargetMC::create(C.CPU, "");
      ASSERT_TRUE(isOk(MC));
      auto B = (*MC)->assemble(C.Text);
      ASSERT_TRUE(isOk(B)) << C.CPU << ": " << C.Text;
      EXPECT_EQ(*B, C.Bytes) << C.CPU << ": " << C.Text;
    }
  // Not a field of gfx10.1: LLVM's to reject.
  auto MC = TargetMC::create("gfx1010", "");
  ASSERT_TRUE(isOk(MC));
  EXPECT_TRUE(failed((*MC)->assemble("s_waitcnt_depctr depctr_hold_cnt(0)")));
}

TEST(TargetMCTest, LiteralFieldsOf64BitEncodingsBeforeGFX10) {
  // VOP3 with src0 = literal and MUBUF with soffset = literal: illegal
  // before gfx10 (no room for the literal) and crash LLVM 22's disassembler.
  // They are undecodable words, never a crash; legal neighbours still decode.
  const uint8_t VOP3Lit[] = {0x04, 0x00, 0x8f, 0xd2, 0xff, 0x0c, 0x02, 0x00};
  const uint8_t MUBUFLit[] = {0x00, 0x03, 0x00, 0xe0, 0x00, 0x01, 0xf8, 0xff};
  for (unsigned Mach :
       {ELF::EF_AMDGPU_MACH_AMDGCN_GFX803, ELF::EF_AMDGPU_MACH_AMDGCN_GFX900,
        ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A}) {
    TargetInfo TI = target(Mach);
    Expected<TargetMC &> MC = testMC(TI.MCPU, TI.Features);
    ASSERT_TRUE(bool(MC)) << toString(MC.takeError());
    EXPECT_FALSE(MC->decodeOne(VOP3Lit, 0).has_value()) << TI.Name;
    EXPECT_FALSE(MC->decodeOne(MUBUFLit, 0).has_value()) << TI.Name;
    // v_cmp_class_f32_e64 with sdst = 0xff (a literal) crashes it the same
    // way (found by decoding every opcode); 0xff is v255 where the destination
    // is a VGPR (v_add_f32_e64 v255, s1, s2), which decodes.
    const uint8_t CmpLit[] = {0xff, 0x00, 0x10, 0xd0, 0x01, 0x04, 0x00, 0x00};
    EXPECT_FALSE(MC->decodeOne(CmpLit, 0).has_value()) << TI.Name;
    const uint8_t AddV255[] = {0xff, 0x00, 0x01, 0xd1, 0x01, 0x04, 0x00, 0x00};
    std::optional<DecodedInst> V255 = MC->decodeOne(AddV255, 0);
    ASSERT_TRUE(V255.has_value()) << TI.Name;
    EXPECT_EQ(MC->regInfo().getName(V255->Inst.getOperand(0).getReg()),
              StringRef("VGPR255"));
    // The same VOP3 with an SGPR source (s1) is an ordinary instruction.
    const uint8_t VOP3Reg[] = {0x04, 0x00, 0x8f, 0xd2, 0x01, 0x0c, 0x02, 0x00};
    std::optional<DecodedInst> D = MC->decodeOne(VOP3Reg, 0);
    ASSERT_TRUE(D.has_value()) << TI.Name;
    EXPECT_EQ(D->Size, 8u);
  }
}

TEST(TargetMCTest, ConcurrentUse) {
  std::vector<std::thread> Threads;
  std::atomic<unsigned> Ok{0};
  for (unsigned I = 0; I < 4; ++I)
    Threads.emplace_back([&Ok, I] {
      TargetInfo TI = makeTI(I % 2 ? "gfx942" : "gfx1201");
      auto MC = TargetMC::create(TI.MCPU, TI.Features);
      if (!MC) {
        consumeError(MC.takeError());
        return;
      }
      auto E = StubEncoder::create(TI, **MC);
      if (!E) {
        consumeError(E.takeError());
        return;
      }
      for (unsigned J = 0; J < 50; ++J) {
        StubSpec S;
        S.StubAddr = 0x100000 + 256 * J;
        S.Target = 0x1000 * J;
        S.SGPR = 2 * (J % 40);
        auto B = (*E)->encode(S);
        if (!B) {
          consumeError(B.takeError());
          return;
        }
        auto D = decodeStub(TI, **MC, *B, S.StubAddr, {});
        if (!D) {
          consumeError(D.takeError());
          return;
        }
        if (!*D || (**D).Target != S.Target)
          return;
      }
      ++Ok;
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Ok.load(), 4u);
}

} // namespace
