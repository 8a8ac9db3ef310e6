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
#include "hotswap/Code/EdgeCounts.h"
#include "hotswap/Code/Liveness.h"
#include "hotswap/Code/Registers.h"
#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Code/WaitCounts.h"
#include "hotswap/Support/Format.h"

#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCRegisterInfo.h"

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

  /// The memory operations in flight before the instruction at \p Addr.
  std::string waitsAt(Generation Gen, uint64_t Addr) const {
    WaitCounts W = computeWaitCounts(*MC, G, Bytes, F.Kind, Gen);
    std::optional<uint32_t> I = G.insnAt(Addr);
    if (!I)
      return "<no instruction>";
    uint32_t B = G.blockOf(*I);
    return W.statesBefore(B)[*I - G.Blocks[B].First].format(W.Set, rm());
  }
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

/// The LiveBound of \p F, from the instructions of its graph.
static LiveBound boundOf(const Fn &F) {
  return LiveBound(F.rm(), F.G,
                   instructionRegs(*F.MC,
                                   decodeInsns(*F.MC, F.G.Insns, F.Bytes, Base),
                                   F.F.Wave32));
}

// The site planner checks bodies against LiveBound before it computes
// liveness: the bound must hold everything liveness says is live, at
// every seam, or a body could write a live register.
TEST(DecodedCodeTest, LiveBoundHoldsWhatIsLive) {
  const char *Code[] = {
      // Scalar values, SCC, a loop, EXEC narrowed and given back.
      "s_load_dwordx2 s[4:5], s[0:1], 0\n"
      "s_mov_b32 s6, 0\n"
      "s_cmp_eq_u32 s2, 0\n"
      "s_cbranch_scc1 2\n"
      "v_cmp_gt_u32 vcc, v0, v1\n"
      "s_and_saveexec_b64 s[8:9], vcc\n"
      "s_add_u32 s6, s6, 1\n"
      "s_cmp_lt_u32 s6, s3\n"
      "s_cbranch_scc1 -3\n"
      "s_or_b64 exec, exec, s[8:9]\n"
      "s_waitcnt lgkmcnt(0)\n"
      "v_mov_b32 v2, s6\n"
      "global_store_dword v[4:5], v2, off\n"
      "s_endpgm\n",
      // Read and written by one instruction; written before read.
      "s_add_u32 s0, s0, 1\n"
      "s_mov_b32 s1, 2\n"
      "s_add_u32 s2, s1, s0\n"
      "s_cmp_eq_u32 s2, 0\n"
      "s_cselect_b32 s3, 1, 0\n"
      "v_mov_b32 v0, s3\n"
      "global_store_dword v[2:3], v0, off\n"
      "s_endpgm\n",
  };
  for (const char *Asm : Code) {
    auto F = build("gfx90a", Asm);
    ASSERT_TRUE(F);
    LiveBound LB = boundOf(*F);
    ASSERT_TRUE(LB.holds());
    for (uint32_t I = 0; I < F->G.Insns.size(); ++I) {
      const uint32_t B = F->G.blockOf(I);
      RegSet After = I + 1 < F->G.Blocks[B].End ? F->L.liveBeforeInsn(I + 1)
                                                : F->L.LiveOut[B];
      for (auto [W, Live] :
           {std::pair(SiteWhere::Before, F->L.liveBeforeInsn(I)),
            std::pair(SiteWhere::After, After),
            std::pair(SiteWhere::Replace, After)}) {
        RegSet Missing = Live;
        Missing.reset(LB.at(I, W));
        EXPECT_TRUE(Missing.none())
            << "before instruction " << I << " (" << int(W)
            << "): " << F->rm().format(Missing) << " live but not bound";
      }
    }
  }
  // What it leaves out: registers no instruction names, and scalar ones the
  // block writes before it reads them; what it keeps: s0, read by the
  // instruction that writes it, and every register the code names.
  auto F = build("gfx90a", Code[1]);
  ASSERT_TRUE(F);
  LiveBound LB = boundOf(*F);
  EXPECT_EQ(F->rm().format(LB.at(0, SiteWhere::Before)), "s0 v0 v[2:3] exec");
  EXPECT_EQ(F->rm().format(LB.named()), "s[0:3] v0 v[2:3] exec scc");
}

