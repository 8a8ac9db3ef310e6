//===- unittests/RelocateTest.cpp - A function's code at another address
//---===//
//
// code::relocate copies a function to a new address, with code inserted
// between instructions, and code::findPCRelative finds the values it
// computes from its own address. Each test assembles a function with LLVM
// MC, relocates it, and reads the copy back as the proof in verify does:
// decoded again, its graph built, its PC-relative values evaluated.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Code/Relocate.h"
#include "hotswap/Code/CFG.h"
#include "hotswap/Code/InPlace.h"
#include "hotswap/Code/PCRelative.h"
#include "hotswap/Code/RelocationProof.h"
#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Code/WaitCounts.h"
#include "hotswap/Support/Format.h"

#include "llvm/MC/MCInst.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace hotswap::code;

namespace {

constexpr uint64_t Base = 0x1000;
constexpr uint64_t Far = 0x200000;

/// A function assembled from text at Base, decoded with its operands.
struct AsmFunction {
  std::unique_ptr<TargetMC> MC;
  std::vector<uint8_t> Bytes;
  FunctionMap Map;
  FunctionCFG G;
  std::vector<MCInst> Decoded;

  RelocationResult relocateTo(uint64_t NewBase,
                              ArrayRef<Insertion> Inserts = {}) const {
    return relocate(*MC, G, Decoded, Bytes, NewBase, Inserts);
  }
  /// The copy \p R as a function of its own beside the original.
  std::pair<CodeFunction, FunctionMap> copyOf(const Relocated &R) const {
    CodeFunction C = Map.Functions.back();
    C.Name = "f.clone";
    C.Begin = R.Base;
    C.End = R.Base + R.Bytes.size();
    FunctionMap Both = Map;
    Both.Functions.push_back(C);
    return {C, Both};
  }
  /// The graph of relocated code.
  FunctionCFG graphOf(const Relocated &R,
                      std::vector<MCInst> *Ops = nullptr) const {
    auto [C, Both] = copyOf(R);
    return buildCFG(*MC, C, R.Bytes, Both, Ops);
  }
  /// The proof of \p Bytes as \p R's copy (its bytes, or bytes changed
  /// after): the problems found, one per line.
  std::string prove(const Relocated &R, ArrayRef<uint8_t> Bytes,
                    ArrayRef<uint32_t> Replaced = {}) const {
    auto [C, Both] = copyOf(R);
    RelocationProofResult P =
        proveRelocation(*MC, G, Decoded, this->Bytes, Both, C, Bytes,
                        R.insertedRanges(), Replaced);
    std::string S;
    for (const std::string &Line : P.Problems)
      S += Line + "\n";
    return S;
  }
  std::string prove(const Relocated &R) const { return prove(R, R.Bytes); }

