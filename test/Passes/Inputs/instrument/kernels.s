// gfx90a kernels for instrument.test (written by hand):
//   'tight' holds s0-s101, every SGPR it may address, live across its
//   loop: the loop's blocks have no SGPR for counter code and none can
//   be added above the allocation; its first block (before the SGPRs are
//   written) has room.
//   'small' allocates 16 SGPRs and keeps s0-s9 live across its loop: its
//   counter code takes SGPRs above the allocation, which grows.
.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
.text
.globl tight
.p2align 8
.type tight,@function
tight:
  s_load_dword s100, s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[0:1], 0
  s_mov_b64 s[2:3], 2
  s_mov_b64 s[4:5], 4
  s_mov_b64 s[6:7], 6
  s_mov_b64 s[8:9], 8
  s_mov_b64 s[10:11], 10
  s_mov_b64 s[12:13], 12
  s_mov_b64 s[14:15], 14
  s_mov_b64 s[16:17], 16
  s_mov_b64 s[18:19], 18
  s_mov_b64 s[20:21], 20
  s_mov_b64 s[22:23], 22
  s_mov_b64 s[24:25], 24
  s_mov_b64 s[26:27], 26
  s_mov_b64 s[28:29], 28
  s_mov_b64 s[30:31], 30
  s_mov_b64 s[32:33], 32
  s_mov_b64 s[34:35], 34
  s_mov_b64 s[36:37], 36
  s_mov_b64 s[38:39], 38
  s_mov_b64 s[40:41], 40
  s_mov_b64 s[42:43], 42
  s_mov_b64 s[44:45], 44
  s_mov_b64 s[46:47], 46
  s_mov_b64 s[48:49], 48
  s_mov_b64 s[50:51], 50
  s_mov_b64 s[52:53], 52
  s_mov_b64 s[54:55], 54
  s_mov_b64 s[56:57], 56
  s_mov_b64 s[58:59], 58
  s_mov_b64 s[60:61], 60
  s_mov_b64 s[62:63], 62
  s_mov_b64 s[64:65], 64
  s_mov_b64 s[66:67], 66
  s_mov_b64 s[68:69], 68
  s_mov_b64 s[70:71], 70
  s_mov_b64 s[72:73], 72
  s_mov_b64 s[74:75], 74
  s_mov_b64 s[76:77], 76
  s_mov_b64 s[78:79], 78
  s_mov_b64 s[80:81], 80
  s_mov_b64 s[82:83], 82
  s_mov_b64 s[84:85], 84
  s_mov_b64 s[86:87], 86
  s_mov_b64 s[88:89], 88
  s_mov_b64 s[90:91], 90
  s_mov_b64 s[92:93], 92
  s_mov_b64 s[94:95], 94
  s_mov_b64 s[96:97], 96
  s_mov_b64 s[98:99], 98
  s_mov_b32 s101, 0