// Where a register the code never names may still be live -- a device
// function's return, a call -- there is no bound.
TEST(DecodedCodeTest, NoLiveBoundWhereExitsKeepRegisters) {
  auto Ret = build("gfx90a", "s_mov_b32 s4, 0\ns_setpc_b64 s[30:31]\n",
                   FunctionKind::Device);
  ASSERT_TRUE(Ret);
  EXPECT_FALSE(boundOf(*Ret).holds());
  auto Call = build("gfx90a", "s_getpc_b64 s[4:5]\n"
                              "s_swappc_b64 s[30:31], s[4:5]\n"
                              "s_endpgm\n");
  ASSERT_TRUE(Call);
  EXPECT_FALSE(boundOf(*Call).holds());
  auto End = build("gfx90a", "s_mov_b32 s4, 0\ns_endpgm\n");
  ASSERT_TRUE(End);
  EXPECT_TRUE(boundOf(*End).holds());
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

// After the loop's lanes have all left, EXEC | the exit mask is again
// every lane that entered it: a write there covers a read under that EXEC
// (here restored from a copy taken before the loop).
TEST(DecodedCodeTest, LoopExitRestoresTheLanesThatEntered) {
  auto Loop = [](StringRef InLoop) {
    return (Twine("v_cmp_gt_u32 vcc, 64, v0\n"
                  "s_and_saveexec_b64 s[2:3], vcc\n" // 0x1004
                  "s_mov_b64 s[6:7], exec\n"         // 0x1008
                  "s_mov_b64 s[4:5], 0\n"            // 0x100c
                  "v_mov_b32 v6, 0\n"                // 0x1010
                  // loop: 0x1014
                  "v_add_u32 v6, 1, v6\n"          // 0x1014
                  "v_cmp_le_u32 vcc, 16, v6\n"     // 0x1018
                  "s_or_b64 s[4:5], vcc, s[4:5]\n" // 0x101c
                  ) +
            InLoop +
            "s_andn2_b64 exec, exec, s[4:5]\n"
            "s_cbranch_execnz 65530\n" // -> 0x1014
            "s_or_b64 exec, exec, s[4:5]\n"
            "v_mov_b32 v1, 0\n"
            "s_mov_b64 exec, s[6:7]\n"
            "global_store_dword v[4:5], v1, off\n"
            "s_or_b64 exec, exec, s[2:3]\n"
            "s_endpgm\n")
        .str();
  };
  auto F = build("gfx90a", Loop("s_nop 0\n"));
  ASSERT_TRUE(F);
  EXPECT_EQ(findings(F->G), "");
  EXPECT_EQ(F->liveIn(), "v0 v[4:5] exec");
  // A loop that also drops lanes another way does not give them back.
  auto Lost = build("gfx90a", Loop("s_and_b64 exec, exec, s[8:9]\n"));
  ASSERT_TRUE(Lost);
  EXPECT_EQ(findings(Lost->G), "");
  EXPECT_EQ(Lost->liveIn(), "s[8:9] v[0:1] v[4:5] exec");
}

// The else of an if: its lanes and the then's lanes are together the
// lanes before the if, both where the else starts (s_or_saveexec) and
// where it ends.
TEST(DecodedCodeTest, ThenAndElseLanesMakeTheWhole) {
  auto IfElse = [](StringRef InThen) {
    return (Twine("v_cmp_gt_u32 vcc, 64, v0\n"
                  "s_and_saveexec_b64 s[2:3], vcc\n"
                  "s_xor_b64 s[2:3], exec, s[2:3]\n"
                  "v_mov_b32 v6, 1\n") +
            InThen +
            "s_or_saveexec_b64 s[2:3], s[2:3]\n"
            "v_mov_b32 v1, 2\n"
            "s_xor_b64 exec, exec, s[2:3]\n"
            "v_mov_b32 v6, 2\n"
            "s_or_b64 exec, exec, s[2:3]\n"
            "global_store_dword v[4:5], v1, off\n"
            "s_endpgm\n")
        .str();
  };
  auto F = build("gfx90a", IfElse(""));
  ASSERT_TRUE(F);
  EXPECT_EQ(F->liveIn(), "v0 v[4:5] exec");
  EXPECT_TRUE(F->L.ExecFullBefore[5]); // v_mov_b32 v1, 2
  EXPECT_TRUE(F->L.ExecFullBefore[9]); // the store
  // A 'then' that loses lanes: the two parts no longer make the whole.
  auto Lost = build("gfx90a", IfElse("s_and_b64 exec, exec, s[8:9]\n"));
  ASSERT_TRUE(Lost);
  EXPECT_EQ(Lost->liveIn(), "s[8:9] v[0:1] v[4:5] exec");
}

// Nested loops that both narrow EXEC: the inner header's lanes are a
// subset of the outer header's (whatever the analysis took them for on
// its first pass), so a write under the outer loop's EXEC covers a read
// under the inner loop's.
TEST(DecodedCodeTest, InnerLoopLanesWithinTheOuterLoops) {
  auto F = build("gfx90a",
                 // outer: 0x1000
                 "s_mov_b64 s[8:9], exec\n"             // 0x1000
                                                        // inner: 0x1004
                 "s_mov_b64 s[10:11], exec\n"           // 0x1004
                 "v_cmp_le_u32 vcc, 16, v6\n"           // 0x1008
                 "s_and_b64 exec, exec, vcc\n"          // 0x100c
                 "s_cbranch_execnz 65532\n"             // 0x1010 -> 0x1004
                 "s_mov_b64 exec, s[8:9]\n"             // 0x1014
                 "v_mov_b32 v1, 0\n"                    // 0x1018
                 "s_mov_b64 exec, s[10:11]\n"           // 0x101c
                 "global_store_dword v[4:5], v1, off\n" // 0x1020
                 "s_mov_b64 exec, s[8:9]\n"             // 0x1028
                 "v_cmp_le_u32 vcc, 8, v7\n"            // 0x102c
                 "s_and_b64 exec, exec, vcc\n"          // 0x1030
                 "s_cbranch_execnz 65522\n"             // 0x1034 -> 0x1000
                 "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(findings(F->G), "");
  EXPECT_EQ(F->liveIn(), "v[4:7] exec");
}

// Every lane that leaves a loop was active in the iteration it left in:
// what the loop writes before its exit test in every iteration is
// written, after the loop, in every lane that entered it.
TEST(DecodedCodeTest, LanesLeaveALoopAfterItsWrites) {
  auto Loop = [](StringRef Write) {
    return (Twine("v_cmp_gt_u32 vcc, 64, v0\n"
                  "s_and_saveexec_b64 s[2:3], vcc\n"
                  "s_mov_b64 s[4:5], 0\n"
                  // loop: 0x100c
                  "v_add_u32 v6, 1, v6\n") +
            Write +
            "v_cmp_le_u32 vcc, 16, v6\n"
            "s_and_b64 s[0:1], exec, vcc\n"
            "s_or_b64 s[4:5], s[0:1], s[4:5]\n"
            "s_andn2_b64 exec, exec, s[4:5]\n"
            "s_cbranch_execnz " +
            // Back to the loop's first instruction: 6 words and the write.
            Twine(65536 - 6 - Write.count('\n')) +
            "\n"
            "s_or_b64 exec, exec, s[4:5]\n"
            "global_store_dword v[4:5], v7, off\n"
            "s_or_b64 exec, exec, s[2:3]\n"
            "s_endpgm\n")
        .str();
  };
  auto F = build("gfx90a", Loop("v_mov_b32 v7, v6\n"));
  ASSERT_TRUE(F);
  EXPECT_EQ(findings(F->G), "");
  EXPECT_EQ(F->liveIn(), "v0 v[4:6] exec");
  // Written only in some lanes of an iteration: the others keep v7.
  auto Some = build("gfx90a", Loop("s_and_saveexec_b64 s[8:9], s[10:11]\n"
                                   "v_mov_b32 v7, v6\n"
                                   "s_or_b64 exec, exec, s[8:9]\n"));
  ASSERT_TRUE(Some);
  EXPECT_EQ(findings(Some->G), "");
  EXPECT_EQ(Some->liveIn(), "s[10:11] v0 v[4:7] exec");
}

// An instruction run under an empty EXEC reads nothing.
TEST(DecodedCodeTest, NothingIsReadUnderAnEmptyExec) {
  auto F = build("gfx90a", "s_mov_b64 s[2:3], exec\n"
                           "s_mov_b64 exec, 0\n"
                           "global_store_dword v[4:5], v1, off\n"
                           "s_mov_b64 exec, s[2:3]\n"
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->liveIn(), "exec");
}

// A loop whose EXEC comes from memory afresh on every iteration: what an
// iteration writes under it is not what the next one reads under it (the
// lanes differ), so the register stays live around the loop.
TEST(DecodedCodeTest, ValuesMadeInALoopDifferByIteration) {
  auto F = build("gfx90a",
                 "s_mov_b64 s[2:3], exec\n"             // 0x1000
                 "s_load_dwordx2 s[8:9], s[0:1], 0x0\n" // 0x1004
                 "s_waitcnt lgkmcnt(0)\n"               // 0x100c
                 // loop: 0x1010
                 "s_mov_b64 exec, s[8:9]\n"             // 0x1010
                 "global_store_dword v[4:5], v1, off\n" // 0x1014
                 "v_mov_b32 v1, 0\n"                    // 0x101c
                 "s_mov_b64 exec, s[2:3]\n"             // 0x1020
                 "s_load_dwordx2 s[8:9], s[0:1], 0x8\n" // 0x1024
                 "s_waitcnt lgkmcnt(0)\n"               // 0x102c
                 "s_cmp_eq_u32 s10, 0\n"                // 0x1030
                 "s_cbranch_scc1 65526\n"               // 0x1034 -> 0x1010
                 "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(findings(F->G), "");
  EXPECT_EQ(F->liveIn(), "s[0:1] s10 v1 v[4:5] exec");
  // The next iteration reads v1 in its own lanes: live at the branch back
  // and before this iteration's write, which covers this iteration's only.
  EXPECT_EQ(F->liveAt(0x1034), "s[0:3] s[8:10] v1 v[4:5] scc");
  EXPECT_EQ(F->liveAt(0x101c), "s[0:3] s10 v1 v[4:5] exec");
}

// A saved EXEC spilled to VGPR lanes and read back (what compilers do when
// SGPRs run out) restores EXEC exactly, unless the lanes were overwritten.
TEST(DecodedCodeTest, SavedExecSpilledToVGPRLanes) {
  auto Spill = [](StringRef Between) {
    return (Twine("v_cmp_gt_u32 vcc, 64, v0\n"
                  "s_and_saveexec_b64 s[2:3], vcc\n"
                  "v_writelane_b32 v8, s2, 4\n"
                  "v_writelane_b32 v8, s3, 5\n"
                  "s_mov_b64 s[2:3], 0\n"
                  "v_mov_b32 v1, 0\n") +
            Between +
            "v_readlane_b32 s6, v8, 4\n"
            "v_readlane_b32 s7, v8, 5\n"
            "s_or_b64 exec, exec, s[6:7]\n"
            "global_store_dword v[4:5], v1, off\n"
            "s_endpgm\n")
        .str();
  };
  auto F = build("gfx90a", Spill(""));
  ASSERT_TRUE(F);
  EXPECT_TRUE(F->L.ExecFullBefore[9]); // the store
  // Another lane of the VGPR may change; the spill's lanes may not.
  auto Other = build("gfx90a", Spill("v_writelane_b32 v8, s9, 6\n"));
  ASSERT_TRUE(Other);
  EXPECT_TRUE(Other->L.ExecFullBefore[10]);
  for (StringRef Clobber : {"v_writelane_b32 v8, s9, 5\n", "v_mov_b32 v8, 0\n",
                            "global_load_dwordx2 v[8:9], v[4:5], off\n"}) {
    auto Lost = build("gfx90a", Spill(Clobber));
    ASSERT_TRUE(Lost);
    EXPECT_FALSE(Lost->L.ExecFullBefore[10]) << Clobber.str();
  }
  // Wave32: one SGPR, one lane.
  auto W32 = build("gfx1030", "v_cmp_gt_u32 vcc_lo, 64, v0\n"
                              "s_and_saveexec_b32 s2, vcc_lo\n"
                              "v_writelane_b32 v8, s2, 3\n"
                              "s_mov_b32 s2, 0\n"
                              "v_readlane_b32 s4, v8, 3\n"
                              "s_or_b32 exec_lo, exec_lo, s4\n"
                              "global_store_dword v[4:5], v1, off\n"
                              "s_endpgm\n");
  ASSERT_TRUE(W32);
  EXPECT_TRUE(W32->L.ExecFullBefore[6]);
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

TEST(DecodedCodeTest, M0WrittenByNameIsTheM0Read) {
  // The decoder names M0 by its encoding (M0_gfxpre11, M0_gfx11plus), an
  // instruction's implicit operand plain M0: one register all the same.
  for (const char *CPU : {"gfx803", "gfx90a", "gfx1100"}) {
    auto F = build(CPU, "s_mov_b32 m0, s1\n"                 // 0x1000
                        "s_sendmsg sendmsg(MSG_INTERRUPT)\n" // 0x1004
                        "s_mov_b32 s2, m0\n"                 // 0x1008
                        "s_endpgm\n");
    ASSERT_TRUE(F);
    EXPECT_EQ(F->liveIn(), "s1 exec") << CPU;
    EXPECT_EQ(F->liveAt(0x1008), "m0") << CPU;
  }
  auto Old = build("gfx803", "s_mov_b32 m0, -1\n"
                             "ds_read_b32 v1, v0\n"
                             "s_endpgm\n");
  ASSERT_TRUE(Old);
  EXPECT_EQ(Old->liveIn(), "v0 exec");
  EXPECT_EQ(Old->liveAt(0x1004), "v0 exec m0");
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

/// The waits of one instruction assembled by LLVM MC for \p MCPU.
std::string waitsOf(StringRef MCPU, Generation Gen, StringRef Asm) {
  auto MC = TargetMC::create(MCPU, "");
  if (!MC)
    return toString(MC.takeError());
  auto B = (*MC)->assemble(Asm);
  if (!B)
    return toString(B.takeError());
  auto D = (*MC)->decodeOne(*B, 0);
  if (!D)
    return "<not decoded>";
  CounterSet Set = CounterSet::of(Gen);
  WaitEffect E = waitEffect(**MC, D->Inst, Set);
  std::string S;
  for (auto &[C, N] : E.Waits)
    S += (S.empty() ? "" : " ") + Set.name(C).str() + "(" + std::to_string(N) +
         ")";
  return S;
}

// The s_waitcnt fields of every generation, against LLVM's assembler.
TEST(WaitCountsTest, WaitcntFieldsMatchTheAssembler) {
  EXPECT_EQ(waitsOf("gfx803", Generation::GFX8,
                    "s_waitcnt vmcnt(13) expcnt(5) lgkmcnt(9)"),
            "vmcnt(13) expcnt(5) lgkmcnt(9)");
  EXPECT_EQ(waitsOf("gfx900", Generation::GFX9,
                    "s_waitcnt vmcnt(37) expcnt(3) lgkmcnt(14)"),
            "vmcnt(37) expcnt(3) lgkmcnt(14)");
  EXPECT_EQ(waitsOf("gfx1030", Generation::GFX10,
                    "s_waitcnt vmcnt(37) expcnt(6) lgkmcnt(45)"),
            "vmcnt(37) expcnt(6) lgkmcnt(45)");
  EXPECT_EQ(waitsOf("gfx1100", Generation::GFX11,
                    "s_waitcnt vmcnt(37) expcnt(6) lgkmcnt(45)"),
            "vmcnt(37) expcnt(6) lgkmcnt(45)");
  // Counters a wait leaves out are at their largest (no wait).
  EXPECT_EQ(waitsOf("gfx900", Generation::GFX9, "s_waitcnt lgkmcnt(0)"),
            "vmcnt(63) expcnt(7) lgkmcnt(0)");
  EXPECT_EQ(waitsOf("gfx1100", Generation::GFX11, "s_waitcnt_vscnt null, 5"),
            "vscnt(5)");
  // Another register than null adds its value: no wait is assumed.
  EXPECT_EQ(waitsOf("gfx1030", Generation::GFX10, "s_waitcnt_vscnt s4, 0"), "");
  EXPECT_EQ(waitsOf("gfx1200", Generation::GFX12, "s_wait_kmcnt 0x1f"),
            "kmcnt(31)");
  EXPECT_EQ(waitsOf("gfx1200", Generation::GFX12, "s_wait_samplecnt 3"),
            "samplecnt(3)");
  EXPECT_EQ(waitsOf("gfx1200", Generation::GFX12, "s_wait_loadcnt_dscnt 0x502"),
            "loadcnt(5) dscnt(2)");
}

// VMEM loads return in order: a wait for N retires all but the N newest.
TEST(WaitCountsTest, InOrderLoadsRetireByDistance) {
  auto F = build("gfx900", "global_load_dword v1, v[2:3], off\n" // 0x1000
                           "global_load_dword v4, v[2:3], off\n" // 0x1008
                           "s_waitcnt vmcnt(1)\n"                // 0x1010
                           "v_mov_b32 v5, v1\n"                  // 0x1014
                           "s_waitcnt vmcnt(0)\n"                // 0x1018
                           "v_mov_b32 v6, v4\n"                  // 0x101c
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1000), "none");
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1010), "vmcnt<=2 v1 v4");
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1014), "vmcnt<=1 v4");
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x101c), "none");
}

