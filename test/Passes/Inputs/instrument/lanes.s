// A gfx90a kernel for instrument.test (written by hand): SCC, set by
// s_cmp_eq_u32 in the first block, is live at the start of the next two
// blocks, where counting lanes (s_bcnt1_i32_b64 writes SCC) cannot go.
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text
.globl scc
.p2align 8
.type scc,@function
scc:
  s_load_dword s0, s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s0, 0
  s_cbranch_execz .Lscc_join
  v_mov_b32_e32 v0, 1
.Lscc_join:
  s_cbranch_scc1 .Lscc_end
  v_mov_b32_e32 v0, 2
.Lscc_end:
  s_endpgm
.Lscc_fn_end:
.size scc, .Lscc_fn_end-scc

.rodata
.p2align 6
.amdhsa_kernel scc
  .amdhsa_next_free_vgpr 4
  .amdhsa_next_free_sgpr 16
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
    .name:           scc
    .private_segment_fixed_size: 0
    .sgpr_count:     22
    .symbol:         scc.kd
    .vgpr_count:     4
    .wavefront_size: 64
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