  /// The original's seams, in a kernel holding \p SGPRs SGPRs.
  FunctionSeams seams(Generation Gen, unsigned SGPRs = 102) const {
    return FunctionSeams(*MC, G, Decoded, FunctionKind::Kernel, false, Gen,
                         {SGPRs, 256});
  }
  /// Relocates with branches relaxed, their registers free by \p Seams.
  RelocationResult relocateRelaxed(uint64_t NewBase,
                                   ArrayRef<Insertion> Inserts,
                                   FunctionSeams &Seams) const {
    const RegisterModel &RM = RegisterModel::get(MC->regInfo());
    return relocate(*MC, G, Decoded, Bytes, NewBase, Inserts, [&](uint32_t T) {
      return longJumpRegisters(RM, Seams.before(T));
    });
  }
  /// The proof of \p Bytes as \p R's copy, its relaxations proven by
  /// \p Seams (none: not proven).
  std::string proveRelaxed(const Relocated &R, ArrayRef<uint8_t> Bytes,
                           FunctionSeams *Seams) const {
    auto [C, Both] = copyOf(R);
    RelocationProofResult P =
        proveRelocation(*MC, G, Decoded, this->Bytes, Both, C, Bytes,
                        R.insertedRanges(), {}, false, R.Relaxed, Seams);
    std::string S;
    for (const std::string &Line : P.Problems)
      S += Line + "\n";
    return S;
  }
};

std::unique_ptr<AsmFunction> assemble(StringRef MCPU, StringRef Asm) {
  auto R = std::make_unique<AsmFunction>();
  Expected<std::unique_ptr<TargetMC>> MC = TargetMC::create(MCPU, "");
  if (!MC) {
    ADD_FAILURE() << toString(MC.takeError());
    return nullptr;
  }
  R->MC = std::move(*MC);
  Expected<std::vector<uint8_t>> B = R->MC->assemble(Asm);
  if (!B) {
    ADD_FAILURE() << toString(B.takeError());
    return nullptr;
  }
  R->Bytes = std::move(*B);
  CodeFunction F;
  F.Name = "f";
  F.Kind = FunctionKind::Kernel;
  F.Begin = Base;
  F.End = Base + R->Bytes.size();
  R->Map.Functions.push_back(F);
  R->G = buildCFG(*R->MC, F, R->Bytes, R->Map, &R->Decoded);
  return R;
}

std::string findingsOf(const FunctionCFG &G) {
  std::string S;
  for (const CodeFinding &F : G.Findings)
    S += F.Message + "\n";
  return S;
}

std::vector<uint8_t> nops(size_t Count) {
  // s_nop 0 is 0xbf800000 on every generation this test uses.
  std::vector<uint8_t> B;
  for (size_t I = 0; I < Count; ++I)
    B.insert(B.end(), {0x00, 0x00, 0x80, 0xbf});
  return B;
}

TEST(RelocateTest, BranchesKeepTheirDistancesWhenNothingIsInserted) {
  auto F = assemble("gfx90a", "s_cmp_eq_u32 s0, 0\n"
                              "s_cbranch_scc1 2\n" // -> 0x1010
                              "v_mov_b32 v0, 1\n"
                              "s_branch 1\n" // -> 0x1014
                              "v_mov_b32 v0, 2\n"
                              "s_endpgm\n");
  ASSERT_TRUE(F);
  RelocationResult R = F->relocateTo(Far);
  ASSERT_TRUE(R.Code) << R.Refusal.Message;
  EXPECT_EQ(R.Code->Bytes, F->Bytes);
  EXPECT_EQ(R.Code->BranchesEncoded, 2u);
  EXPECT_EQ(R.Code->InsnAddr[4], Far + 0x10);
  EXPECT_EQ(R.Code->image(F->G, 0x1014), Far + 0x14);
  EXPECT_EQ(R.Code->image(F->G, 0x1016), std::nullopt);
  EXPECT_EQ(F->prove(*R.Code), "");
}

TEST(RelocateTest, BranchesLandOnWhatIsInsertedBeforeTheirTarget) {
  auto F = assemble("gfx1100", "s_cmp_eq_u32 s0, 0\n" // 0
                               "s_cbranch_scc1 2\n"   // 1 -> insn 4
                               "v_mov_b32 v0, 1\n"    // 2
                               "s_branch 1\n"         // 3 -> insn 5
                               "v_mov_b32 v0, 2\n"    // 4
                               "s_endpgm\n");         // 5
  ASSERT_TRUE(F);
  RelocationResult R = F->relocateTo(Far, {{4, nops(1)}, {5, nops(2)}});
  ASSERT_TRUE(R.Code) << R.Refusal.Message;
  const Relocated &C = *R.Code;
  EXPECT_EQ(C.Bytes.size(), F->Bytes.size() + 12);
  EXPECT_EQ(C.LandAddr[4], Far + 0x10);
  EXPECT_EQ(C.InsnAddr[4], Far + 0x14);
  EXPECT_EQ(C.LandAddr[5], Far + 0x18);
  EXPECT_EQ(C.InsnAddr[5], Far + 0x20);
  FunctionCFG G = F->graphOf(C);
  EXPECT_TRUE(G.editable()) << findingsOf(G);
  ASSERT_EQ(G.Insns.size(), 9u);
  // The conditional branch reaches the s_nop before v_mov v0, 2; s_branch
  // the two before s_endpgm.
  EXPECT_EQ(G.Insns[1].Target, Far + 0x10);
  EXPECT_EQ(G.Insns[3].Target, Far + 0x18);
  EXPECT_EQ(F->prove(C), "");
  // The proof reads the bytes: a branch one word off, a changed operand,
  // or inserted code taken for the original's are each found.
  std::vector<uint8_t> Bad = C.Bytes;
  Bad[4] ^= 1; // s_cbranch_scc1's offset
  EXPECT_NE(F->prove(C, Bad).find("does not reach the image of 0x1010"),
            std::string::npos);
  Bad = C.Bytes;
  Bad[8] ^= 1; // v_mov_b32 v0, 1 -> 0 (the inline constant)
  EXPECT_NE(F->prove(C, Bad).find("has other bytes"), std::string::npos);
  auto [Copy, Both] = F->copyOf(C);
  RelocationProofResult P = proveRelocation(*F->MC, F->G, F->Decoded, F->Bytes,
                                            Both, Copy, C.Bytes, {});
  EXPECT_FALSE(P.proven());
}

TEST(RelocateTest, DataReferencesKeepTheirAbsoluteTarget) {
  auto F = assemble("gfx90a", "s_getpc_b64 s[4:5]\n"      // pc 0x1004
                              "s_add_u32 s4, s4, 0x100\n" // -> 0x1104
                              "s_addc_u32 s5, s5, 0\n"
                              "s_load_dword s6, s[4:5], 0x0\n"
                              "s_endpgm\n");
  ASSERT_TRUE(F);
  PCRelScan Orig = findPCRelative(*F->MC, F->G, F->Decoded);
  ASSERT_EQ(Orig.Idioms.size(), 1u);
  EXPECT_EQ(Orig.Idioms[0].Target, 0x1104u);
  RelocationResult R = F->relocateTo(Far);
  ASSERT_TRUE(R.Code) << R.Refusal.Message;
  EXPECT_EQ(R.Code->PCRelAdjusted, 2u);
  std::vector<MCInst> Ops;
  FunctionCFG G = F->graphOf(*R.Code, &Ops);
  PCRelScan Copy = findPCRelative(*F->MC, G, Ops);
  ASSERT_EQ(Copy.Idioms.size(), 1u);
  EXPECT_EQ(Copy.Idioms[0].Target, 0x1104u);
  // 0x1104 - 0x200004 needs a literal in the high half too: -1 is inline.
  EXPECT_EQ(Copy.Idioms[0].Offset, uint64_t(0x1104) - (Far + 4));
  EXPECT_EQ(R.Code->Bytes.size(), F->Bytes.size());
  EXPECT_EQ(F->prove(*R.Code), "");
  // A constant changed by one: the copy computes another address.
  std::vector<uint8_t> Bad = R.Code->Bytes;
  Bad[8] ^= 4; // s_add_u32's literal
  EXPECT_NE(
      F->prove(*R.Code, Bad).find("computes 0x1108, not the image of 0x1104"),
      std::string::npos)
      << F->prove(*R.Code, Bad);
}

TEST(RelocateTest, JumpsInsideTheFunctionFollowTheCopy) {
  // The Tensile skip: the low half comes from an SGPR; the copy adds a
  // constant instead (here a literal, 4 bytes longer, which moves the
  // target too).
  auto F = assemble("gfx90a", "s_getpc_b64 s[60:61]\n"    // 0x1000
                              "s_add_i32 s62, 0x10, 4\n"  // 0x1004
                              "s_add_u32 s60, s60, s62\n" // 0x1008
                              "s_addc_u32 s61, s61, 0\n"  // 0x100c
                              "s_setpc_b64 s[60:61]\n"    // 0x1010
                              "v_mov_b32 v0, 0\n"         // 0x1014
                              "s_endpgm\n");              // 0x1018
  ASSERT_TRUE(F);
  ASSERT_EQ(F->G.Indirect.size(), 1u) << findingsOf(F->G);
  RelocationResult R = F->relocateTo(Far, {{5, nops(32)}});
  ASSERT_TRUE(R.Code) << R.Refusal.Message;
  const Relocated &C = *R.Code;
  // 0x14 + 0x80 is no inline constant: s_add_u32 takes a literal.
  EXPECT_EQ(C.Bytes.size(), F->Bytes.size() + 4 + 0x80);
  FunctionCFG G = F->graphOf(C);
  ASSERT_EQ(G.Indirect.size(), 1u);
  EXPECT_EQ(G.Indirect[0].second, C.LandAddr[6]);
  EXPECT_EQ(C.LandAddr[6], Far + 0x18 + 4 + 0x80);
  // s62 keeps its value: the copy does not change it.
  EXPECT_EQ(ArrayRef<uint8_t>(C.Bytes).slice(4, 4),
            ArrayRef<uint8_t>(F->Bytes).slice(4, 4));
  EXPECT_EQ(F->prove(C), "");
}

TEST(RelocateTest, CallsStayWithTheirCallee) {
  // A direct call to a function before this one reaches it from near,
  // not from far.
  auto F = assemble("gfx90a", "s_call_b64 s[30:31], -8\n" // -> 0xfe4
                              "s_endpgm\n");
  ASSERT_TRUE(F);
  CodeFunction Callee;
  Callee.Name = "callee";
  Callee.Begin = 0xf00;
  Callee.End = Base;
  F->Map.Functions.insert(F->Map.Functions.begin(), Callee);
  F->G = buildCFG(*F->MC, F->Map.Functions[1], F->Bytes, F->Map);
  ASSERT_TRUE(F->G.editable());
  RelocationResult Near = F->relocateTo(0x2000);
  ASSERT_TRUE(Near.Code) << Near.Refusal.Message;
  FunctionCFG G = F->graphOf(*Near.Code);
  ASSERT_EQ(G.Calls.size(), 1u);
  EXPECT_EQ(G.Calls[0].Target, 0xfe4u);
  EXPECT_EQ(F->prove(*Near.Code), "");
  RelocationResult Away = F->relocateTo(Far);
  ASSERT_FALSE(Away.Code);
  EXPECT_EQ(Away.Refusal.Kind, "branch out of reach");
}

TEST(RelocateTest, Refusals) {
  auto Used = assemble("gfx90a", "s_getpc_b64 s[4:5]\n"
                                 "v_mov_b32 v0, s4\n"
                                 "s_endpgm\n");
  ASSERT_TRUE(Used);
  RelocationResult R = Used->relocateTo(Far);
  EXPECT_FALSE(R.Code);
  EXPECT_EQ(R.Refusal.Kind, "unknown PC use");
  EXPECT_NE(R.Refusal.Message.find("s_getpc_b64 at 0x1000"), std::string::npos);

  auto Carry = assemble("gfx90a", "s_getpc_b64 s[4:5]\n"
                                  "s_add_u32 s4, s4, 0x100\n"
                                  "s_cmp_eq_u32 s0, 0\n"
                                  "s_addc_u32 s5, s5, 0\n"
                                  "s_endpgm\n");
  ASSERT_TRUE(Carry);
  R = Carry->relocateTo(Far);
  EXPECT_FALSE(R.Code);
  EXPECT_NE(R.Refusal.Message.find("carry"), std::string::npos);

  auto Unknown = assemble("gfx90a", "s_setpc_b64 s[8:9]\n");
  ASSERT_TRUE(Unknown);
  R = Unknown->relocateTo(Far);
  EXPECT_FALSE(R.Code);
  EXPECT_EQ(R.Refusal.Kind, "blocking finding");

  auto Loop = assemble("gfx90a", "v_mov_b32 v0, 0\n"
                                 "s_cbranch_scc0 -2\n"
                                 "s_endpgm\n");
  ASSERT_TRUE(Loop);
  R = Loop->relocateTo(Far, {{1, nops(0x8000)}});
  EXPECT_FALSE(R.Code);
  EXPECT_EQ(R.Refusal.Kind, "branch out of reach");
  // With registers for a long jump the branch is relaxed (below); with
  // none free it is refused all the same.
  FunctionSeams None = Loop->seams(Generation::GFX9, 0);
  R = Loop->relocateRelaxed(Far, {{1, nops(0x8000)}}, None);
  EXPECT_FALSE(R.Code);
  EXPECT_NE(R.Refusal.Message.find("no registers are free"), std::string::npos);
  R = Loop->relocateTo(Far, {{1, nops(0x7ffe)}});
  EXPECT_TRUE(R.Code) << R.Refusal.Message;

  auto Clause = assemble("gfx1100", "s_clause 0x1\n"
                                    "s_load_b32 s0, s[4:5], 0x0\n"
                                    "s_load_b32 s1, s[4:5], 0x4\n"
                                    "s_endpgm\n");
  ASSERT_TRUE(Clause);
  R = Clause->relocateTo(Far, {{2, nops(1)}});
  EXPECT_FALSE(R.Code);
  EXPECT_EQ(R.Refusal.Kind, "insertion in a window");
  R = Clause->relocateTo(Far, {{0, nops(1)}, {3, nops(1)}});
  EXPECT_TRUE(R.Code) << R.Refusal.Message;
}

TEST(RelocateTest, ReplacedInstructionsGiveWayToWhatReplacesThem) {
  auto F = assemble("gfx90a", "s_cmp_eq_u32 s0, 0\n" // 0
                              "s_cbranch_scc1 1\n"   // 1 -> insn 3
                              "v_mov_b32 v0, 1\n"    // 2 replaced
                              "v_mov_b32 v1, 2\n"    // 3 replaced
                              "s_endpgm\n");         // 4
  ASSERT_TRUE(F);
  Insertion A{2, nops(2), true}, B{3, nops(3), true};
  RelocationResult R = F->relocateTo(Far, {A, B});
  ASSERT_TRUE(R.Code) << R.Refusal.Message;
  const Relocated &C = *R.Code;
  // Neither original is copied: 8 + 12 bytes take their 8.
  EXPECT_EQ(C.Bytes.size(), F->Bytes.size() - 8 + 20);
  EXPECT_EQ(C.LandAddr[2], Far + 0x8);
  EXPECT_EQ(C.InsnAddr[2], Far + 0x10);
  EXPECT_EQ(C.LandAddr[3], Far + 0x10);
  EXPECT_EQ(C.InsnAddr[3], Far + 0x1c);
  // The branch to the second replaced instruction lands on its body.
  FunctionCFG G = F->graphOf(C);
  EXPECT_EQ(G.Insns[1].Target, Far + 0x10);
  // Two ranges, kept apart though adjacent.
  auto Ranges = C.insertedRanges();
  ASSERT_EQ(Ranges.size(), 2u);
  EXPECT_EQ(Ranges[0], std::make_pair(Far + 0x8, Far + 0x10));
  EXPECT_EQ(Ranges[1], std::make_pair(Far + 0x10, Far + 0x1c));
  EXPECT_EQ(F->prove(C, C.Bytes, {2, 3}), "");
  // Without the replaced instructions named, the copy is not the original.
  EXPECT_NE(F->prove(C, C.Bytes, {}), "");
  EXPECT_NE(F->prove(C, C.Bytes, {2}), "");
  // A replaced instruction with no range in its place is found.
  auto [Copy, Both] = F->copyOf(C);
  RelocationProofResult P =
      proveRelocation(*F->MC, F->G, F->Decoded, F->Bytes, Both, Copy, C.Bytes,
                      {Ranges[0]}, {2, 3});
  EXPECT_FALSE(P.proven());

  // What cannot be replaced: control flow, a part of a PC-relative
  // address, and a replacement followed by more code at the same place.
  R = F->relocateTo(Far, {{1, nops(1), true}});
  EXPECT_FALSE(R.Code);
  EXPECT_EQ(R.Refusal.Kind, "replaces control flow");
  R = F->relocateTo(Far, {{2, nops(1), true}, {2, nops(1)}});
  EXPECT_FALSE(R.Code);
  R = F->relocateTo(Far, {{2, {}, true}});
  EXPECT_FALSE(R.Code);
  auto PC = assemble("gfx90a", "s_getpc_b64 s[4:5]\n"
                               "s_add_u32 s4, s4, 0x100\n"
                               "s_addc_u32 s5, s5, 0\n"
                               "s_endpgm\n");
  ASSERT_TRUE(PC);
  R = PC->relocateTo(Far, {{1, nops(1), true}});
  EXPECT_FALSE(R.Code);
  EXPECT_NE(R.Refusal.Message.find("part of a PC-relative address"),
            std::string::npos);
}

/// The body \p Asm checked at site (\p I, \p W) of \p F: its problems.
std::string checkAt(const AsmFunction &F, uint32_t I, SiteWhere W,
                    StringRef Asm, RegisterLimits Limits = {102, 32}) {
  const RegisterModel &RM = RegisterModel::get(F.MC->regInfo());
  Liveness L =
      computeLiveness(*F.MC, F.G, F.Decoded, FunctionKind::Kernel, false);
  WaitCounts WC = computeWaitCounts(*F.MC, F.G, F.Decoded, FunctionKind::Kernel,
                                    Generation::GFX9);
  SiteRegisters Regs = siteRegisters(RM, F.G, L, WC, I, W, Limits);
  Expected<std::vector<uint8_t>> Body = F.MC->assemble(Asm);
  if (!Body)
    return toString(Body.takeError());
  std::string S;
  for (const BodyProblem &P :
       checkBody(*F.MC, *Body, false, WC.Set, Regs.Writable, Regs.InFlight))
    S += P.Message + "\n";
  return S;
}

TEST(SiteSafetyTest, BodiesWriteOnlyWhatTheSeamGives) {
  auto F = assemble("gfx90a", "s_load_dwordx2 s[2:3], s[0:1], 0x0\n" // 0
                              "v_mov_b32 v1, 1\n"                    // 1
                              "s_cmp_eq_u32 s4, 0\n"                 // 2
                              "v_mov_b32 v2, 2\n"                    // 3
                              "s_cbranch_scc1 1\n"                   // 4
                              "v_add_u32 v0, v1, v2\n"               // 5
                              "s_waitcnt lgkmcnt(0)\n"               // 6
                              "v_add_u32 v3, s2, v0\n"               // 7
                              "s_endpgm\n");                         // 8
  ASSERT_TRUE(F);
  // Before v_mov v2: v1 and SCC are live, v4 is not; s[2:3] is still
  // being loaded (s3, dead, as well).
  EXPECT_EQ(checkAt(*F, 3, SiteWhere::Before, "v_mov_b32 v4, 0"), "");
  EXPECT_NE(
      checkAt(*F, 3, SiteWhere::Before, "v_mov_b32 v1, 0").find("writes v1"),
      std::string::npos);
  EXPECT_NE(
      checkAt(*F, 3, SiteWhere::Before, "s_add_u32 s8, s8, 1").find("scc"),
      std::string::npos);
  EXPECT_NE(
      checkAt(*F, 3, SiteWhere::Before, "s_mov_b32 s3, 0").find("writes s3"),
      std::string::npos);
  EXPECT_EQ(checkAt(*F, 7, SiteWhere::Before, "s_mov_b32 s3, 0"), "");
  // Beyond the allocation (32 VGPRs here) nothing is given.
  EXPECT_NE(
      checkAt(*F, 3, SiteWhere::Before, "v_mov_b32 v40, 0").find("writes v40"),
      std::string::npos);
  // After the last read of SCC, s_add may write it.
  EXPECT_EQ(checkAt(*F, 7, SiteWhere::Before, "s_add_u32 s8, s8, 1"), "");
  // In place of v_add: its destination (live after it) is given, as is
  // what it reads and nothing after it does; before it, not those.
  EXPECT_EQ(checkAt(*F, 5, SiteWhere::Replace, "v_mov_b32 v0, 0"), "");
  EXPECT_EQ(checkAt(*F, 5, SiteWhere::Replace, "v_mov_b32 v1, 0"), "");
  EXPECT_NE(
      checkAt(*F, 5, SiteWhere::Before, "v_mov_b32 v1, 0").find("writes v1"),
      std::string::npos);
  EXPECT_NE(
      checkAt(*F, 6, SiteWhere::Before, "v_mov_b32 v0, 0").find("writes v0"),
      std::string::npos);
  // Memory the body issues is waited for inside it; no control flow.
  EXPECT_NE(checkAt(*F, 7, SiteWhere::Before, "ds_read_b32 v4, v5")
                .find("not waited for (lgkmcnt(0))"),
            std::string::npos);
  EXPECT_EQ(checkAt(*F, 7, SiteWhere::Before,
                    "ds_read_b32 v4, v5\ns_waitcnt lgkmcnt(0)"),
            "");
  // A register a load still writes is neither read nor written: the
  // guest's in flight at the seam, the body's own before its wait.
  EXPECT_NE(checkAt(*F, 3, SiteWhere::Before, "s_mov_b32 s8, s2")
                .find("reads or writes s2 while a load still writes it"),
            std::string::npos);
  EXPECT_EQ(checkAt(*F, 7, SiteWhere::Before, "s_mov_b32 s8, s2"), "");
  EXPECT_NE(checkAt(*F, 7, SiteWhere::Before,
                    "ds_read_b32 v4, v5\nv_mov_b32 v6, v4\n"
                    "s_waitcnt lgkmcnt(0)")
                .find("reads or writes v4 while a load still writes it"),
            std::string::npos);
  EXPECT_EQ(checkAt(*F, 7, SiteWhere::Before,
                    "ds_read_b32 v4, v5\ns_waitcnt lgkmcnt(0)\n"
                    "v_mov_b32 v6, v4"),
            "");
  EXPECT_NE(checkAt(*F, 7, SiteWhere::Before, "s_branch 0").find("jump"),
            std::string::npos);
  EXPECT_NE(checkAt(*F, 7, SiteWhere::Before, "s_getpc_b64 s[8:9]")
                .find("reads the PC"),
            std::string::npos);

  // Where no code goes: after a branch, before a join, in place of a
  // branch.
  EXPECT_NE(siteRefusal(F->G, 4, SiteWhere::After), "");
  EXPECT_NE(siteRefusal(F->G, 5, SiteWhere::After), ""); // 6 is a join
  EXPECT_EQ(siteRefusal(F->G, 6, SiteWhere::After), "");
  EXPECT_NE(siteRefusal(F->G, 4, SiteWhere::Replace), "");
  EXPECT_EQ(siteRefusal(F->G, 5, SiteWhere::Replace), "");
}

TEST(RelocateTest, BranchesOutOfReachAreRelaxedToLongJumps) {
  auto F = assemble("gfx90a", "s_cmp_eq_u32 s0, 0\n" // 0
                              "s_cbranch_scc1 2\n"   // 1 -> insn 4
                              "v_mov_b32 v0, 1\n"    // 2
                              "s_branch 1\n"         // 3 -> insn 5
                              "v_mov_b32 v0, s1\n"   // 4
                              "s_endpgm\n");         // 5
  ASSERT_TRUE(F);
  // 128 KiB before insn 2 puts insn 4 out of the conditional branch's reach.
  const std::vector<Insertion> Ins = {{2, nops(0x8000)}};
  FunctionSeams Seams = F->seams(Generation::GFX9);
  RelocationResult R = F->relocateRelaxed(Far, Ins, Seams);
  ASSERT_TRUE(R.Code) << R.Refusal.Message;
  const Relocated &C = *R.Code;
  EXPECT_EQ(C.BranchesRelaxed, 1u);
  // s_branch past it, then getpc, add, addc, setpc: SCC is dead at insn 4.
  ASSERT_EQ(C.Relaxed.size(), 1u);
  EXPECT_EQ(C.Relaxed[0], std::make_pair(Far + 8, Far + 8 + 28));
  EXPECT_EQ(C.LandAddr[2], Far + 8 + 28);
  EXPECT_EQ(C.Bytes.size(), F->Bytes.size() + 0x20000 + 28);
  std::vector<MCInst> Ops;
  FunctionCFG G = F->graphOf(C, &Ops);
  EXPECT_TRUE(G.editable()) << findingsOf(G);
  Expected<ReadRelaxation> RR = readRelaxation(*F->MC, G, Ops, 1, Far + 36);
  ASSERT_TRUE(bool(RR)) << toString(RR.takeError());
  EXPECT_EQ(RR->Entry, Far + 12);
  EXPECT_EQ(RR->Target, C.LandAddr[4]);
  EXPECT_EQ(RR->Regs.Pair, 2u); // s1 is read at the target; s0 goes with it
  EXPECT_FALSE(RR->Regs.SCCCopy);
  EXPECT_EQ(F->proveRelaxed(C, C.Bytes, &Seams), "");

  // The proof reads it back: a long jump elsewhere, registers not free at
  // the target, no analyses to prove them, no relaxation recorded.
  std::vector<uint8_t> Bad = C.Bytes;
  Bad[12 + 8] ^= 4; // s_add_u32's literal
  EXPECT_NE(F->proveRelaxed(C, Bad, &Seams).find("jumps to"),
            std::string::npos);
  FunctionSeams Small = F->seams(Generation::GFX9, 2);
  EXPECT_NE(F->proveRelaxed(C, C.Bytes, &Small)
                .find("s[2:3] may not be written there"),
            std::string::npos);
  EXPECT_NE(F->proveRelaxed(C, C.Bytes, nullptr).find("cannot be proven free"),
            std::string::npos);
  EXPECT_NE(F->prove(C).find("holds other instructions"), std::string::npos);
  // A relocator that took a live pair (s[0:1]: s1 is read at the target).
  RelocationResult Live =
      relocate(*F->MC, F->G, F->Decoded, F->Bytes, Far, Ins, [](uint32_t) {
        return std::optional<LongJumpRegs>(LongJumpRegs{0, std::nullopt});
      });
  ASSERT_TRUE(Live.Code) << Live.Refusal.Message;
  EXPECT_NE(F->proveRelaxed(*Live.Code, Live.Code->Bytes, &Seams)
                .find("s1 may not be written there"),
            std::string::npos);
  // Without a way to find registers, the branch is still refused.
  EXPECT_EQ(F->relocateTo(Far, Ins).Refusal.Kind, "branch out of reach");
}

TEST(RelocateTest, LongJumpsKeepSCCWhereTheTargetReadsIt) {
  // A loop whose branch reads SCC set before it: SCC is live at the loop
  // head, so the long jump back keeps it in an SGPR.
  auto F = assemble("gfx1100", "s_cmp_eq_u32 s0, 0\n"     // 0
                               "v_add_nc_u32 v0, 1, v0\n" // 1: loop head
                               "s_cbranch_scc0 -2\n"      // 2 -> insn 1
                               "s_endpgm\n");             // 3
  ASSERT_TRUE(F);
  FunctionSeams Seams = F->seams(Generation::GFX11);
  RelocationResult R = F->relocateRelaxed(Far, {{2, nops(0x8000)}}, Seams);
  ASSERT_TRUE(R.Code) << R.Refusal.Message;
  const Relocated &C = *R.Code;
  ASSERT_EQ(C.Relaxed.size(), 1u);
  EXPECT_EQ(C.Relaxed[0].second - C.Relaxed[0].first, 4u + 32u);
  std::vector<MCInst> Ops;
  FunctionCFG G = F->graphOf(C, &Ops);
  std::optional<uint32_t> Branch = G.insnAt(C.InsnAddr[2]);
  ASSERT_TRUE(Branch);
  Expected<ReadRelaxation> RR =
      readRelaxation(*F->MC, G, Ops, *Branch, C.Relaxed[0].second);
  ASSERT_TRUE(bool(RR)) << toString(RR.takeError());
  EXPECT_EQ(RR->Target, Far + 4);
  ASSERT_TRUE(RR->Regs.SCCCopy);
  EXPECT_EQ(F->proveRelaxed(C, C.Bytes, &Seams), "");
  // Without the compare that gives SCC back, SCC would change: s_cmp_lg_u32
  // turned into s_nop is no long jump of the form.
  std::vector<uint8_t> Bad = C.Bytes;
  uint64_t Cmp = C.Relaxed[0].second - 8 - Far;
  for (unsigned K = 0; K < 4; ++K)
    Bad[Cmp + K] = nops(1)[K];
  EXPECT_NE(F->proveRelaxed(C, Bad, &Seams).find("is not s_cmp_lg_u32"),
            std::string::npos);
}

TEST(RelocateTest, FallThroughCodeRunsOnlyOnTheWayIn) {
  auto F = assemble("gfx90a", "s_cmp_eq_u32 s0, 0\n" // 0
                              "s_cbranch_scc1 2\n"   // 1 -> insn 4
                              "v_mov_b32 v0, 1\n"    // 2
                              "s_branch 1\n"         // 3 -> insn 5
                              "v_mov_b32 v0, 2\n"    // 4
                              "s_endpgm\n");         // 5
  ASSERT_TRUE(F);
  // One word on the way 1 -> 2 before the two where control reaching 2
  // lands; one on the way 4 -> 5, which s_branch (3 -> 5) passes by.
  Insertion Edge{2, nops(1), false, true}, Edge5{5, nops(1), false, true};
  RelocationResult R = F->relocateTo(Far, {Edge, {2, nops(2)}, Edge5});
  ASSERT_TRUE(R.Code) << R.Refusal.Message;
  const Relocated &C = *R.Code;
  ASSERT_EQ(C.FallThrough.size(), 2u);
  EXPECT_EQ(C.FallThrough[0], std::make_pair(Far + 8, Far + 12));
  EXPECT_EQ(C.LandAddr[2], Far + 12);
  EXPECT_EQ(C.InsnAddr[2], Far + 20);
  EXPECT_EQ(C.FallThrough[1], std::make_pair(Far + 32, Far + 36));
  EXPECT_EQ(C.LandAddr[5], Far + 36);
  std::vector<MCInst> Ops;
  FunctionCFG G = F->graphOf(C, &Ops);
  std::optional<uint32_t> Branch = G.insnAt(C.InsnAddr[3]);
  ASSERT_TRUE(Branch);
  EXPECT_EQ(G.Insns[*Branch].Target, Far + 36); // past the way-in code
  auto Prove = [&](ArrayRef<std::pair<uint64_t, uint64_t>> Fall) {
    auto [Copy, Both] = F->copyOf(C);
    std::string S;
    for (const std::string &L :
         proveRelocation(*F->MC, F->G, F->Decoded, F->Bytes, Both, Copy,
                         C.Bytes, C.insertedRanges(), {}, false, {}, nullptr,
                         Fall)
             .Problems)
      S += L + "\n";
    return S;
  };
  EXPECT_EQ(Prove(C.FallThrough), "");
  // Taken for inserted code where control lands, it is not accepted.
  EXPECT_NE(Prove({}), "");
  // Only after an instruction that falls through: not after s_branch.
  RelocationResult Bad =
      F->relocateTo(Far, {Insertion{4, nops(1), false, true}});
  EXPECT_FALSE(Bad.Code);
  EXPECT_NE(Bad.Refusal.Message.find("falls through"), std::string::npos);
  // In the copy, a way-in range after s_branch is a problem too.
  RelocationResult Plain = F->relocateTo(Far, {{4, nops(1)}});
  ASSERT_TRUE(Plain.Code);
  auto [Copy, Both] = F->copyOf(*Plain.Code);
  std::vector<std::string> P =
      proveRelocation(*F->MC, F->G, F->Decoded, F->Bytes, Both, Copy,
                      Plain.Code->Bytes, {}, {}, false, {}, nullptr,
                      Plain.Code->insertedRanges())
          .Problems;
  ASSERT_FALSE(P.empty());
  EXPECT_NE(P[0].find("which does not fall through"), std::string::npos);
}

TEST(RelocateTest, Gfx1250AddsA64BitConstantToThePC) {
  // gfx1250's form: s_get_pc_i64, then one s_add_nc_u64 of a constant.
  auto F =
      assemble("gfx1250", "s_get_pc_i64 s[4:5]\n"                // 0x1004
                          "s_add_nc_u64 s[4:5], s[4:5], 0x100\n" // -> 0x1104
                          "s_load_b32 s6, s[4:5], 0x0\n"
                          "s_endpgm\n");
  ASSERT_TRUE(F);
  PCRelScan Orig = findPCRelative(*F->MC, F->G, F->Decoded);
  ASSERT_TRUE(Orig.Unknown.empty()) << Orig.Unknown.front().Message;
  ASSERT_EQ(Orig.Idioms.size(), 1u);
  EXPECT_EQ(Orig.Idioms[0].AddLo, Orig.Idioms[0].AddHi);
  EXPECT_EQ(Orig.Idioms[0].Target, 0x1104u);
  RelocationResult R = F->relocateTo(Far);
  ASSERT_TRUE(R.Code) << R.Refusal.Message;
  std::vector<MCInst> Ops;
  FunctionCFG G = F->graphOf(*R.Code, &Ops);
  PCRelScan Copy = findPCRelative(*F->MC, G, Ops);
  ASSERT_EQ(Copy.Idioms.size(), 1u);
  EXPECT_EQ(Copy.Idioms[0].Target, 0x1104u);
  // 0x1104 - 0x200004 is negative: the literal is a 64-bit one now.
  EXPECT_EQ(Copy.Idioms[0].Offset, uint64_t(0x1104) - (Far + 4));
  EXPECT_EQ(F->prove(*R.Code), "");
  std::vector<uint8_t> Bad = R.Code->Bytes;
  Bad[8] ^= 4; // the literal's low byte
  EXPECT_NE(F->prove(*R.Code, Bad).find("not the image of"), std::string::npos);
}

} // namespace