// Scalar loads return out of order: only lgkmcnt(0) retires them.
TEST(WaitCountsTest, ScalarLoadsNeedAWaitForZero) {
  auto F = build("gfx900", "s_load_dword s4, s[0:1], 0x0\n" // 0x1000
                           "s_load_dword s5, s[0:1], 0x4\n" // 0x1008
                           "s_waitcnt lgkmcnt(1)\n"         // 0x1010
                           "s_waitcnt lgkmcnt(0)\n"         // 0x1014
                           "s_endpgm\n");                   // 0x1018
  ASSERT_TRUE(F);
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1014),
            "lgkmcnt<=1 unordered s[4:5]");
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1018), "none");
}

// gfx10+: stores count on vscnt, which s_waitcnt does not wait for.
TEST(WaitCountsTest, StoresCountOnVscntFromGFX10) {
  auto F = build("gfx1030", "global_store_dword v[2:3], v1, off\n" // 0x1000
                            "s_waitcnt vmcnt(0)\n"                 // 0x1008
                            "s_waitcnt_vscnt null, 0\n"            // 0x100c
                            "s_endpgm\n");                         // 0x1010
  ASSERT_TRUE(F);
  EXPECT_EQ(F->waitsAt(Generation::GFX10, 0x100c), "vscnt<=1");
  EXPECT_EQ(F->waitsAt(Generation::GFX10, 0x1010), "none");
  // Before gfx10 the same store counts on vmcnt.
  auto G = build("gfx900", "global_store_dword v[2:3], v1, off\n"
                           "s_waitcnt vmcnt(0)\n"
                           "s_endpgm\n");
  ASSERT_TRUE(G);
  EXPECT_EQ(G->waitsAt(Generation::GFX9, 0x1008), "vmcnt<=1");
  EXPECT_EQ(G->waitsAt(Generation::GFX9, 0x100c), "none");
}

