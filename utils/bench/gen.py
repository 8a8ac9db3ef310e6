#!/usr/bin/env python3
"""Writes AMDGPU assembly for a synthetic code object with N kernels.

The layout is what clang + ld.lld produce: every kernel is a 256-byte aligned
function in .text, its 64-byte descriptor (`<name>.kd`, from .amdhsa_kernel)
in .rodata, and one NT_AMDGPU_METADATA note (from the .amdgpu_metadata YAML
block) that lists each kernel with its .name, .symbol and register counts.

Usage: gen.py N OUT.s [--body-words W] [--debug-bytes B] [--mcpu gfx90a]
                [--sgprs K] [--no-numbered-sgpr]
  --body-words W   extra words per kernel body (large kernels): s_nop, or
                   with --sgprs, instructions naming SGPRs
  --debug-bytes B  size of a non-loaded .debug_info-like section
  --sgprs K        kernel bodies name s0..s(K-1) (SALU, VALU with an SGPR
                   operand, SMEM loads): .amdhsa_next_free_sgpr K, VCC
                   reserved, metadata .sgpr_count K + 6 (VCC, FLAT_SCRATCH,
                   XNACK_MASK, as clang counts them on gfx9)
  --no-numbered-sgpr  no `<kernel>.numbered_sgpr` symbols (as ROCm 5.x
                   builds): the SGPR usage of a long-form stub's kernel comes
                   from the metadata or, when that leaves no free pair, from
                   an MC scan of the kernel's code
"""

import argparse
import sys

S_NOP_0 = 0xBF800000

KERNEL = """\
\t.text
\t.globl\t{k}
\t.p2align\t8
\t.type\t{k},@function
{k}:
\ts_load_dwordx2 s[0:1], s[4:5], 0x0
\tv_lshlrev_b32_e32 v0, 2, v0
\tv_mov_b32_e32 v1, {imm}
\ts_waitcnt lgkmcnt(0)
{body}\tglobal_store_dword v0, v1, s[0:1]
\ts_endpgm
.Lfunc_end{i}:
\t.size\t{k}, .Lfunc_end{i}-{k}
{numbered}\t.section\t.rodata,"a",@progbits
\t.p2align\t6, 0x0
\t.amdhsa_kernel {k}
\t\t.amdhsa_kernarg_size 8
\t\t.amdhsa_user_sgpr_count 6
\t\t.amdhsa_user_sgpr_private_segment_buffer 1
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_system_sgpr_workgroup_id_x 1
\t\t.amdhsa_next_free_vgpr 2
\t\t.amdhsa_next_free_sgpr {nsgpr}
\t\t.amdhsa_accum_offset 4
\t\t.amdhsa_reserve_vcc {vcc}
\t\t.amdhsa_reserve_flat_scratch 0
\t.end_amdhsa_kernel
"""

KERNEL_MD = """\
  - .agpr_count:     0
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .type_name:      'int*'
        .value_kind:     global_buffer
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 8
    .language:       OpenCL C
    .language_version:
      - 1
      - 2
    .max_flat_workgroup_size: 256
    .name:           {k}
    .private_segment_fixed_size: 0
    .sgpr_count:     {sgpr_count}
    .sgpr_spill_count: 0
    .symbol:         {k}.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     2
    .vgpr_spill_count: 0
    .wavefront_size: 64
"""


def sgpr_macro(k):
    """A 64-word macro whose instructions name s0..s(k-1): per 4 words an
    s_add_u32, a v_add_u32 reading an SGPR and an 8-byte s_load_dwordx2."""
    lines = ["\t.macro sgpr_body"]
    for j in range(16):
        a, b, c = (3 * j) % k, (3 * j + 1) % k, (3 * j + 2) % k
        # The highest SGPRs are named in every block so that each scan
        # finds all K.
        if j == 15:
            a = k - 1
        d = ((5 * j) % (k - 1)) & ~1
        if j == 14:
            d = (k - 2) & ~1
        lines.append("\ts_add_u32 s{}, s{}, s{}".format(a, b, c))
        lines.append("\tv_add_u32_e32 v1, s{}, v1".format(b))
        lines.append("\ts_load_dwordx2 s[{}:{}], s[4:5], 0x0".format(d, d + 1))
    lines.append("\t.endm")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--body-words", type=int, default=0)
    ap.add_argument("--debug-bytes", type=int, default=0)
    ap.add_argument("--mcpu", default="gfx90a")
    ap.add_argument("--sgprs", type=int, default=0)
    ap.add_argument("--no-numbered-sgpr", action="store_true")
    a = ap.parse_args()
    if a.sgprs and not 8 <= a.sgprs <= 96:
        ap.error("--sgprs must be in 8..96")

    body = ""
    macro = ""
    if a.body_words and a.sgprs:
        # 64 words naming every SGPR below K, repeated.
        macro = sgpr_macro(a.sgprs)
        reps = (a.body_words + 63) // 64
        body = "\t.rept {}\n\tsgpr_body\n\t.endr\n".format(reps)
    elif a.body_words:
        body = "\t.fill {}, 4, 0x{:08x}\n".format(a.body_words, S_NOP_0)
    nsgpr = a.sgprs or 6
    sgpr_count = a.sgprs + 6 if a.sgprs else 10
    vcc = 1 if a.sgprs else 0
    with open(a.out, "w") as f:
        w = f.write
        w('\t.amdgcn_target "amdgcn-amd-amdhsa--{}"\n'.format(a.mcpu))
        w("\t.amdhsa_code_object_version 5\n")
        w(macro)
        for i in range(a.n):
            k = "bench_kernel_{}".format(i)
            numbered = ("" if a.no_numbered_sgpr else
                        "\t.set {}.numbered_sgpr, {}\n".format(k, nsgpr))
            w(KERNEL.format(k=k, i=i, imm=i & 0x3F, body=body,
                            numbered=numbered, nsgpr=nsgpr, vcc=vcc))
        # The instruction-prefetch guard clang puts after the last function.
        w("\t.text\n\t.p2alignl 6, 3212836864\n\t.fill 256, 4, 3212836864\n")
        if a.debug_bytes:
            w('\t.section\t.debug_info,"",@progbits\n')
            w("\t.fill {}, 1, 0x5a\n".format(a.debug_bytes))
        w("\t.amdgpu_metadata\n---\namdhsa.kernels:\n")
        for i in range(a.n):
            w(KERNEL_MD.format(k="bench_kernel_{}".format(i),
                               sgpr_count=sgpr_count))
        w("amdhsa.target:   amdgcn-amd-amdhsa--{}\n".format(a.mcpu))
        w("amdhsa.version:\n  - 1\n  - 2\n...\n\t.end_amdgpu_metadata\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
