; Three gfx900:xnack- kernels at the boundaries of the scratch pair rule,
; each allocated 16 SGPRs (granule 1) as llvm-mc computes it from
; .amdhsa_next_free_sgpr and the reserved VCC (for test/Passes and
; test/Verify):
;  * fit:  11 live-ins (10 user SGPRs, workgroup ID X); s[12:13] and VCC
;          above it fill the 16 SGPRs exactly. Its code uses s[12:13].
;  * vcc:  13 live-ins (12 user, X); s[14:15] + VCC = 18 does not fit,
;          VCC (the top pair) above the live-ins does.
;  * bump: 13 live-ins with flat scratch init, which counts FLAT_SCRATCH
;          and XNACK_MASK's slot below VCC (6); neither s[14:15] + 6 = 22
;          nor 13 + 6 = 19 fits 16 SGPRs: the granule is raised to 2 (24).
; Metadata .sgpr_count: 16, 15, 15.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx900:xnack-"
	.amdhsa_code_object_version 5
	.text
	.globl	fit
	.p2align	8
	.type	fit,@function
fit:
	s_mov_b64 s[12:13], s[8:9]
	s_endpgm
.Lfit_end:
	.size	fit, .Lfit_end-fit
	.globl	vcc
	.p2align	8
	.type	vcc,@function
vcc:
	s_endpgm
.Lvcc_end:
	.size	vcc, .Lvcc_end-vcc
	.globl	bump
	.p2align	8
	.type	bump,@function
bump:
	s_endpgm
.Lbump_end:
	.size	bump, .Lbump_end-bump
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel fit
		.amdhsa_user_sgpr_count 10
		.amdhsa_user_sgpr_private_segment_buffer 1
		.amdhsa_user_sgpr_dispatch_ptr 1
		.amdhsa_user_sgpr_queue_ptr 1
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_next_free_vgpr 1
		.amdhsa_next_free_sgpr 14
		.amdhsa_reserve_vcc 1
		.amdhsa_reserve_flat_scratch 0
		.amdhsa_reserve_xnack_mask 0
	.end_amdhsa_kernel
	.amdhsa_kernel vcc
		.amdhsa_user_sgpr_count 12
		.amdhsa_user_sgpr_private_segment_buffer 1
		.amdhsa_user_sgpr_dispatch_ptr 1
		.amdhsa_user_sgpr_queue_ptr 1
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_next_free_vgpr 1
		.amdhsa_next_free_sgpr 13
		.amdhsa_reserve_vcc 1
		.amdhsa_reserve_flat_scratch 0
		.amdhsa_reserve_xnack_mask 0
	.end_amdhsa_kernel
	.amdhsa_kernel bump
		.amdhsa_user_sgpr_count 12
		.amdhsa_user_sgpr_private_segment_buffer 1
		.amdhsa_user_sgpr_dispatch_ptr 1
		.amdhsa_user_sgpr_queue_ptr 1
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_flat_scratch_init 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_next_free_vgpr 1
		.amdhsa_next_free_sgpr 13
		.amdhsa_reserve_vcc 1
		.amdhsa_reserve_flat_scratch 0
		.amdhsa_reserve_xnack_mask 0
	.end_amdhsa_kernel
	.text
	.p2alignl 6, 3212836864
	.fill 256, 4, 3212836864
	.amdgpu_metadata
---
amdhsa.kernels:
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 0
    .language:       OpenCL C
    .language_version:
      - 1
      - 2
    .max_flat_workgroup_size: 256
    .name:           fit
    .private_segment_fixed_size: 0
    .sgpr_count:     16
    .sgpr_spill_count: 0
    .symbol:         fit.kd
    .vgpr_count:     1
    .vgpr_spill_count: 0
    .wavefront_size: 64
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 0
    .language:       OpenCL C
    .language_version:
      - 1
      - 2
    .max_flat_workgroup_size: 256
    .name:           vcc
    .private_segment_fixed_size: 0
    .sgpr_count:     15
    .sgpr_spill_count: 0
    .symbol:         vcc.kd
    .vgpr_count:     1
    .vgpr_spill_count: 0
    .wavefront_size: 64
  - .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 0
    .language:       OpenCL C
    .language_version:
      - 1
      - 2
    .max_flat_workgroup_size: 256
    .name:           bump
    .private_segment_fixed_size: 0
    .sgpr_count:     15
    .sgpr_spill_count: 0
    .symbol:         bump.kd
    .vgpr_count:     1
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx900:xnack-
amdhsa.version:
  - 1
  - 2
...
	.end_amdgpu_metadata