// A join keeps what either path may leave in flight, at its smaller
// distance; a loop converges.
TEST(WaitCountsTest, JoinsAndLoops) {
  auto F = build("gfx90a", "s_cmp_eq_u32 s0, 0\n"                // 0x1000
                           "s_cbranch_scc1 2\n"                  // 0x1004
                           "global_load_dword v1, v[2:3], off\n" // 0x1008
                           "global_load_dword v4, v[2:3], off\n" // 0x1010
                           "s_waitcnt vmcnt(1)\n"                // 0x1018
                           "s_sub_u32 s0, s0, 1\n"               // 0x101c
                           "s_cbranch_scc0 -7\n"                 // 0x1020
                           "s_endpgm\n");                        // 0x1024
  ASSERT_TRUE(F);
  EXPECT_EQ(findings(F->G), "");
  // From the loop's back edge the last iteration's v4 load may still be in
  // flight: three loads at most, v1's with one after it.
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1018), "vmcnt<=3 v1 v4");
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x101c), "vmcnt<=1 v4");
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1024), "vmcnt<=1 v4");
}

// A cache invalidate may count on vmcnt: the bound grows, but it does not
// push older loads further from the newest (it may not count at all).
TEST(WaitCountsTest, CacheOperationsMayCount) {
  auto F = build("gfx900", "global_load_dword v1, v[2:3], off\n" // 0x1000
                           "buffer_wbinvl1_vol\n"                // 0x1008
                           "global_load_dword v4, v[2:3], off\n" // 0x1010
                           "s_waitcnt vmcnt(1)\n"                // 0x1018
                           "s_waitcnt vmcnt(0)\n"                // 0x101c
                           "s_endpgm\n");                        // 0x1020
  ASSERT_TRUE(F);
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1018), "vmcnt<=3 v1 v4");
  // v1 has one load after it for certain: vmcnt(1) retires it.
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x101c), "vmcnt<=1 v4");
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1020), "none");
}