.Ltight_loop:
  s_xor_b64 s[0:1], s[0:1], s[2:3]
  s_xor_b64 s[2:3], s[2:3], s[4:5]
  s_xor_b64 s[4:5], s[4:5], s[6:7]
  s_xor_b64 s[6:7], s[6:7], s[8:9]
  s_xor_b64 s[8:9], s[8:9], s[10:11]
  s_xor_b64 s[10:11], s[10:11], s[12:13]
  s_xor_b64 s[12:13], s[12:13], s[14:15]
  s_xor_b64 s[14:15], s[14:15], s[16:17]
  s_xor_b64 s[16:17], s[16:17], s[18:19]
  s_xor_b64 s[18:19], s[18:19], s[20:21]
  s_xor_b64 s[20:21], s[20:21], s[22:23]
  s_xor_b64 s[22:23], s[22:23], s[24:25]
  s_xor_b64 s[24:25], s[24:25], s[26:27]
  s_xor_b64 s[26:27], s[26:27], s[28:29]
  s_xor_b64 s[28:29], s[28:29], s[30:31]
  s_xor_b64 s[30:31], s[30:31], s[32:33]
  s_xor_b64 s[32:33], s[32:33], s[34:35]
  s_xor_b64 s[34:35], s[34:35], s[36:37]
  s_xor_b64 s[36:37], s[36:37], s[38:39]
  s_xor_b64 s[38:39], s[38:39], s[40:41]
  s_xor_b64 s[40:41], s[40:41], s[42:43]
  s_xor_b64 s[42:43], s[42:43], s[44:45]
  s_xor_b64 s[44:45], s[44:45], s[46:47]
  s_xor_b64 s[46:47], s[46:47], s[48:49]
  s_xor_b64 s[48:49], s[48:49], s[50:51]
  s_xor_b64 s[50:51], s[50:51], s[52:53]
  s_xor_b64 s[52:53], s[52:53], s[54:55]
  s_xor_b64 s[54:55], s[54:55], s[56:57]
  s_xor_b64 s[56:57], s[56:57], s[58:59]
  s_xor_b64 s[58:59], s[58:59], s[60:61]
  s_xor_b64 s[60:61], s[60:61], s[62:63]
  s_xor_b64 s[62:63], s[62:63], s[64:65]
  s_xor_b64 s[64:65], s[64:65], s[66:67]
  s_xor_b64 s[66:67], s[66:67], s[68:69]
  s_xor_b64 s[68:69], s[68:69], s[70:71]
  s_xor_b64 s[70:71], s[70:71], s[72:73]
  s_xor_b64 s[72:73], s[72:73], s[74:75]
  s_xor_b64 s[74:75], s[74:75], s[76:77]
  s_xor_b64 s[76:77], s[76:77], s[78:79]
  s_xor_b64 s[78:79], s[78:79], s[80:81]
  s_xor_b64 s[80:81], s[80:81], s[82:83]
  s_xor_b64 s[82:83], s[82:83], s[84:85]
  s_xor_b64 s[84:85], s[84:85], s[86:87]
  s_xor_b64 s[86:87], s[86:87], s[88:89]
  s_xor_b64 s[88:89], s[88:89], s[90:91]
  s_xor_b64 s[90:91], s[90:91], s[92:93]
  s_xor_b64 s[92:93], s[92:93], s[94:95]
  s_xor_b64 s[94:95], s[94:95], s[96:97]
  s_xor_b64 s[96:97], s[96:97], s[98:99]
  s_xor_b64 s[98:99], s[98:99], s[100:101]
  s_sub_u32 s100, s100, 1
  s_cbranch_scc0 .Ltight_loop
  v_mov_b32_e32 v0, 0
  v_add_u32_e32 v0, s0, v0
  v_add_u32_e32 v0, s1, v0
  v_add_u32_e32 v0, s2, v0
  v_add_u32_e32 v0, s3, v0
  v_add_u32_e32 v0, s4, v0
  v_add_u32_e32 v0, s5, v0
  v_add_u32_e32 v0, s6, v0
  v_add_u32_e32 v0, s7, v0
  v_add_u32_e32 v0, s8, v0
  v_add_u32_e32 v0, s9, v0
  v_add_u32_e32 v0, s10, v0
  v_add_u32_e32 v0, s11, v0
  v_add_u32_e32 v0, s12, v0
  v_add_u32_e32 v0, s13, v0
  v_add_u32_e32 v0, s14, v0
  v_add_u32_e32 v0, s15, v0
  v_add_u32_e32 v0, s16, v0
  v_add_u32_e32 v0, s17, v0
  v_add_u32_e32 v0, s18, v0
  v_add_u32_e32 v0, s19, v0
  v_add_u32_e32 v0, s20, v0
  v_add_u32_e32 v0, s21, v0
  v_add_u32_e32 v0, s22, v0
  v_add_u32_e32 v0, s23, v0
  v_add_u32_e32 v0, s24, v0
  v_add_u32_e32 v0, s25, v0
  v_add_u32_e32 v0, s26, v0
  v_add_u32_e32 v0, s27, v0
  v_add_u32_e32 v0, s28, v0
  v_add_u32_e32 v0, s29, v0
  v_add_u32_e32 v0, s30, v0
  v_add_u32_e32 v0, s31, v0
  v_add_u32_e32 v0, s32, v0
  v_add_u32_e32 v0, s33, v0
  v_add_u32_e32 v0, s34, v0
  v_add_u32_e32 v0, s35, v0
  v_add_u32_e32 v0, s36, v0
  v_add_u32_e32 v0, s37, v0
  v_add_u32_e32 v0, s38, v0
  v_add_u32_e32 v0, s39, v0
  v_add_u32_e32 v0, s40, v0
  v_add_u32_e32 v0, s41, v0
  v_add_u32_e32 v0, s42, v0
  v_add_u32_e32 v0, s43, v0
  v_add_u32_e32 v0, s44, v0
  v_add_u32_e32 v0, s45, v0
  v_add_u32_e32 v0, s46, v0
  v_add_u32_e32 v0, s47, v0
  v_add_u32_e32 v0, s48, v0
  v_add_u32_e32 v0, s49, v0
  v_add_u32_e32 v0, s50, v0
  v_add_u32_e32 v0, s51, v0
  v_add_u32_e32 v0, s52, v0
  v_add_u32_e32 v0, s53, v0
  v_add_u32_e32 v0, s54, v0
  v_add_u32_e32 v0, s55, v0
  v_add_u32_e32 v0, s56, v0
  v_add_u32_e32 v0, s57, v0
  v_add_u32_e32 v0, s58, v0
  v_add_u32_e32 v0, s59, v0
  v_add_u32_e32 v0, s60, v0
  v_add_u32_e32 v0, s61, v0
  v_add_u32_e32 v0, s62, v0
  v_add_u32_e32 v0, s63, v0
  v_add_u32_e32 v0, s64, v0
  v_add_u32_e32 v0, s65, v0
  v_add_u32_e32 v0, s66, v0
  v_add_u32_e32 v0, s67, v0
  v_add_u32_e32 v0, s68, v0
  v_add_u32_e32 v0, s69, v0
  v_add_u32_e32 v0, s70, v0
  v_add_u32_e32 v0, s71, v0
  v_add_u32_e32 v0, s72, v0
  v_add_u32_e32 v0, s73, v0
  v_add_u32_e32 v0, s74, v0
  v_add_u32_e32 v0, s75, v0
  v_add_u32_e32 v0, s76, v0
  v_add_u32_e32 v0, s77, v0
  v_add_u32_e32 v0, s78, v0
  v_add_u32_e32 v0, s79, v0
  v_add_u32_e32 v0, s80, v0
  v_add_u32_e32 v0, s81, v0
  v_add_u32_e32 v0, s82, v0
  v_add_u32_e32 v0, s83, v0
  v_add_u32_e32 v0, s84, v0
  v_add_u32_e32 v0, s85, v0
  v_add_u32_e32 v0, s86, v0
  v_add_u32_e32 v0, s87, v0
  v_add_u32_e32 v0, s88, v0
  v_add_u32_e32 v0, s89, v0
  v_add_u32_e32 v0, s90, v0
  v_add_u32_e32 v0, s91, v0
  v_add_u32_e32 v0, s92, v0
  v_add_u32_e32 v0, s93, v0
  v_add_u32_e32 v0, s94, v0
  v_add_u32_e32 v0, s95, v0
  v_add_u32_e32 v0, s96, v0
  v_add_u32_e32 v0, s97, v0
  v_add_u32_e32 v0, s98, v0
  v_add_u32_e32 v0, s99, v0
  v_add_u32_e32 v0, s100, v0
  v_add_u32_e32 v0, s101, v0
  s_endpgm
