// Two gfx90a kernels for the code printers and checks. 'k' is what a
// compiler writes: an if under s_and_saveexec, a store, s_endpgm. 'bad'
// holds what a hostile or broken object may: a branch into the middle of
// an 8-byte instruction, and bytes that are no instruction.
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text
.globl k
.p2align 8
.type k,@function
k:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_cmp_gt_u32_e32 vcc, 64, v0
  s_and_saveexec_b64 s[4:5], vcc
  s_cbranch_execz .Ldone
  v_mov_b32_e32 v1, 1
  v_lshlrev_b32_e32 v0, 2, v0
  s_waitcnt lgkmcnt(0)
  global_store_dword v0, v1, s[2:3]
.Ldone:
  s_endpgm
.Lend:
.size k, .Lend-k

.globl bad
.p2align 8
.type bad,@function
bad:
  s_cbranch_scc0 1
  s_add_u32 s0, s0, 0x12345
  s_endpgm
  .long 0xffffffff
.Lbadend:
.size bad, .Lbadend-bad

.rodata
.p2align 6
.amdhsa_kernel k
  .amdhsa_next_free_vgpr 2
  .amdhsa_next_free_sgpr 8
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_accum_offset 4
.end_amdhsa_kernel
.amdhsa_kernel bad
  .amdhsa_next_free_vgpr 1
  .amdhsa_next_free_sgpr 8
  .amdhsa_accum_offset 4
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.kernels:
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 256
    .name:           k
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .symbol:         k.kd
    .vgpr_count:     2
    .wavefront_size: 64
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 0
    .max_flat_workgroup_size: 256
    .name:           bad
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .symbol:         bad.kd
    .vgpr_count:     1
    .wavefront_size: 64
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