// Kinds that return out of order on one counter: an image sample and a
// buffer load on gfx10's vmcnt; FLAT on lgkmcnt (it may be LDS).
TEST(WaitCountsTest, MixedKindsAreUnordered) {
  auto F = build("gfx1030",
                 "image_sample v[0:3], v[4:5], s[8:15], s[16:19] dmask:0xf "
                 "dim:SQ_RSRC_IMG_2D\n"
                 "global_load_dword v6, v[8:9], off\n"
                 "s_waitcnt vmcnt(1)\n"
                 "s_endpgm\n");
  ASSERT_TRUE(F);
  std::optional<uint32_t> End = F->G.insnAt(F->G.End - 4);
  ASSERT_TRUE(End);
  EXPECT_EQ(F->waitsAt(Generation::GFX10, F->G.Insns[*End].Addr),
            "vmcnt<=1 unordered v[0:3] v6");
  auto G = build("gfx900", "flat_load_dword v1, v[2:3]\n" // 0x1000
                           "s_waitcnt vmcnt(0)\n"         // 0x1008
                           "s_endpgm\n");                 // 0x100c
  ASSERT_TRUE(G);
  // Its result is waited for on vmcnt (see WaitCounts.h).
  EXPECT_EQ(G->waitsAt(Generation::GFX9, 0x1008),
            "vmcnt<=1 v1; lgkmcnt<=1 unordered");
  EXPECT_EQ(G->waitsAt(Generation::GFX9, 0x100c), "lgkmcnt<=1 unordered");
}

// FLAT may address LDS: then lgkmcnt(1) retires no LDS load. A compiler
// that knew the address was global waits so (verify-code asks both ways).
TEST(WaitCountsTest, FlatMayAccessLDS) {
  auto F = build("gfx803", "flat_load_dword v1, v[2:3]\n" // 0x1000
                           "ds_read_b32 v4, v5\n"         // 0x1008
                           "ds_read_b32 v6, v5\n"         // 0x1010
                           "s_waitcnt lgkmcnt(1)\n"       // 0x1018
                           "v_mov_b32 v7, v4\n"           // 0x101c
                           "s_endpgm\n");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->waitsAt(Generation::GFX8, 0x101c),
            "vmcnt<=1 v1; lgkmcnt<=1 unordered v4 v6");
  WaitCounts W =
      computeWaitCounts(*F->MC, F->G, F->Bytes, F->F.Kind, Generation::GFX8,
                        /*FlatMayAccessLDS=*/false);
  EXPECT_TRUE(W.HasFlat);
  uint32_t I = *F->G.insnAt(0x101c);
  EXPECT_EQ(W.statesBefore(0)[I].format(W.Set, F->rm()),
            "vmcnt<=1 v1; lgkmcnt<=1 v6");
  WaitCounts Again =
      computeWaitCounts(*F->MC, F->G, F->Bytes, F->F.Kind, Generation::GFX8)
          .assumingFlatGlobal();
  EXPECT_EQ(Again.statesBefore(0)[I].format(Again.Set, F->rm()),
            "vmcnt<=1 v1; lgkmcnt<=1 v6");
}

