// A gfx1250 kernel that switches VGPR banks (written by hand): between
// s_set_vgpr_msb 1 and s_set_vgpr_msb 0, v1 names v257.
.amdgcn_target "amdgcn-amd-amdhsa--gfx1250"
.text
.globl banks
.p2align 8
.type banks,@function
banks:
  v_mov_b32 v1, 1
  s_set_vgpr_msb 1
  v_mov_b32 v1, 2
  s_set_vgpr_msb 0
  v_add_nc_u32 v0, v1, v0
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel banks
  .amdhsa_next_free_vgpr 264
  .amdhsa_next_free_sgpr 8
  .amdhsa_wavefront_size32 1
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.kernels:
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 0
    .max_flat_workgroup_size: 256
    .name:           banks
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .symbol:         banks.kd
    .vgpr_count:     264
    .wavefront_size: 32
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