//===----------------------------------------------------------------------===//
// Code run from a site, in place (Code/InPlace.h)
//===----------------------------------------------------------------------===//

TEST(InPlaceTest, BranchesReachTwoToTheFifteenDwordsEitherWay) {
  // The offset counts dwords after the branch.
  EXPECT_EQ(branchOffset(0x1000, 0x1004, false), 0);
  EXPECT_EQ(branchOffset(0x1000, 0x1004 + 4 * 32767, false), 32767);
  EXPECT_EQ(branchOffset(0x1000, 0x1004 + 4 * 32768, false), std::nullopt);
  EXPECT_EQ(branchOffset(0x40000, 0x40004 - 4 * 32768, false), -32768);
  EXPECT_EQ(branchOffset(0x40000, 0x40004 - 4 * 32769, false), std::nullopt);
  EXPECT_EQ(branchOffset(0x1000, 0x1006, false), std::nullopt);
  // gfx1010's erratum forbids exactly 0x3f dwords.
  EXPECT_EQ(branchOffset(0x1000, 0x1004 + 4 * 0x3f, false), 0x3f);
  EXPECT_EQ(branchOffset(0x1000, 0x1004 + 4 * 0x3f, true), std::nullopt);
  EXPECT_EQ(branchOffset(0x1000, 0x1004 + 4 * 0x40, true), 0x40);
}