// After a call, and at a device function's entry, anything may be in
// flight until a wait for 0.
TEST(WaitCountsTest, CallsAndDeviceEntriesAreUnknown) {
  auto F = build("gfx900", "s_swappc_b64 s[30:31], s[4:5]\n" // 0x1000
                           "s_waitcnt vmcnt(0) lgkmcnt(0)\n" // 0x1004
                           "s_endpgm\n");                    // 0x1008
  ASSERT_TRUE(F);
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1004),
            "vmcnt unknown unordered any register; expcnt unknown unordered "
            "any register; lgkmcnt unknown unordered any register");
  // A wait names every counter: expcnt(7) bounds it, but not to 0.
  EXPECT_EQ(F->waitsAt(Generation::GFX9, 0x1008),
            "expcnt<=7 unordered any register");
  auto D = build("gfx900",
                 "s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)\n"
                 "s_setpc_b64 s[30:31]\n",
                 FunctionKind::Device);
  ASSERT_TRUE(D);
  EXPECT_NE(D->waitsAt(Generation::GFX9, 0x1000), "none");
  EXPECT_EQ(D->waitsAt(Generation::GFX9, 0x1004), "none");
}

// Alignment padding before a loop never runs: the loop header's state is
// what the paths that reach it bring, not unknown. Other unreachable code
// still starts unknown.
TEST(WaitCountsTest, PaddingBeforeALoopGivesItNothing) {
  auto F = build("gfx1030",
                 "s_load_dword s2, s[0:1], 0x0\n" // 0x1000
                 "s_branch 1\n"                   // 0x1008
                 "s_nop 0\n"                      // 0x100c pad
                 "s_sub_u32 s3, s3, 1\n"          // 0x1010 loop
                 "s_cbranch_scc1 -2\n"            // 0x1014
                 "s_endpgm\n",                    // 0x1018
                 FunctionKind::Kernel, true);
  ASSERT_TRUE(F);
  EXPECT_EQ(F->waitsAt(Generation::GFX10, 0x1010), "lgkmcnt<=1 unordered s2");
  auto U = build("gfx1030",
                 "s_branch 1\n"      // 0x1000
                 "v_mov_b32 v0, 0\n" // 0x1004 unreachable
                 "s_endpgm\n",       // 0x1008
                 FunctionKind::Kernel, true);
  ASSERT_TRUE(U);
  EXPECT_NE(U->waitsAt(Generation::GFX10, 0x1008).find("unknown"),
            std::string::npos);
}

std::string windows(const FunctionCFG &G) {
  std::string S;
  for (const CodeWindow &W : G.Windows)
    S += windowKindName(W.K).str() + " [" + hex(W.Begin) + ", " + hex(W.End) +
         ")\n";
  return S;
}

// s_clause groups the next simm16[5:0] + 1 instructions.
TEST(DecodedCodeTest, ClauseWindow) {
  auto F = build("gfx1030", "s_clause 0x1\n"                      // 0x1000
                            "global_load_dword v1, v[2:3], off\n" // 0x1004
                            "global_load_dword v4, v[2:3], off\n" // 0x100c
                            "s_waitcnt vmcnt(0)\n"                // 0x1014
                            "s_endpgm\n");                        // 0x1018
  ASSERT_TRUE(F);
  EXPECT_EQ(windows(F->G), "clause [0x1000, 0x1014)\n");
  EXPECT_TRUE(F->G.mayInsertAt(0x1000));
  EXPECT_FALSE(F->G.mayInsertAt(0x1004));
  EXPECT_FALSE(F->G.mayInsertAt(0x100c));
  EXPECT_TRUE(F->G.mayInsertAt(0x1014));
}

// VGPR MSBs (gfx1250) until reset; a raised priority does not forbid.
TEST(DecodedCodeTest, VGPRMSBAndPriorityWindows) {
  auto F = build("gfx1250", "s_set_vgpr_msb 1\n" // 0x1000
                            "v_mov_b32 v1, v2\n" // 0x1004
                            "s_set_vgpr_msb 0\n" // 0x1008
                            "s_setprio 2\n"      // 0x100c
                            "v_mov_b32 v1, v2\n" // 0x1010
                            "s_setprio 0\n"      // 0x1014
                            "s_endpgm\n");       // 0x1018
  ASSERT_TRUE(F);
  EXPECT_EQ(windows(F->G), "vgpr msb set [0x1000, 0x100c)\n"
                           "priority raised [0x100c, 0x1018)\n");
  EXPECT_TRUE(F->G.mayInsertAt(0x1000));
  EXPECT_FALSE(F->G.mayInsertAt(0x1004)); // would run with the MSBs set
  EXPECT_FALSE(F->G.mayInsertAt(0x1008));
  EXPECT_TRUE(F->G.mayInsertAt(0x100c));
  EXPECT_TRUE(F->G.mayInsertAt(0x1010)); // at a raised priority: allowed
}

