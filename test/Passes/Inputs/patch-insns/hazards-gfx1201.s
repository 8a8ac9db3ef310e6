// A gfx1201 kernel for patch-insns-hazards.test (written by hand): a VALU
// reads s4 (gfx12 then tracks the pair s[4:5]), a VALU writes s4, and the
// next VALU read of s4 waits for it (s_wait_alu va_sdst), as LLVM leaves
// it.
.amdgcn_target "amdgcn-amd-amdhsa--gfx1201"
.text
.globl k12
.p2align 8
.type k12,@function
k12:
  s_load_b64 s[0:1], s[0:1], 0x0
  v_add_nc_u32 v1, s4, v0
  v_readfirstlane_b32 s4, v1
  s_wait_alu depctr_va_sdst(0)
  v_add_nc_u32 v2, s4, v0
  s_wait_kmcnt 0
  global_store_b32 v0, v2, s[0:1]
  s_endpgm

.rodata
.p2align 6
.amdhsa_kernel k12
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 8
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
    .name:           k12
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .symbol:         k12.kd
    .vgpr_count:     8
    .wavefront_size: 32
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