TEST(InPlaceTest, MovableInstructions) {
  auto F = assemble("gfx1030", "s_mov_b32 s0, 0\n"    // 0x1000
                               "s_getpc_b64 s[4:5]\n" // 0x1004
                               "s_clause 0x1\n"       // 0x1008
                               "s_load_dword s6, s[0:1], 0x0\n"
                               "s_load_dword s7, s[0:1], 0x4\n"
                               "s_cbranch_scc0 0\n"
                               "s_endpgm\n");
  ASSERT_TRUE(F);
  auto Refusal = [&](uint64_t Addr) {
    std::optional<uint32_t> I = F->G.insnAt(Addr);
    EXPECT_TRUE(I) << hex(Addr);
    return I ? movableRefusal(*F->MC, F->G, F->Decoded[*I], *I) : "";
  };
  EXPECT_EQ(Refusal(0x1000), "");
  EXPECT_NE(Refusal(0x1004).find("reads the PC"), std::string::npos);
  EXPECT_NE(Refusal(0x1008).find("applies to the instructions after it"),
            std::string::npos);
  EXPECT_EQ(Refusal(0x100c), "");
  EXPECT_NE(Refusal(0x101c).find("control flow"), std::string::npos);
  EXPECT_NE(Refusal(0x1020).find("control flow"), std::string::npos);
}