// A preloading kernel: firmware may start it 256 bytes in, so that is a
// block start reached from outside, and the header is one window.
TEST(DecodedCodeTest, PreloadHeader) {
  std::string Asm = "s_load_dwordx2 s[8:9], s[4:5], 0x0\n"
                    "s_waitcnt lgkmcnt(0)\n"
                    "s_branch 61\n";
  for (int I = 0; I < 61; ++I)
    Asm += "s_nop 0\n";
  Asm += "v_mov_b32 v1, s8\n"
         "s_endpgm\n";
  auto F = build("gfx90a", Asm);
  ASSERT_TRUE(F);
  F->F.PreloadHeader = true;
  FunctionCFG G = buildCFG(*F->MC, F->F, F->Bytes, F->Map);
  EXPECT_EQ(windows(G), "kernarg preload header [0x1000, 0x1100)\n");
  std::optional<uint32_t> I = G.insnAt(0x1100);
  ASSERT_TRUE(I);
  EXPECT_EQ(G.Insns[G.Blocks[G.blockOf(*I)].First].Addr, 0x1100u);
  EXPECT_TRUE(G.Blocks[G.blockOf(*I)].Reachable);
  EXPECT_FALSE(G.mayInsertAt(0x1010));
  EXPECT_TRUE(G.mayInsertAt(0x1100));
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

// decodeRange with a hint (code decoded before that the bytes mostly
// repeat, as a copy repeats its original) answers what the decoder does:
// an instruction inserted before, a branch that moved, a changed literal,
// a replaced instruction, the end of the code. Where a window repeats,
// the hint's own instruction is handed out (the test sees the hint used).
TEST(DecodedCodeTest, DecodeHintsGiveTheDecodersAnswers) {
  for (const char *CPU : {"gfx90a", "gfx1100"}) {
    auto MC = TargetMC::create(CPU, "");
    ASSERT_OK(MC);
    const std::string Body = "v_mov_b32_e32 v1, 0x12345678\n"
                             "s_add_u32 s4, s4, 0x1000\n"
                             "v_add_f32_e32 v0, v1, v0\n"
                             "s_nop 0\n";
    auto Orig = (*MC)->assemble("s_load_dwordx2 s[4:5], s[0:1], 0x0\n" + Body +
                                "s_cbranch_scc1 2\n"
                                "s_mov_b32 s6, 7\n" +
                                Body + "s_endpgm\n");
    ASSERT_OK(Orig);
    auto Copy = (*MC)->assemble("s_nop 1\n" // inserted
                                "s_load_dwordx2 s[4:5], s[0:1], 0x0\n" +
                                Body +                // repeated
                                "s_cbranch_scc1 5\n"  // moved
                                "s_mov_b32 s6, 8\n" + // replaced
                                Body +
                                "s_add_u32 s4, s4, 0x2000\n" // inserted
                                "s_endpgm\n");
    ASSERT_OK(Copy);
    std::vector<MCInst> Decoded;
    DecodedRange O =
        decodeRange(**MC, *Orig, 0x1000, [&](const Insn &, const MCInst &MI) {
          Decoded.push_back(MI);
        });
    ASSERT_FALSE(O.Stop);
    auto Text = [&](const TargetMC &With, const DecodeHint *Hint,
                    unsigned *FromHint) {
      std::string S;
      DecodedRange R = decodeRange(
          With, *Copy, 0x2000,
          [&](const Insn &I, const MCInst &MI) {
            S += hex(I.Addr) + " " + std::to_string(I.Size) + " " +
                 With.printInst(MI, I.Addr) + "\n";
            if (FromHint && !Decoded.empty() && &MI >= &Decoded.front() &&
                &MI <= &Decoded.back())
              ++*FromHint;
          },
          Hint);
      return R.Stop ? "stopped: " + S : S;
    };
    auto Fresh = TargetMC::create(CPU, "");
    ASSERT_OK(Fresh);
    const std::string Want = Text(**Fresh, nullptr, nullptr);
    const DecodeHint Hint{*Orig, 0x1000, O.Insns, Decoded};
    unsigned Used = 0;
    EXPECT_EQ(Text(**MC, &Hint, &Used), Want) << CPU;
    // gfx10+ decides on 20 bytes: fewer windows repeat than on gfx9 (8).
    EXPECT_GE(Used, StringRef(CPU) == "gfx90a" ? 8u : 2u) << CPU;
    // A hint of other code is never an answer.
    std::vector<uint8_t> Other(Orig->size(), 0);
    const DecodeHint Wrong{Other, 0x1000, O.Insns, Decoded};
    Used = 0;
    EXPECT_EQ(Text(**MC, &Wrong, &Used), Want) << CPU;
    EXPECT_EQ(Used, 0u) << CPU;
  }
}

// RegisterModel answers per register from tables made once; here every
// register of three targets is read unit by unit instead, as LLVM lists
// them, and the answers compared.
TEST(DecodedCodeTest, RegisterTablesAgreeWithUnits) {
  for (const char *CPU : {"gfx90a", "gfx1100", "gfx1250"}) {
    auto MC = TargetMC::create(CPU, "");
    ASSERT_OK(MC);
    const MCRegisterInfo &MRI = (*MC)->regInfo();
    const RegisterModel &RM = RegisterModel::get(MRI);
    RegSet M0 = RM.emptySet();
    RM.addClass(RegClass::M0, M0);
    unsigned SGPRTuples = 0;
    for (unsigned R = 1; R < MRI.getNumRegs(); ++R) {
      SCOPED_TRACE(std::string(CPU) + " " + MRI.getName(R));
      RegSet Want = RM.emptySet();
      std::optional<RegClass> C;
      bool Mixed = false;
      unsigned Lo = ~0u, Hi = 0;
      for (MCRegUnit U : MRI.regunits(MCRegister(R))) {
        const RegUnitInfo &I = RM.unit(static_cast<unsigned>(U));
        if (I.Class == RegClass::M0)
          Want |= M0;
        else if (I.Class != RegClass::Other)
          Want.set(static_cast<unsigned>(U));
        Mixed |= C && *C != I.Class;
        C = I.Class;
        Lo = std::min<unsigned>(Lo, I.Index);
        Hi = std::max<unsigned>(Hi, I.Index);
      }
      const RegClass Class =
          Mixed ? RegClass::Other : C.value_or(RegClass::Other);
      ASSERT_EQ(RM.classOf(R), Class);
      RegSet Got = RM.emptySet();
      RM.addUnits(R, Got);
      ASSERT_EQ(Got, Want);
      SmallVector<uint16_t, 8> Listed;
      RM.appendUnits(R, Listed);
      RegSet FromList = RM.emptySet();
      for (uint16_t U : Listed)
        FromList.set(U);
      ASSERT_EQ(FromList, Want);
      ASSERT_EQ(Listed.size(), Want.count());
      if (Class == RegClass::SGPR) {
        ASSERT_EQ(RM.sgprRange(R), std::make_pair(Lo, Hi - Lo + 1));
        SGPRTuples += Hi > Lo;
      } else {
        ASSERT_EQ(RM.sgprRange(R), std::nullopt);
      }
    }
    EXPECT_GT(SGPRTuples, 100u) << CPU;
  }
}

} // namespace

