// A gfx90a kernel for instrument-edges.test (written by hand): two
// conditional branches whose successors cross (the first block's two ways
// lead to 'a' and 'b'; 'a' branches to 'd' or falls into 'c', 'b' branches
// to 'c' or falls into 'd'). Block counts leave the four edges of that
// cycle unknown; counting one of them gives the rest.
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text
.globl crossing
.p2align 8
.type crossing,@function
crossing:
  s_load_dword s0, s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s0, 0
  s_cbranch_scc1 .Lb
.La:
  s_cmp_eq_u32 s0, 1
  s_cbranch_scc1 .Ld
.Lc:
  v_add_u32_e32 v0, 1, v0
  s_branch .Lend
.Lb:
  s_cmp_eq_u32 s0, 2
  s_cbranch_scc1 .Lc
.Ld:
  v_add_u32_e32 v1, 1, v1
.Lend:
  s_endpgm
.Lcrossing_end:
.size crossing, .Lcrossing_end-crossing

.rodata
.p2align 6
.amdhsa_kernel crossing
  .amdhsa_next_free_vgpr 4
  .amdhsa_next_free_sgpr 16
  .amdhsa_reserve_vcc 0
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_accum_offset 4
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.kernels:
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 256
    .name:           crossing
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         crossing.kd
    .vgpr_count:     4
    .wavefront_size: 64
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