TEST(InPlaceTest, BodiesAreReadBackAsTheirLayout) {
  for (StringRef CPU : {"gfx90a", "gfx1010", "gfx1100"}) {
    SCOPED_TRACE(CPU.str());
    auto F = assemble(CPU, "s_mov_b32 s0, 0\n"
                           "v_mov_b32 v0, 0x12345678\n" // 0x1004, 8 bytes
                           "s_endpgm\n");
    ASSERT_TRUE(F);
    const bool Waits = CPU == "gfx1010";
    EXPECT_EQ(bodyWaitsAtEnds(*F->MC), Waits);
    ArrayRef<uint8_t> Orig = ArrayRef<uint8_t>(F->Bytes).slice(4, 8);
    Expected<std::vector<uint8_t>> Ins = F->MC->assemble("s_setprio 3\n"
                                                         "s_nop 1\n");
    ASSERT_TRUE(bool(Ins));
    const uint64_t At = 0x8000, Site = 0x1004;
    for (SiteWhere W :
         {SiteWhere::Before, SiteWhere::After, SiteWhere::Replace}) {
      SCOPED_TRACE(siteWhereName(W).str());
      Expected<InPlaceBody> B = inPlaceBody(*F->MC, W, Site, Orig, *Ins, At);
      ASSERT_TRUE(bool(B)) << toString(B.takeError());
      EXPECT_EQ(B->Bytes.size(),
                inPlaceBodySize(*F->MC, W, Orig.size(), Ins->size()));
      EXPECT_EQ(B->InsertEnd - B->InsertBegin, Ins->size());
      auto Check = [&](ArrayRef<uint8_t> Bytes) {
        std::string S;
        for (const std::string &P :
             checkInPlaceBody(*F->MC, W, Site, Orig, Bytes, At, B->InsertBegin,
                              B->InsertEnd))
          S += P + "\n";
        return S;
      };
      EXPECT_EQ(Check(B->Bytes), "");
      // Every byte outside the inserted code is the layout's: a bit
      // flipped there is found.
      for (size_t I = 0; I < B->Bytes.size(); ++I) {
        if (I >= B->InsertBegin && I < B->InsertEnd)
          continue;
        std::vector<uint8_t> Bad = B->Bytes;
        Bad[I] ^= 0x10;
        EXPECT_NE(Check(Bad), "") << "byte " << I;
      }
      // The branch back lands after the site.
      Expected<std::vector<uint8_t>> Slot =
          inPlaceSlot(*F->MC, Site, Orig.size(), At);
      ASSERT_TRUE(bool(Slot));
      EXPECT_EQ(Slot->size(), 8u);
      EXPECT_EQ(checkInPlaceSlot(*F->MC, *Slot, Site, At), "");
      EXPECT_NE(checkInPlaceSlot(*F->MC, *Slot, Site, At + 4), "");
      std::vector<uint8_t> Junk = *Slot;
      Junk[4] ^= 1; // s_nop 1: still never runs, but not the fill
      EXPECT_NE(checkInPlaceSlot(*F->MC, Junk, Site, At), "");
    }
    // Returning with a long jump (the body is reached through a gateway):
    // read back, every byte of it checked.
    for (SiteWhere W :
         {SiteWhere::Before, SiteWhere::After, SiteWhere::Replace}) {
      SCOPED_TRACE(siteWhereName(W).str());
      const LongJumpRegs Back{4, std::nullopt};
      Expected<InPlaceBody> B =
          inPlaceBody(*F->MC, W, Site, Orig, *Ins, Far, &Back);
      ASSERT_TRUE(bool(B)) << toString(B.takeError());
      EXPECT_EQ(B->Bytes.size(),
                inPlaceBodySize(*F->MC, W, Orig.size(), Ins->size(), &Back));
      auto Check = [&](ArrayRef<uint8_t> Bytes,
                       std::optional<ReadRelaxation> *Read) {
        std::string S;
        for (const std::string &P :
             checkInPlaceBody(*F->MC, W, Site, Orig, Bytes, Far, B->InsertBegin,
                              B->InsertEnd, Read))
          S += P + "\n";
        return S;
      };
      std::optional<ReadRelaxation> Read;
      EXPECT_EQ(Check(B->Bytes, &Read), "");
      ASSERT_TRUE(Read);
      EXPECT_EQ(Read->Target, Site + Orig.size());
      EXPECT_EQ(Read->Regs.Pair, 4u);
      // Without a gateway to prove it, a long jump back is a problem.
      EXPECT_NE(Check(B->Bytes, nullptr), "");
      for (size_t I = B->InsertEnd; I < B->Bytes.size(); ++I) {
        std::vector<uint8_t> Bad = B->Bytes;
        Bad[I] ^= 0x10;
        std::optional<ReadRelaxation> R;
        std::string P = Check(Bad, &R);
        // A flip in the pair's number may make another long jump back
        // that reaches the same place: then its registers differ.
        EXPECT_TRUE(!P.empty() || (R && R->Regs.Pair != 4)) << "byte " << I;
      }
      // A gateway to the body reads back as the same long jump.
      Expected<std::vector<uint8_t>> Gw =
          gatewayCode(*F->MC, Back, 0x1100, Far);
      ASSERT_TRUE(bool(Gw));
      Expected<ReadRelaxation> G = readLongJump(*F->MC, *Gw, 0x1100);
      ASSERT_TRUE(bool(G)) << toString(G.takeError());
      EXPECT_EQ(G->Target, Far);
    }
    // Out of reach: an error, not a wrong branch.
    EXPECT_FALSE(bool(inPlaceSlot(*F->MC, Site, 8, Far)));
    Expected<InPlaceBody> B =
        inPlaceBody(*F->MC, SiteWhere::Before, Site, Orig, *Ins, Far);
    EXPECT_FALSE(bool(B));
    consumeError(B.takeError());
  }
}