.Ltight_end:
.size tight, .Ltight_end-tight

.globl small
.p2align 8
.type small,@function
small:
  s_load_dword s0, s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s1, 0
  s_mov_b64 s[2:3], 2
  s_mov_b64 s[4:5], 4
  s_mov_b64 s[6:7], 6
  s_mov_b64 s[8:9], 8
.Lsmall_loop:
  s_xor_b64 s[0:1], s[0:1], s[2:3]
  s_xor_b64 s[2:3], s[2:3], s[4:5]
  s_xor_b64 s[4:5], s[4:5], s[6:7]
  s_xor_b64 s[6:7], s[6:7], s[8:9]
  s_xor_b64 s[8:9], s[8:9], s[0:1]
  s_sub_u32 s0, s0, 1
  s_cbranch_scc0 .Lsmall_loop
  v_mov_b32_e32 v0, 0
  v_add_u32_e32 v0, s0, v0
  v_add_u32_e32 v0, s1, v0
  v_add_u32_e32 v0, s2, v0
  v_add_u32_e32 v0, s3, v0
  v_add_u32_e32 v0, s4, v0
  v_add_u32_e32 v0, s5, v0
  v_add_u32_e32 v0, s6, v0
  v_add_u32_e32 v0, s7, v0
  v_add_u32_e32 v0, s8, v0
  v_add_u32_e32 v0, s9, v0
  s_endpgm
.Lsmall_end:
.size small, .Lsmall_end-small

.rodata
.p2align 6
.amdhsa_kernel tight
  .amdhsa_next_free_vgpr 4
  .amdhsa_next_free_sgpr 102
  .amdhsa_reserve_vcc 1
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_accum_offset 4
.end_amdhsa_kernel
.amdhsa_kernel small
  .amdhsa_next_free_vgpr 4
  .amdhsa_next_free_sgpr 10
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
    .name:           tight
    .private_segment_fixed_size: 0
    .sgpr_count:     108
    .symbol:         tight.kd
    .vgpr_count:     4
    .wavefront_size: 64
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .max_flat_workgroup_size: 256
    .name:           small
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .symbol:         small.kd
    .vgpr_count:     4
    .wavefront_size: 64
amdhsa.version:
  - 1
  - 2
...
.end_amdgpu_metadata
