// gfx1250's s_add_pc_i64 (PC = the end of the instruction + a signed
// 64-bit operand), the long branch LLVM 22 writes there: 'fwd' jumps
// forward with an inline constant over code a conditional branch reaches;
// 'back' closes a loop with a 64-bit literal (lit64), as LLVM does; 'reg'
// adds an SGPR pair, a jump this analysis does not compute.
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text
.globl fwd
.p2align 8
.type fwd,@function
fwd:
  s_cmp_eq_u32 s0, 0
  s_cbranch_scc0 .Lmid
  s_add_pc_i64 8
.Lmid:
  s_mov_b32 s1, 2
  s_mov_b32 s3, 4
  s_mov_b32 s2, 3
  s_endpgm
.Lfwd_end:
.size fwd, .Lfwd_end-fwd

.globl back
.p2align 8
.type back,@function
back:
  s_mov_b32 s0, 0
.Ltop:
  s_add_co_u32 s0, s0, 1
  s_mov_b32 s1, 2
  s_mov_b32 s3, 2
  s_cmp_lt_u32 s0, 10
  s_cbranch_scc0 .Lout
  s_add_pc_i64 lit64(-32)
.Lout:
  s_endpgm
.Lback_end:
.size back, .Lback_end-back

.globl reg
.p2align 8
.type reg,@function
reg:
  s_mov_b64 s[2:3], 4
  s_add_pc_i64 s[2:3]
  s_mov_b32 s1, 2
  s_endpgm
.Lreg_end:
.size reg, .Lreg_end-reg

.rodata
.p2align 6
.amdhsa_kernel fwd
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel back
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
.p2align 6
.amdhsa_kernel reg
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 8
.end_amdhsa_kernel