namespace {
/// Two branches into the same two joins: a cycle of four edges that block
/// counts alone cannot split (issue 42's edge counts).
constexpr const char *Crossing = "s_cmp_eq_u32 s0, 0\n"      // 0: B0
                                 "s_cbranch_scc1 4\n"        // 1: -> 6 (B3)
                                 "s_cmp_eq_u32 s1, 0\n"      // 2: B1
                                 "s_cbranch_scc1 4\n"        // 3: -> 8 (B4)
                                 "v_add_u32_e32 v0, 1, v0\n" // 4: B2
                                 "s_branch 3\n"              // 5: -> 9 (B5)
                                 "s_cmp_eq_u32 s2, 0\n"      // 6: B3
                                 "s_cbranch_scc1 -4\n"       // 7: -> 4 (B2)
                                 "v_add_u32_e32 v1, 1, v1\n" // 8: B4
                                 "s_endpgm\n";               // 9: B5
} // namespace

TEST(EdgeCountsTest, BlockCountsGiveTheEdgesOfStructuredCode) {
  // A loop with a branch inside: every edge follows from the blocks.
  auto F = build("gfx90a", "s_mov_b32 s0, 10\n"        // B0
                           "s_cmp_eq_u32 s1, 0\n"      // B1: loop head
                           "s_cbranch_scc1 1\n"        //   -> B3
                           "v_add_u32_e32 v0, 1, v0\n" // B2
                           "s_sub_u32 s0, s0, 1\n"     // B3
                           "s_cbranch_scc0 -5\n"       //   -> B1
                           "s_endpgm\n");              // B4
  ASSERT_TRUE(F);
  ASSERT_EQ(F->G.Blocks.size(), 5u);
  std::vector<EdgeRef> Edges = graphEdges(F->G);
  ASSERT_EQ(Edges.size(), 6u);
  std::vector<bool> All(5, true);
  EXPECT_TRUE(chooseCountedEdges(F->G, Edges, All, [](size_t) {
                return true;
              }).empty());
  // 10 trips, the branch inside taken 6 times.
  std::vector<std::optional<int64_t>> C = deriveEdgeCounts(
      F->G, Edges, {1, 10, 4, 10, 1}, std::vector<std::optional<uint64_t>>(6));
  std::string S;
  for (size_t E = 0; E < Edges.size(); ++E)
    S += std::to_string(Edges[E].From) + "->" +
         std::to_string(F->G.Blocks[Edges[E].From].Succs[Edges[E].Succ].To) +
         "=" + (C[E] ? std::to_string(*C[E]) : "?") + " ";
  EXPECT_EQ(S, "0->1=1 1->3=6 1->2=4 2->3=4 3->1=9 3->4=1 ");
  // Without B2's count, its edges stay unknown and the rest still follow
  // where they can.
  C = deriveEdgeCounts(F->G, Edges, {1, 10, std::nullopt, 10, 1},
                       std::vector<std::optional<uint64_t>>(6));
  EXPECT_TRUE(C[0] && C[4] && C[5]);
  EXPECT_FALSE(C[1] || C[2] || C[3]);
}

TEST(EdgeCountsTest, CrossingBranchesNeedOneCountedEdge) {
  auto F = build("gfx90a", Crossing);
  ASSERT_TRUE(F);
  ASSERT_EQ(F->G.Blocks.size(), 6u);
  std::vector<EdgeRef> Edges = graphEdges(F->G);
  ASSERT_EQ(Edges.size(), 8u);
  std::vector<bool> All(6, true);
  std::vector<size_t> Chosen =
      chooseCountedEdges(F->G, Edges, All, [](size_t) { return true; });
  // B1's fall-through edge (into B2), edge 3.
  ASSERT_EQ(Chosen.size(), 1u);
  EXPECT_EQ(Chosen[0], 3u);
  EXPECT_EQ(Edges[3].From, 1u);
  std::vector<std::optional<uint64_t>> Counted(8);
  Counted[3] = 2;
  std::vector<std::optional<int64_t>> C =
      deriveEdgeCounts(F->G, Edges, {10, 6, 3, 4, 7, 10}, Counted);
  std::vector<std::optional<int64_t>> Want = {4, 6, 4, 2, 3, 1, 3, 7};
  EXPECT_EQ(C, Want);
  // Without it, the cycle stays unknown.
  C = deriveEdgeCounts(F->G, Edges, {10, 6, 3, 4, 7, 10},
                       std::vector<std::optional<uint64_t>>(8));
  EXPECT_FALSE(C[2] || C[3] || C[5] || C[6]);
  // Counts from a dump that do not add up (or near 2^64) wrap, never
  // overflow: the edge shows what the equations give.
  Counted[3] = UINT64_MAX;
  C = deriveEdgeCounts(F->G, Edges,
                       {UINT64_MAX, 6, 3, 4, 7, std::optional<uint64_t>()},
                       Counted);
  ASSERT_TRUE(C[5].has_value());
  EXPECT_EQ(*C[5], 4); // 3 - (2^64 - 1), modulo 2^64
  // An edge the client cannot count is not chosen: another one is.
  Chosen =
      chooseCountedEdges(F->G, Edges, All, [](size_t E) { return E != 3; });
  ASSERT_EQ(Chosen.size(), 1u);
  EXPECT_EQ(Chosen[0], 6u); // B3's fall-through edge into B4
}
