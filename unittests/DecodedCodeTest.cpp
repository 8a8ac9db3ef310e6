//===- unittests/DecodedCodeTest.cpp - Decoded code: CFG and liveness -----===//
//
// The Code layer's view of code as it is: instructions decoded by LLVM MC,
// the control-flow graph (branch forms, calls, the PC-relative jump idioms,
// findings) and register liveness (lane-conservative through EXEC values).
// Each test assembles a small function with LLVM MC and checks the facts a
// client relies on.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Liveness.h"
#include "hotswap/Code/Registers.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace hotswap::code;

namespace {

constexpr uint64_t Base = 0x1000;

/// One function assembled from text, with its graph and liveness.
struct Fn {
  std::unique_ptr<TargetMC> MC;
  std::vector<uint8_t> Bytes;
  CodeFunction F;
  FunctionMap Map;
  FunctionCFG G;
  Liveness L;

  const RegisterModel &rm() const { return RegisterModel::get(MC->regInfo()); }
  /// The live set before the instruction at \p Addr, as text.
  std::string liveAt(uint64_t Addr) const {
    std::optional<uint32_t> I = G.insnAt(Addr);
    if (!I)
      return "<no instruction>";
    uint32_t B = G.blockOf(*I);
    return rm().format(L.liveBefore(B)[*I - G.Blocks[B].First]);
  }
  std::string liveIn(uint32_t B = 0) const { return rm().format(L.LiveIn[B]); }
};

std::unique_ptr<Fn> build(StringRef MCPU, StringRef Asm,
                          FunctionKind Kind = FunctionKind::Kernel,
                          bool Wave32 = false, StringRef Features = "") {
  auto R = std::make_unique<Fn>();
  Expected<std::unique_ptr<TargetMC>> MC = TargetMC::create(MCPU, Features);
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
  R->F.Name = "f";
  R->F.Kind = Kind;
  R->F.Begin = Base;
  R->F.End = Base + R->Bytes.size();
  R->F.Wave32 = Wave32;
  R->Map.Functions.push_back(R->F);
  R->G = buildCFG(*R->MC, R->F, R->Bytes, R->Map);
  R->L = computeLiveness(*R->MC, R->G, R->Bytes, Kind, Wave32);
  return R;
}

std::string findings(const FunctionCFG &G) {
  std::string S;
  for (const CodeFinding &F : G.Findings)
    S += (F.Blocking ? "[blocking] " : "[note] ") + F.Message + "\n";
  return S;
}

TEST(DecodedCodeTest, BlocksAndEdges) {
  // 0x1000 s_cmp  0x1004 s_cbranch_scc1 -> 0x1010  0x1008 v_mov
  // 0x100c s_branch -> 0x1014  0x1010 v_mov  0x1014 s_endpgm
  auto F = build("gfx90a", "s_cmp_eq_u32 s0, 0\n"
                           "s_cbranch_scc1 2\n"
                           "v_mov_b32 v0, 1\n"
                           "s_branch 1\n"
                           "v_mov_b32 v0, 2\n"
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  const FunctionCFG &G = F->G;
  EXPECT_EQ(findings(G), "");
  ASSERT_EQ(G.Blocks.size(), 4u);
  EXPECT_EQ(G.Insns[G.Blocks[1].First].Addr, 0x1008u);
  EXPECT_EQ(G.Insns[G.Blocks[2].First].Addr, 0x1010u);
  EXPECT_EQ(G.Insns[G.Blocks[3].First].Addr, 0x1014u);
  ASSERT_EQ(G.Blocks[0].Succs.size(), 2u);
  EXPECT_EQ(G.Blocks[0].Succs[0].To, 2u);
  EXPECT_EQ(G.Blocks[0].Succs[0].Kind, EdgeKind::Taken);
  EXPECT_EQ(G.Blocks[0].Succs[1].To, 1u);
  EXPECT_EQ(G.Blocks[0].Succs[1].Kind, EdgeKind::FallThrough);
  ASSERT_EQ(G.Blocks[1].Succs.size(), 1u);
  EXPECT_EQ(G.Blocks[1].Succs[0].To, 3u);
  EXPECT_EQ(G.Blocks[1].Succs[0].Kind, EdgeKind::Jump);
  EXPECT_EQ(G.Blocks[3].Exit, BlockExit::EndProgram);
  EXPECT_TRUE(G.editable());
  for (const Block &B : G.Blocks)
    EXPECT_TRUE(B.Reachable);
}

TEST(DecodedCodeTest, PCRelativeJumpIsResolved) {
  // s_getpc gives 0x1004; + 0xc = 0x1010, the s_endpgm.
  auto F = build("gfx90a", "s_getpc_b64 s[4:5]\n"    // 0x1000
                           "s_add_u32 s4, s4, 0xc\n" // 0x1004
                           "s_addc_u32 s5, s5, 0\n"  // 0x1008
                           "s_setpc_b64 s[4:5]\n"    // 0x100c
                           "s_endpgm\n");            // 0x1010
  ASSERT_TRUE(F);
  EXPECT_EQ(findings(F->G), "");
  ASSERT_EQ(F->G.Indirect.size(), 1u);
  EXPECT_EQ(F->G.Indirect[0].second, 0x1010u);
  ASSERT_EQ(F->G.Blocks.size(), 2u);
  ASSERT_EQ(F->G.Blocks[0].Succs.size(), 1u);
  EXPECT_EQ(F->G.Blocks[0].Succs[0].Kind, EdgeKind::Indirect);
  EXPECT_EQ(F->G.Blocks[0].Succs[0].To, 1u);
}

TEST(DecodedCodeTest, TensileSkipFormIsResolved) {
  // The offset is built in an SGPR first, then added with carry.
  auto F = build("gfx90a", "s_getpc_b64 s[60:61]\n"    // 0x1000, pc 0x1004
                           "s_add_i32 s62, 0x14, 4\n"  // 0x1004: 0x18
                           "s_add_u32 s60, s60, s62\n" // 0x1008
                           "s_addc_u32 s61, s61, 0\n"  // 0x100c
                           "s_setpc_b64 s[60:61]\n"    // 0x1010
                           "v_mov_b32 v0, 0\n"         // 0x1014
                           "v_mov_b32 v0, 1\n"         // 0x1018
                           "s_endpgm\n");              // 0x101c
  ASSERT_TRUE(F);
  ASSERT_EQ(F->G.Indirect.size(), 1u) << findings(F->G);
  EXPECT_EQ(F->G.Indirect[0].second, 0x101cu);
  // The skipped instructions are a block nothing reaches (not blocking).
  EXPECT_TRUE(F->G.editable()) << findings(F->G);
  EXPECT_NE(findings(F->G).find("not reachable"), std::string::npos);
}

TEST(DecodedCodeTest, UnknownJumpBlocksEditing) {
  auto F = build("gfx90a", "s_setpc_b64 s[8:9]\n");
  ASSERT_TRUE(F);
  EXPECT_FALSE(F->G.editable());
  EXPECT_NE(findings(F->G).find("cannot compute"), std::string::npos);
  // Everything is live there: nothing may be taken as dead.
  EXPECT_EQ(F->G.Blocks[0].Exit, BlockExit::Unresolved);
  EXPECT_NE(F->liveIn().find("v[0:"), std::string::npos);
}

TEST(DecodedCodeTest, DeviceFunctionReturn) {
  auto F = build("gfx90a", "v_add_u32 v0, v0, v1\ns_setpc_b64 s[30:31]\n",
                 FunctionKind::Device);
  ASSERT_TRUE(F);
  EXPECT_TRUE(F->G.editable()) << findings(F->G);
  EXPECT_EQ(F->G.Blocks[0].Exit, BlockExit::Return);
}

TEST(DecodedCodeTest, CallsAndBadTargets) {
  auto F = build("gfx90a", "s_call_b64 s[30:31], 1\n" // 0x1000 -> 0x1008
                           "s_endpgm\n"               // 0x1004
                           "s_branch 0x40\n");        // 0x1008 -> outside
  ASSERT_TRUE(F);
  ASSERT_EQ(F->G.Calls.size(), 1u);
  ASSERT_TRUE(F->G.Calls[0].Target);
  EXPECT_EQ(*F->G.Calls[0].Target, 0x1008u);
  EXPECT_NE(findings(F->G).find("outside every function"), std::string::npos);
  EXPECT_FALSE(F->G.editable());

  // Into the middle of an 8-byte instruction.
  auto M = build("gfx90a", "s_branch 1\n"                // -> 0x1008
                           "s_add_u32 s0, s0, 0x12345\n" // 0x1004 (8)
                           "s_endpgm\n");
  ASSERT_TRUE(M);
  EXPECT_NE(findings(M->G).find("inside an instruction"), std::string::npos);
  EXPECT_FALSE(M->G.editable());
}

TEST(DecodedCodeTest, UndecodableBytesAreAFinding) {
  auto F = build("gfx90a", "v_mov_b32 v0, 0\n.long 0xffffffff\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->G.Insns.size(), 1u);
  EXPECT_NE(findings(F->G).find("do not decode"), std::string::npos);
  EXPECT_FALSE(F->G.editable());
}

TEST(DecodedCodeTest, ScalarWritesKill) {
  auto F = build("gfx90a", "s_mov_b32 s2, s1\n"    // 0x1000
                           "s_add_u32 s3, s2, 1\n" // 0x1004
                           "s_endpgm\n");          // 0x1008
  ASSERT_TRUE(F);
  EXPECT_EQ(F->liveIn(), "s1");
  EXPECT_EQ(F->liveAt(0x1004), "s2");
  EXPECT_EQ(F->liveAt(0x1008), "");
}

TEST(DecodedCodeTest, VectorWriteUnderFullExecKills) {
  auto F = build("gfx90a", "v_mov_b32 v1, 0\n"
                           "v_add_u32 v2, v1, v0\n"
                           "global_store_dword v[4:5], v2, off\n"
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->liveIn(), "v0 v[4:5] exec");
}

// The structured if: a value written in the 'then' lanes and read after
// the join in all lanes keeps its old value in the other lanes.
TEST(DecodedCodeTest, WriteUnderNarrowedExecReadAfterRestore) {
  auto F = build("gfx90a", "v_cmp_gt_u32 vcc, 64, v0\n"           // 0x1000
                           "s_and_saveexec_b64 s[2:3], vcc\n"     // 0x1004
                           "v_mov_b32 v1, 0\n"                    // 0x1008
                           "s_or_b64 exec, exec, s[2:3]\n"        // 0x100c
                           "global_store_dword v[4:5], v1, off\n" // 0x1010
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  // v1's old value is read in the lanes the 'then' did not write.
  EXPECT_EQ(F->liveIn(), "v[0:1] v[4:5] exec");
  EXPECT_FALSE(F->L.ExecFullBefore[2]);
  EXPECT_TRUE(F->L.ExecFullBefore[4]); // restored exactly
}

// Written and read under the same narrowed EXEC: the old value is dead.
TEST(DecodedCodeTest, WriteAndReadUnderTheSameExec) {
  auto F = build("gfx90a", "v_cmp_gt_u32 vcc, 64, v0\n"
                           "s_and_saveexec_b64 s[2:3], vcc\n"
                           "v_mov_b32 v1, 0\n"
                           "global_store_dword v[4:5], v1, off\n"
                           "s_or_b64 exec, exec, s[2:3]\n"
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->liveIn(), "v0 v[4:5] exec");
}

// A write whose EXEC is unknown (here: a mask from memory) ends no life.
TEST(DecodedCodeTest, UnknownExecWriteEndsNoVectorLife) {
  auto F = build("gfx90a", "s_load_dwordx2 s[2:3], s[0:1], 0\n"
                           "s_waitcnt lgkmcnt(0)\n"
                           "s_mov_b64 exec, s[2:3]\n"
                           "v_mov_b32 v1, 0\n"
                           "s_mov_b64 exec, -1\n"
                           "global_store_dword v[4:5], v1, off\n"
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->liveIn(), "s[0:1] v1 v[4:5]");
}

// A loop whose lanes leave one by one (the mask in s[4:5] collects them)
// and the restore after it: what is written before the loop in all lanes
// and read in it is dead at the entry.
TEST(DecodedCodeTest, LoopMaskAndRestore) {
  auto F = build("gfx90a",
                 "v_cmp_gt_u32 vcc, 64, v0\n"       // 0x1000
                 "s_and_saveexec_b64 s[2:3], vcc\n" // 0x1004
                 "s_mov_b64 s[4:5], 0\n"            // 0x1008
                 "v_mov_b32 v1, 0\n"                // 0x100c
                 // loop: 0x1010
                 "v_add_u32 v1, 1, v1\n"                // 0x1010
                 "v_cmp_le_u32 vcc, 16, v1\n"           // 0x1014
                 "s_or_b64 s[4:5], vcc, s[4:5]\n"       // 0x1018
                 "s_andn2_b64 exec, exec, s[4:5]\n"     // 0x101c
                 "s_cbranch_execnz 65531\n"             // 0x1020 -> 0x1010
                 "s_or_b64 exec, exec, s[4:5]\n"        // 0x1024
                 "global_store_dword v[4:5], v1, off\n" // 0x1028
                 "s_or_b64 exec, exec, s[2:3]\n"        // 0x1030
                 "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(findings(F->G), "");
  EXPECT_EQ(F->liveIn(), "v0 v[4:5] exec");
}

TEST(DecodedCodeTest, ReadLaneReadsOtherLanes) {
  // v1 written under a narrowed EXEC, then read by v_readlane in any lane.
  auto F = build("gfx90a", "v_cmp_gt_u32 vcc, 64, v0\n"
                           "s_and_saveexec_b64 s[2:3], vcc\n"
                           "v_mov_b32 v1, 0\n"
                           "v_readlane_b32 s6, v1, 63\n"
                           "s_or_b64 exec, exec, s[2:3]\n"
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->liveIn(), "v[0:1] exec");
}

TEST(DecodedCodeTest, Wave32UsesTheLowHalves) {
  auto F = build("gfx1100",
                 "v_cmp_gt_u32 vcc_lo, 64, v0\n"
                 "v_cndmask_b32 v1, 0, 1, vcc_lo\n"
                 "global_store_b32 v[4:5], v1, off\n"
                 "s_endpgm\n",
                 FunctionKind::Kernel, /*Wave32=*/true, "+wavefrontsize32");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->liveIn(), "v0 v[4:5] exec_lo");
}

TEST(DecodedCodeTest, LDSReadsM0OnlyBeforeGFX9) {
  auto Old = build("gfx803", "ds_read_b32 v1, v0\ns_endpgm\n");
  auto New = build("gfx900", "ds_read_b32 v1, v0\ns_endpgm\n");
  ASSERT_TRUE(Old && New);
  EXPECT_EQ(Old->liveIn(), "v0 exec m0");
  EXPECT_EQ(New->liveIn(), "v0 exec");
}

TEST(DecodedCodeTest, CallsReadEverything) {
  auto F = build("gfx90a", "s_getpc_b64 s[4:5]\n"
                           "s_add_u32 s4, s4, 0x100\n"
                           "s_addc_u32 s5, s5, 0\n"
                           "s_swappc_b64 s[30:31], s[4:5]\n"
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  ASSERT_EQ(F->G.Calls.size(), 1u);
  ASSERT_TRUE(F->G.Calls[0].Target);
  EXPECT_EQ(*F->G.Calls[0].Target, 0x1004u + 0x100u);
  EXPECT_NE(F->liveIn().find("v[0:"), std::string::npos);
}

TEST(DecodedCodeTest, RegisterSetsFormat) {
  auto MC = TargetMC::create("gfx90a", "");
  ASSERT_OK(MC);
  const RegisterModel &RM = RegisterModel::get((*MC)->regInfo());
  RegSet S = RM.emptySet();
  RM.addSGPRs(0, 6, S);
  RM.addSGPRs(8, 1, S);
  RM.addVGPRs(3, 2, S);
  RM.addClass(RegClass::SCC, S);
  EXPECT_EQ(RM.format(S), "s[0:5] s8 v[3:4] scc");
  EXPECT_EQ(RM.highest(S, RegClass::SGPR), 8u);
  EXPECT_EQ(RM.highest(S, RegClass::AGPR), std::nullopt);
}

} // namespace
