// far.s for gfx1201 (written by hand): the same loop, after VALUs that
// read s[0:11], so gfx12 tracks those SGPR pairs (Hazards.h). A long
// jump there waits for its own SALU writes (s_wait_alu sa_sdst(0)).
.amdgcn_target "amdgcn-amd-amdhsa--gfx1201"
.text
.globl far
.p2align 8
.type far,@function
far:
  s_load_b32 s0, s[0:1], 0x0
  v_add_nc_u32 v1, s2, v0
  v_add_nc_u32 v1, s4, v1
  v_add_nc_u32 v1, s6, v1
  v_add_nc_u32 v1, s8, v1
  v_add_nc_u32 v1, s10, v1
  s_wait_kmcnt 0
  s_cmp_eq_u32 s0, 0
.Lfar_loop:
  s_cselect_b32 s2, 1, 2
  s_sub_co_u32 s0, s0, s2
  s_cbranch_scc1 .Lfar_out
  v_add_nc_u32 v0, 1, v0
  .fill 32761, 4, 0xbf800000
  s_cmp_eq_u32 s0, 7
  s_cbranch_scc0 .Lfar_loop
  v_mov_b32 v1, 0
.Lfar_out:
  s_endpgm
.Lfar_end:
.size far, .Lfar_end-far

.rodata
.p2align 6
.amdhsa_kernel far
  .amdhsa_next_free_vgpr 4
  .amdhsa_next_free_sgpr 16
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_wavefront_size32 1
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
    .wavefront_size: 32
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
