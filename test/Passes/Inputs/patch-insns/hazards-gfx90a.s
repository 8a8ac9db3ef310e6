// A gfx90a kernel for patch-insns-hazards.test (written by hand): a VALU
// writes s6, and the VMEM reading s[6:7] follows it by the 5 wait states
// gfx9 needs (s_nop 4), as a compiler leaves it.
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text
.globl vmem
.p2align 8
.type vmem,@function
vmem:
  s_load_dwordx2 s[0:1], s[4:5], 0x0
  s_mov_b32 s7, 0
  v_readfirstlane_b32 s6, v0
  s_nop 4
  global_load_dword v1, v2, s[6:7]
  s_waitcnt vmcnt(0) lgkmcnt(0)
  global_store_dword v2, v1, s[0:1]
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel vmem
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 16
  .amdhsa_reserve_vcc 0
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_accum_offset 8
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.kernels:
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 256
    .name:           vmem
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         vmem.kd
    .vgpr_count:     8
    .wavefront_size: 64
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
