"""Prints a gfx1030 kernel 'many' (wave32) of N+2 blocks: a chain of N
compares, each branching to the end, for instrument-reach.test."""
import sys

n = int(sys.argv[1])
out = ['.amdgcn_target "amdgcn-amd-amdhsa--gfx1030"', ".text", ".globl many",
       ".p2align 8", ".type many,@function", "many:",
       "  s_load_dword s0, s[4:5], 0x0", "  s_waitcnt lgkmcnt(0)"]
for i in range(n):
    out += ["  s_cmp_eq_u32 s0, %d" % i, "  s_cbranch_scc1 .Lend",
            "  v_add_nc_u32_e32 v0, 1, v0"]
out += [".Lend:", "  s_endpgm", ".Lmany_end:", ".size many, .Lmany_end-many",
        "", ".rodata", ".p2align 6", ".amdhsa_kernel many",
        "  .amdhsa_next_free_vgpr 1", "  .amdhsa_next_free_sgpr 8",
        "  .amdhsa_user_sgpr_kernarg_segment_ptr 1",
        "  .amdhsa_wavefront_size32 1", ".end_amdhsa_kernel", "",
        ".amdgpu_metadata", "---", "amdhsa.kernels:",
        "  - .group_segment_fixed_size: 0", "    .kernarg_segment_align: 8",
        "    .kernarg_segment_size: 8", "    .max_flat_workgroup_size: 256",
        "    .name:           many", "    .private_segment_fixed_size: 0",
        "    .sgpr_count:     8", "    .symbol:         many.kd",
        "    .vgpr_count:     1", "    .wavefront_size: 32",
        "amdhsa.version:", "  - 1", "  - 2", "...", ".end_amdgpu_metadata"]
print("\n".join(out))
