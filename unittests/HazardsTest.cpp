//===- unittests/HazardsTest.cpp - Hazards the hardware does not interlock ===//
//
// Each test assembles a few instructions with LLVM MC for one target and
// asks which hazards the rules of Code/Hazards.h find: the hazard itself,
// the same code with what clears it between (wait states, a wait, an
// instruction the rule names), and code that looks alike but is not one.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Code/Hazards.h"
#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Support/Format.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/MC/MCInst.h"

#include "gtest/gtest.h"

#include "TestTargets.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace hotswap::code;

namespace {

constexpr uint64_t Base = 0x1000;

struct Options {
  FunctionKind Kind = FunctionKind::Kernel;
  bool Wave32 = false;
  FeatureSetting Xnack = FeatureSetting::Unsupported;
};

/// The hazards of \p Asm on \p Mach, one "id@offset(have/need)" each, in
/// the order of the instructions they end at.
std::string hazards(unsigned Mach, StringRef Asm, Options O = {}) {
  TargetInfo T = target(Mach);
  if (O.Xnack != FeatureSetting::Unsupported) {
    T.Xnack = O.Xnack;
    T.Features = O.Xnack == FeatureSetting::On ? "+xnack" : "-xnack";
  }
  std::string Features = T.Features;
  if (T.Gen >= Generation::GFX10)
    Features += std::string(Features.empty() ? "" : ",") +
                (O.Wave32 ? "+wavefrontsize32" : "+wavefrontsize64");
  Expected<TargetMC &> MC = testMC(T.MCPU, Features);
  if (!MC)
    return "error: " + toString(MC.takeError());
  Expected<std::vector<uint8_t>> Bytes = MC->assemble(Asm);
  if (!Bytes)
    return "error: " + toString(Bytes.takeError());
  CodeFunction F;
  F.Name = "f";
  F.Kind = O.Kind;
  F.Begin = Base;
  F.End = Base + Bytes->size();
  F.Wave32 = O.Wave32;
  FunctionMap Map;
  Map.Functions.push_back(F);
  std::vector<MCInst> Decoded;
  FunctionCFG G = buildCFG(*MC, F, *Bytes, Map, &Decoded);
  HazardCode Code(*MC, G, Decoded, O.Kind);
  HazardRules Rules = HazardRules::of(*MC, T, O.Wave32);
  std::vector<Hazard> Found;
  for (uint32_t I = 0; I < Code.size(); ++I)
    findHazards(Code, Rules, I, Found);
  std::string S;
  for (const Hazard &H : Found) {
    S += (S.empty() ? "" : "; ") + hazardKindId(H.Kind).str() + "@" +
         hex(Code.addr(H.To) - Base);
    if (H.Need)
      S += "(" + std::to_string(H.Have) + "/" + std::to_string(H.Need) + ")";
  }
  return S;
}

constexpr unsigned GFX803 = ELF::EF_AMDGPU_MACH_AMDGCN_GFX803;
constexpr unsigned GFX90A = ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A;
constexpr unsigned GFX942 = ELF::EF_AMDGPU_MACH_AMDGCN_GFX942;
constexpr unsigned GFX1010 = ELF::EF_AMDGPU_MACH_AMDGCN_GFX1010;
constexpr unsigned GFX1030 = ELF::EF_AMDGPU_MACH_AMDGCN_GFX1030;
constexpr unsigned GFX1100 = ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100;
constexpr unsigned GFX1201 = ELF::EF_AMDGPU_MACH_AMDGCN_GFX1201;
constexpr unsigned GFX1250 = ELF::EF_AMDGPU_MACH_AMDGCN_GFX1250;

TEST(HazardsTest, VMEMReadsAnSGPRAVALUWrote) {
  // gfx8-9: five wait states between the VALU's write and the VMEM's read.
  EXPECT_EQ(hazards(GFX90A, "v_readfirstlane_b32 s4, v0\n"
                            "global_load_dword v1, v2, s[4:5]\n"),
            "valu-sgpr-vmem@0x4(0/5)");
  EXPECT_EQ(hazards(GFX90A, "v_readfirstlane_b32 s4, v0\n"
                            "s_nop 3\n"
                            "global_load_dword v1, v2, s[4:5]\n"),
            "valu-sgpr-vmem@0x8(4/5)");
  EXPECT_EQ(hazards(GFX90A, "v_readfirstlane_b32 s4, v0\n"
                            "s_nop 4\n"
                            "global_load_dword v1, v2, s[4:5]\n"),
            "");
  // Every instruction counts one, and so does a branch on the way.
  EXPECT_EQ(hazards(GFX803, "v_readfirstlane_b32 s5, v0\n"
                            "s_branch 0\n"
                            "s_mov_b32 s6, 0\n"
                            "buffer_load_dword v1, v2, s[0:3], s5 offen\n"),
            "valu-sgpr-vmem@0xc(2/5)");
  // An SALU write is interlocked; gfx10 has no such rule.
  EXPECT_EQ(hazards(GFX90A, "s_mov_b32 s4, 0\n"
                            "global_load_dword v1, v2, s[4:5]\n"),
            "");
  EXPECT_EQ(hazards(GFX1030, "v_readfirstlane_b32 s4, v0\n"
                             "global_load_dword v1, v2, s[4:5]\n"),
            "");
}

TEST(HazardsTest, WaitStatesAcrossEveryWayIn) {
  // The nearest write on any way in decides: the loop's back edge brings
  // the VALU at its end right before the load.
  EXPECT_EQ(hazards(GFX90A, "s_nop 7\n"
                            "global_load_dword v1, v2, s[4:5]\n"
                            "v_readfirstlane_b32 s4, v0\n"
                            "s_cbranch_scc1 -4\n"
                            "s_endpgm\n"),
            "valu-sgpr-vmem@0x4(1/5)");
}

TEST(HazardsTest, GFX9LaneSelectDppDivFmasSetRegM0) {
  EXPECT_EQ(hazards(GFX90A, "v_readfirstlane_b32 s4, v0\n"
                            "v_readlane_b32 s5, v1, s4\n"),
            "lane-select@0x4(0/4)");
  // s4 as the value written, not the lane select: no hazard.
  EXPECT_EQ(hazards(GFX90A, "v_readfirstlane_b32 s4, v0\n"
                            "s_nop 0\n"
                            "v_writelane_b32 v1, s4, 3\n"),
            "");
  EXPECT_EQ(hazards(GFX90A, "v_mov_b32 v1, v2\n"
                            "v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] "
                            "row_mask:0xf bank_mask:0xf\n"),
            "vgpr-dpp@0x4(0/2)");
  EXPECT_EQ(hazards(GFX90A, "v_mov_b32 v1, v2\n"
                            "s_nop 1\n"
                            "v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] "
                            "row_mask:0xf bank_mask:0xf\n"),
            "");
  EXPECT_EQ(hazards(GFX90A, "v_cmp_eq_u32 vcc, v0, v1\n"
                            "s_nop 1\n"
                            "v_div_fmas_f32 v0, v1, v2, v3\n"),
            "vcc-div-fmas@0x8(2/4)");
  EXPECT_EQ(hazards(GFX90A, "s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s2\n"
                            "s_getreg_b32 s3, hwreg(HW_REG_MODE, 0, 4)\n"
                            "s_getreg_b32 s3, hwreg(HW_REG_TRAPSTS, 0, 4)\n"),
            "setreg-getreg@0x4(0/2)");
  EXPECT_EQ(hazards(GFX90A, "s_mov_b32 m0, -1\n"
                            "ds_read_addtid_b32 v0\n"),
            "salu-m0@0x4(0/1)");
  EXPECT_EQ(hazards(GFX90A, "s_mov_b32 m0, -1\n"
                            "s_nop 0\n"
                            "ds_read_addtid_b32 v0\n"),
            "");
  // A VALU overwriting the data of a store wider than 64 bits.
  EXPECT_EQ(hazards(GFX90A, "global_store_dwordx4 v0, v[2:5], s[0:1]\n"
                            "v_mov_b32 v3, 0\n"
                            "v_mov_b32 v9, 0\n"),
            "wide-store-data@0x8(0/1)");
  EXPECT_EQ(hazards(GFX90A, "global_store_dwordx2 v0, v[2:3], s[0:1]\n"
                            "v_mov_b32 v3, 0\n"),
            "");
}

TEST(HazardsTest, SoftClausesOnlyWithXnack) {
  const char *Asm = "s_load_dwordx2 s[4:5], s[0:1], 0x0\n"
                    "s_load_dword s6, s[4:5], 0x0\n";
  EXPECT_EQ(
      hazards(GFX90A, Asm, {FunctionKind::Kernel, false, FeatureSetting::On}),
      "soft-clause@0x8(0/1)");
  EXPECT_EQ(
      hazards(GFX90A, Asm, {FunctionKind::Kernel, false, FeatureSetting::Off}),
      "");
  // Loads that do not feed each other may form a clause.
  EXPECT_EQ(hazards(GFX90A,
                    "s_load_dwordx2 s[4:5], s[0:1], 0x0\n"
                    "s_load_dword s6, s[0:1], 0x8\n",
                    {FunctionKind::Kernel, false, FeatureSetting::On}),
            "");
  // A store after a clause that writes starts a clause of its own.
  EXPECT_EQ(hazards(GFX90A,
                    "s_load_dwordx2 s[4:5], s[0:1], 0x0\n"
                    "s_atomic_add_x2 s[8:9], s[2:3], 0x0\n",
                    {FunctionKind::Kernel, false, FeatureSetting::On}),
            "soft-clause@0x8(0/1)");
  // A clause that writes nothing (atomics without return) takes anything
  // after it, as LLVM reads it: another atomic, a load of its own base.
  EXPECT_EQ(hazards(GFX90A,
                    "s_atomic_add_x2 s[8:9], s[2:3], 0x0\n"
                    "s_atomic_add_x2 s[8:9], s[2:3], 0x8\n"
                    "s_load_dwordx2 s[4:5], s[4:5], 0x0\n",
                    {FunctionKind::Kernel, false, FeatureSetting::On}),
            "");
}

TEST(HazardsTest, GFX940Forwarding) {
  EXPECT_EQ(hazards(GFX942, "v_readfirstlane_b32 s4, v0\n"
                            "v_add_u32 v1, s4, v1\n"),
            "valu-sgpr-valu@0x4(0/2)");
  EXPECT_EQ(hazards(GFX942, "v_exp_f32 v1, v0\n"
                            "v_add_f32 v2, v1, v1\n"),
            "trans-forwarding@0x4(0/1)");
  EXPECT_EQ(hazards(GFX942, "v_exp_f32 v1, v0\n"
                            "v_mov_b32 v5, 0\n"
                            "v_add_f32 v2, v1, v1\n"),
            "");
  EXPECT_EQ(hazards(GFX90A, "v_exp_f32 v1, v0\n"
                            "v_add_f32 v2, v1, v1\n"),
            "");
}

TEST(HazardsTest, GFX101ScalarWritesAfterVectorReads) {
  // A VMEM or DS reads s4, then an SALU writes it: a wait for vm_vsrc, or
  // any VALU, between.
  EXPECT_EQ(hazards(GFX1010,
                    "global_load_dword v1, v0, s[4:5]\n"
                    "s_mov_b32 s4, 0\n",
                    {FunctionKind::Kernel, true}),
            "vmem-scalar-write@0x8");
  EXPECT_EQ(hazards(GFX1010,
                    "global_load_dword v1, v0, s[4:5]\n"
                    "s_waitcnt_depctr 0xffe3\n"
                    "s_mov_b32 s4, 0\n",
                    {FunctionKind::Kernel, true}),
            "");
  EXPECT_EQ(hazards(GFX1010,
                    "global_load_dword v1, v0, s[4:5]\n"
                    "v_mov_b32 v2, 0\n"
                    "s_mov_b32 s4, 0\n",
                    {FunctionKind::Kernel, true}),
            "");
  // EXEC written implicitly (s_and_saveexec) is not the rule's: LLVM reads
  // the writer's explicit results.
  EXPECT_EQ(hazards(GFX1010,
                    "ds_write_b32 v5, v4\n"
                    "s_and_saveexec_b32 s2, vcc_lo\n",
                    {FunctionKind::Kernel, true}),
            "");
  // The other three gfx10.1 rules.
  EXPECT_EQ(hazards(GFX1010,
                    "s_load_dword s4, s[0:1], 0x0\n"
                    "v_readfirstlane_b32 s0, v0\n",
                    {FunctionKind::Kernel, true}),
            "smem-vector-write@0x8");
  EXPECT_EQ(hazards(GFX1010,
                    "s_load_dword s4, s[0:1], 0x0\n"
                    "s_mov_b32 null, 0\n"
                    "v_readfirstlane_b32 s0, v0\n",
                    {FunctionKind::Kernel, true}),
            "");
  EXPECT_EQ(hazards(GFX1010,
                    "s_mov_b32 s0, exec_lo\n"
                    "v_cmpx_eq_u32 v0, v1\n",
                    {FunctionKind::Kernel, true}),
            "vcmpx-exec-war@0x4");
  EXPECT_EQ(hazards(GFX1010,
                    "s_mov_b32 s0, exec_lo\n"
                    "s_waitcnt_depctr 0xfffe\n"
                    "v_cmpx_eq_u32 v0, v1\n",
                    {FunctionKind::Kernel, true}),
            "");
  // Not on gfx10.3.
  EXPECT_EQ(hazards(GFX1030,
                    "global_load_dword v1, v0, s[4:5]\n"
                    "s_mov_b32 s4, 0\n"
                    "s_mov_b32 s0, exec_lo\n"
                    "v_cmpx_eq_u32 v0, v1\n",
                    {FunctionKind::Kernel, true}),
            "");
}

TEST(HazardsTest, GFX101LdsBranchVmem) {
  EXPECT_EQ(hazards(GFX1010,
                    "ds_read_b32 v0, v1\n"
                    "s_branch 0\n"
                    "global_load_dword v2, v3, s[0:1]\n",
                    {FunctionKind::Kernel, true}),
            "lds-branch-vmem@0xc");
  EXPECT_EQ(hazards(GFX1010,
                    "ds_read_b32 v0, v1\n"
                    "s_waitcnt_vscnt null, 0x0\n"
                    "s_branch 0\n"
                    "global_load_dword v2, v3, s[0:1]\n",
                    {FunctionKind::Kernel, true}),
            "");
  // No branch between, or one of the same kind after it.
  EXPECT_EQ(hazards(GFX1010,
                    "ds_read_b32 v0, v1\n"
                    "global_load_dword v2, v3, s[0:1]\n",
                    {FunctionKind::Kernel, true}),
            "");
  EXPECT_EQ(hazards(GFX1010,
                    "ds_read_b32 v0, v1\n"
                    "s_branch 0\n"
                    "ds_read_b32 v4, v1\n"
                    "global_load_dword v2, v3, s[0:1]\n",
                    {FunctionKind::Kernel, true}),
            "");
}

TEST(HazardsTest, VcmpxThenPermlane) {
  EXPECT_EQ(hazards(GFX1100,
                    "v_cmpx_eq_u32 v0, v1\n"
                    "v_nop\n"
                    "v_permlane16_b32 v0, v1, s0, s1\n",
                    {FunctionKind::Kernel, true}),
            "vcmpx-permlane@0x8");
  EXPECT_EQ(hazards(GFX1100,
                    "v_cmpx_eq_u32 v0, v1\n"
                    "v_mov_b32 v1, v1\n"
                    "v_permlane16_b32 v0, v1, s0, s1\n",
                    {FunctionKind::Kernel, true}),
            "");
}

TEST(HazardsTest, GFX11TransUse) {
  EXPECT_EQ(hazards(GFX1100,
                    "v_exp_f32 v1, v0\n"
                    "v_mov_b32 v4, 0\n"
                    "v_add_f32 v2, v1, v1\n",
                    {FunctionKind::Kernel, true}),
            "trans-use@0x8");
  EXPECT_EQ(hazards(GFX1100,
                    "v_exp_f32 v1, v0\n"
                    "s_waitcnt_depctr 0xfff\n"
                    "v_add_f32 v2, v1, v1\n",
                    {FunctionKind::Kernel, true}),
            "");
  // Five VALUs between are not enough; six are.
  EXPECT_EQ(hazards(GFX1100,
                    "v_exp_f32 v1, v0\n"
                    "v_mov_b32 v4, 0\nv_mov_b32 v4, 0\n"
                    "v_mov_b32 v4, 0\nv_mov_b32 v4, 0\n"
                    "v_mov_b32 v4, 0\n"
                    "v_add_f32 v2, v1, v1\n",
                    {FunctionKind::Kernel, true}),
            "trans-use@0x18");
  EXPECT_EQ(hazards(GFX1100,
                    "v_exp_f32 v1, v0\n"
                    "v_mov_b32 v4, 0\nv_mov_b32 v4, 0\n"
                    "v_mov_b32 v4, 0\nv_mov_b32 v4, 0\n"
                    "v_mov_b32 v4, 0\nv_mov_b32 v4, 0\n"
                    "v_add_f32 v2, v1, v1\n",
                    {FunctionKind::Kernel, true}),
            "");
}

TEST(HazardsTest, GFX11Wave64MaskWriteAndPartialForwarding) {
  // A VALU reads s[4:5] as its mask; an SALU writes s[4:5]; a read.
  const char *Mask = "v_cndmask_b32_e64 v0, v1, v2, s[4:5]\n"
                     "s_mov_b64 s[4:5], 0\n"
                     "s_add_u32 s6, s4, 1\n";
  EXPECT_EQ(hazards(GFX1100, Mask), "mask-write@0xc");
  EXPECT_EQ(hazards(GFX1100, "v_cndmask_b32_e64 v0, v1, v2, s[4:5]\n"
                             "s_mov_b64 s[4:5], 0\n"
                             "s_waitcnt_depctr 0xfffe\n"
                             "s_add_u32 s6, s4, 1\n"),
            "");
  // s[4:5] read as a source, not as the mask.
  EXPECT_EQ(hazards(GFX1100, "v_cndmask_b32_e64 v0, s4, v2, s[6:7]\n"
                             "s_mov_b64 s[4:5], 0\n"
                             "s_add_u32 s6, s4, 1\n"),
            "");
  // Wave32 has neither rule.
  EXPECT_EQ(hazards(GFX1100,
                    "v_cndmask_b32_e64 v0, v1, v2, s4\n"
                    "s_mov_b32 s4, 0\n"
                    "s_add_u32 s6, s4, 1\n",
                    {FunctionKind::Kernel, true}),
            "");
  EXPECT_EQ(hazards(GFX1100, "v_mov_b32 v0, 1\n"
                             "s_mov_b64 exec, s[0:1]\n"
                             "v_mov_b32 v1, 2\n"
                             "v_add_f32 v2, v0, v1\n"),
            "partial-forwarding@0xc");
  EXPECT_EQ(hazards(GFX1100, "v_mov_b32 v0, 1\n"
                             "s_mov_b64 exec, s[0:1]\n"
                             "v_mov_b32 v0, 2\n"
                             "v_add_f32 v2, v0, v0\n"),
            "");
}

TEST(HazardsTest, GFX12SGPRReadAfterWrite) {
  // Only a pair a VALU has read is tracked.
  EXPECT_EQ(hazards(GFX1201,
                    "v_add_nc_u32 v0, s4, v0\n"
                    "s_mov_b32 s4, 0\n"
                    "s_add_co_u32 s5, s4, 1\n",
                    {FunctionKind::Kernel, true}),
            "sgpr-read-after-write@0x8");
  EXPECT_EQ(hazards(GFX1201,
                    "s_mov_b32 s4, 0\n"
                    "s_add_co_u32 s5, s4, 1\n",
                    {FunctionKind::Kernel, true}),
            "");
  // ...every pair, in a device function.
  EXPECT_EQ(hazards(GFX1201,
                    "s_mov_b32 s4, 0\n"
                    "s_add_co_u32 s5, s4, 1\n",
                    {FunctionKind::Device, true}),
            "sgpr-read-after-write@0x4");
  EXPECT_EQ(hazards(GFX1201,
                    "v_add_nc_u32 v0, s4, v0\n"
                    "s_mov_b32 s4, 0\n"
                    "s_wait_alu 0xfffe\n"
                    "s_add_co_u32 s5, s4, 1\n",
                    {FunctionKind::Kernel, true}),
            "");
  // A scalar load waits for everything.
  EXPECT_EQ(hazards(GFX1201,
                    "v_add_nc_u32 v0, s4, v0\n"
                    "s_mov_b32 s4, 0\n"
                    "s_load_b32 s8, s[0:1], 0x0\n"
                    "s_add_co_u32 s5, s4, 1\n",
                    {FunctionKind::Kernel, true}),
            "");
  // A VALU's write of VCC: a VALU reader waits (va_vcc), an SALU does not.
  EXPECT_EQ(hazards(GFX1201,
                    "v_cndmask_b32 v0, v1, v2, vcc_lo\n"
                    "v_cmp_eq_u32 vcc_lo, v0, v1\n"
                    "s_and_b32 s0, vcc_lo, s0\n"
                    "v_cndmask_b32 v3, v1, v2, vcc_lo\n",
                    {FunctionKind::Kernel, true}),
            "");
  EXPECT_EQ(hazards(GFX1201,
                    "v_cndmask_b32 v0, v1, v2, vcc_lo\n"
                    "v_cmp_eq_u32 vcc_lo, v0, v1\n"
                    "v_cndmask_b32 v3, v1, v2, vcc_lo\n",
                    {FunctionKind::Kernel, true}),
            "sgpr-read-after-write@0x8");
}

TEST(HazardsTest, GFX1250TransCoexecution) {
  EXPECT_EQ(hazards(GFX1250,
                    "v_exp_f32 v1, v0\n"
                    "v_add_f32 v2, v1, v1\n",
                    {FunctionKind::Kernel, true}),
            "trans-coexec@0x4");
  EXPECT_EQ(hazards(GFX1250,
                    "v_exp_f32 v1, v0\n"
                    "v_nop\n"
                    "v_add_f32 v2, v1, v1\n",
                    {FunctionKind::Kernel, true}),
            "");
}

TEST(HazardsTest, CodeAddedAndTakenBack) {
  // A client splices instructions in (code it means to insert) and takes
  // them out again.
  TargetInfo T = target(GFX90A);
  TargetMC &MC = testMC(T);
  Expected<std::vector<uint8_t>> Bytes =
      MC.assemble("v_readfirstlane_b32 s4, v0\n"
                  "s_nop 7\n"
                  "global_load_dword v1, v2, s[4:5]\n");
  ASSERT_TRUE(bool(Bytes));
  CodeFunction F;
  F.Name = "f";
  F.Kind = FunctionKind::Kernel;
  F.Begin = Base;
  F.End = Base + Bytes->size();
  FunctionMap Map;
  Map.Functions.push_back(F);
  std::vector<MCInst> Decoded;
  FunctionCFG G = buildCFG(MC, F, *Bytes, Map, &Decoded);
  HazardCode Code(MC, G, Decoded, F.Kind);
  HazardRules Rules = HazardRules::of(MC, T, false);
  std::vector<Hazard> Found;
  findHazards(Code, Rules, 2, Found);
  EXPECT_TRUE(Found.empty());
  // Replace the s_nop by another VALU write of s4.
  HazardCode::Mark M = Code.mark();
  uint32_t New = Code.add(Decoded[0], 0x2000, {0});
  Code.setPreds(2, {New});
  findHazards(Code, Rules, 2, Found);
  ASSERT_EQ(Found.size(), 1u);
  EXPECT_EQ(Found[0].From, New);
  EXPECT_EQ(Found[0].Guard, "s_nop 4");
  EXPECT_EQ(describeHazard(Code, Found[0]),
            "a VMEM reads an SGPR a VALU wrote (s4): the instruction at "
            "0x1008 follows the instruction at 0x2000 by 0 wait states (5 "
            "needed)");
  Code.restore(M);
  Found.clear();
  findHazards(Code, Rules, 2, Found);
  EXPECT_TRUE(Found.empty());
  EXPECT_EQ(Code.size(), 3u);
}

} // namespace