TEST(InPlaceTest, GatewaysGoInPaddingBeforeAFunction) {
  FunctionMap M;
  for (auto [B, E] :
       {std::pair<uint64_t, uint64_t>{0x1000, 0x10f0}, {0x1100, 0x1180}})
    M.Functions.push_back({"f", FunctionKind::Kernel, nullptr, B, E});
  auto Gap = [](uint64_t B, uint64_t E, GapKind K) {
    return CodeGap{nullptr, B, E, K};
  };
  for (GapKind K : {GapKind::Nops, GapKind::CodeEnd, GapKind::Zeros})
    EXPECT_TRUE(isGatewayRoom(Gap(0x10f0, 0x1100, K), M));
  // Bytes nobody claims, the tail after the last function, a gap longer
  // than alignment makes, one not word-aligned.
  EXPECT_FALSE(isGatewayRoom(Gap(0x10f0, 0x1100, GapKind::Unclaimed), M));
  EXPECT_FALSE(isGatewayRoom(Gap(0x1180, 0x1200, GapKind::Nops), M));
  EXPECT_FALSE(isGatewayRoom(Gap(0x0f00, 0x1000, GapKind::Nops), M));
  EXPECT_FALSE(isGatewayRoom(Gap(0x10f2, 0x1100, GapKind::Nops), M));
}
