// A gfx90a kernel for instrument-relax.test (written by hand): a loop
// whose body is 128 KiB of s_nop, so that both of its branches just reach
// their targets: the exit forward from the loop head, the back edge to
// the loop head. Counter code before every block puts both out of reach
// in the copy. The loop head reads SCC, which the back edge's compare
// sets: a long jump back must keep it.
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text
.globl far
.p2align 8
.type far,@function
far:
  s_load_dword s0, s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  s_cmp_eq_u32 s0, 0
.Lfar_loop:
  s_cselect_b32 s2, 1, 2
  s_sub_u32 s0, s0, s2
  s_cbranch_scc1 .Lfar_out
  v_add_u32_e32 v0, 1, v0
  // 131060 bytes from the end of s_cbranch_scc1 to .Lfar_out (131068
  // reach); 131068 back from the end of s_cbranch_scc0 (131072 reach).
  .fill 32761, 4, 0xbf800000
  s_cmp_eq_u32 s0, 7
  s_cbranch_scc0 .Lfar_loop
  v_mov_b32_e32 v1, 0
.Lfar_out:
  s_endpgm
.Lfar_end:
.size far, .Lfar_end-far

.rodata
.p2align 6
.amdhsa_kernel far
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
    .name:           far
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         far.kd
    .vgpr_count:     4
    .wavefront_size: 64
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
