// Four gfx90a kernels for print<clones>: 'branchy' branches under EXEC,
// 'data' reads a table through its PC-relative address, 'skip' jumps over
// an instruction through s_setpc_b64 (the Tensile form, the offset in an
// SGPR), and 'peek' reads the PC into a VGPR, which no copy can keep.
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text
.globl branchy
.p2align 8
.type branchy,@function
branchy:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_cmp_gt_u32_e32 vcc, 64, v0
  s_and_saveexec_b64 s[4:5], vcc
  s_cbranch_execz .Lbranchy_done
  v_mov_b32_e32 v1, 1
  v_lshlrev_b32_e32 v0, 2, v0
  s_waitcnt lgkmcnt(0)
  global_store_dword v0, v1, s[2:3]
.Lbranchy_done:
  s_endpgm
.Lbranchy_end:
.size branchy, .Lbranchy_end-branchy

.globl data
.p2align 8
.type data,@function
data:
  s_getpc_b64 s[4:5]
  s_add_u32 s4, s4, table@rel32@lo+4
  s_addc_u32 s5, s5, table@rel32@hi+12
  s_load_dword s6, s[4:5], 0x0
  s_endpgm
.Ldata_end:
.size data, .Ldata_end-data

.globl skip
.p2align 8
.type skip,@function
skip:
  s_getpc_b64 s[4:5]
.Lskip_pc:
  s_mov_b32 s6, .Lskip_to-.Lskip_pc
  s_add_u32 s4, s4, s6
  s_addc_u32 s5, s5, 0
  s_setpc_b64 s[4:5]
  v_mov_b32_e32 v0, 0
.Lskip_to:
  s_endpgm
.Lskip_end:
.size skip, .Lskip_end-skip

.globl peek
.p2align 8
.type peek,@function
peek:
  s_getpc_b64 s[4:5]
  v_mov_b32_e32 v0, s4
  s_endpgm
.Lpeek_end:
.size peek, .Lpeek_end-peek

.rodata
.p2align 6
.amdhsa_kernel branchy
  .amdhsa_next_free_vgpr 2
  .amdhsa_next_free_sgpr 8
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_accum_offset 4
.end_amdhsa_kernel
.amdhsa_kernel data
  .amdhsa_next_free_vgpr 2
  .amdhsa_next_free_sgpr 8
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_accum_offset 4
.end_amdhsa_kernel
.amdhsa_kernel skip
  .amdhsa_next_free_vgpr 2
  .amdhsa_next_free_sgpr 8
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_accum_offset 4
.end_amdhsa_kernel
.amdhsa_kernel peek
  .amdhsa_next_free_vgpr 2
  .amdhsa_next_free_sgpr 8
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_accum_offset 4
.end_amdhsa_kernel
.data
.p2align 2
.local table
table:
  .long 7

.amdgpu_metadata
---
amdhsa.kernels:
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 256
    .name:           branchy
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .symbol:         branchy.kd
    .vgpr_count:     2
    .wavefront_size: 64
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 256
    .name:           data
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .symbol:         data.kd
    .vgpr_count:     2
    .wavefront_size: 64
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 256
    .name:           skip
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .symbol:         skip.kd
    .vgpr_count:     2
    .wavefront_size: 64
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 256
    .name:           peek
    .private_segment_fixed_size: 0
    .sgpr_count:     8
    .symbol:         peek.kd
    .vgpr_count:     2
    .wavefront_size: 64
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
