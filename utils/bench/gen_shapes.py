#!/usr/bin/env python3
"""Writes AMDGPU assembly for a code object with the shape of a real library.

gen.py's objects are fast to rewrite because they are small where real ones
are big: rocBLAS's Tensile objects carry ~130 local symbols per kernel (a
1.8M-entry .symtab for 14 075 kernels) and a ~3.5 KB metadata map per kernel
(a 50 MB NT_AMDGPU_METADATA note), beside ~250 MB of code. The shapes:

  tensile   14 075 * SCALE kernels of ~18 KiB code, 128 local labels each
            (label_NNNN_kI: ~17-byte names), Tensile-long kernel names and
            a 36-argument metadata map (~3.5 KB of MessagePack) per kernel
  small     100 000 * SCALE kernels of < 1 KiB, 8 local labels and an
            8-argument map (~1 KB) each: the many-small-kernels shape

Kernel I has the same name at every scale, so a smaller object of the same
shape is a valid `swap-kernels<with=...>` FILE for a larger one.

The note is written as bytes (MessagePack encoded here, `.incbin`): the
YAML `.amdgpu_metadata` block of a 50 MB map takes llvm-mc minutes and
gigabytes. Descriptors (`.amdhsa_kernel`) and code come from llvm-mc, the
layout from ld.lld -shared, as gen.py's.

Usage: gen_shapes.py SHAPE OUT.s [--scale S] [--kernels N] [--mcpu gfx90a]
                     [--words W] [--labels L] [--debug-bytes B] [--comment T]
  --scale S     multiply the shape's kernel count (default 1; e.g. 0.0625)
  --kernels N   exactly N kernels (overrides --scale)
  --mcpu ID     the target ID (gfx90a, gfx90a:xnack+, gfx803, gfx1030...):
                llvm-mc's -mcpu is the processor, -mattr=+xnack or -xnack
                its feature (target_mcpu); the assembly fits gfx8 to gfx10
  --words W     code words per kernel (overrides the shape's)
  --labels L    local labels per kernel (overrides the shape's; 0: none)
  --debug-bytes B  a non-loaded .debug_info-like section of B bytes
  --comment T   a .comment section holding the string T (as clang's
                compiler identification)
Writes OUT.s and OUT.s.note (the note's descriptor, included by OUT.s).
The host shape (gen_host.py) builds its code objects with these options.
"""

import argparse
import os
import struct
import sys

S_NOP_0 = 0xBF800000

SHAPES = {
    # kernels, code words per kernel, labels per kernel, arguments
    "tensile": (14075, 4608, 128, 36),
    "small": (100000, 160, 8, 8),
}


def target_mcpu(target_id):
    """llvm-mc's options for a target ID: ["-mcpu=P"] and, for a
    ":xnack+" or ":xnack-" feature, "-mattr=+xnack" or "-mattr=-xnack"."""
    proc, _, feat = target_id.partition(":")
    argv = ["-mcpu=" + proc]
    if feat:
        argv.append("-mattr=" + feat[-1] + feat[:-1])
    return argv


def kernel_name(shape, i):
    if shape == "small":
        return "small_kernel_{}".format(i)
    # Tensile names run to ~150-250 characters.
    return ("Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0_APM1_ABV0_"
            "ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASAE01_ASCE01_ASEM1_"
            "AAC0_BL1_BS1_DTL0_DTVA0_DVO0_ETSP_EPS1_FL0_GRVW4_GSU1_GSUASB_"
            "GLS0_ISA90a_IU1_K1_KLA_LBSPP128_LPA0_LPB0_LDL1_LRVW4_K{:05d}"
            .format(i))


# --- a minimal MessagePack encoder (maps with string keys, arrays, ints,
# strings, booleans: what code object metadata holds) ---

def mp(v, out):
    if isinstance(v, bool):
        out.append(0xC3 if v else 0xC2)
    elif isinstance(v, int):
        if 0 <= v < 128:
            out.append(v)
        elif 0 <= v < 1 << 16:
            out += b"\xcd" + struct.pack(">H", v)
        else:
            out += b"\xce" + struct.pack(">I", v)
    elif isinstance(v, str):
        b = v.encode()
        if len(b) < 32:
            out.append(0xA0 | len(b))
        elif len(b) < 256:
            out += b"\xd9" + bytes([len(b)])
        else:
            out += b"\xda" + struct.pack(">H", len(b))
        out += b
    elif isinstance(v, list):
        if len(v) < 16:
            out.append(0x90 | len(v))
        else:
            out += b"\xdc" + struct.pack(">H", len(v))
        for x in v:
            mp(x, out)
    elif isinstance(v, dict):
        if len(v) < 16:
            out.append(0x80 | len(v))
        else:
            out += b"\xde" + struct.pack(">H", len(v))
        for k, x in v.items():  # keys sorted by the caller
            mp(k, out)
            mp(x, out)
    else:
        raise TypeError(type(v))


def args_of(nargs):
    """Tensile's argument list: a few pointers, then 4-byte scalars."""
    args = []
    off = 0
    for j in range(nargs):
        if j < 4:
            a = {".actual_access": "read_only" if j else "write_only",
                 ".address_space": "global", ".name": "ptr{}".format(j),
                 ".offset": off, ".size": 8, ".value_kind": "global_buffer"}
            off += 8
        else:
            a = {".name": "sizeArg{}".format(j), ".offset": off, ".size": 4,
                 ".value_kind": "by_value", ".value_type": "u32"}
            off += 4
        args.append(dict(sorted(a.items())))
    return args, (off + 7) & ~7


def kernel_md(name, args, kernarg_size, sgpr_count, wave=64):
    md = {
        ".agpr_count": 0, ".args": args,
        ".group_segment_fixed_size": 28672, ".kernarg_segment_align": 8,
        ".kernarg_segment_size": kernarg_size, ".language": "OpenCL C",
        ".language_version": [2, 0], ".max_flat_workgroup_size": 256,
        ".name": name, ".private_segment_fixed_size": 0,
        ".sgpr_count": sgpr_count, ".sgpr_spill_count": 0,
        ".symbol": name + ".kd", ".uniform_work_group_size": 1,
        ".uses_dynamic_stack": False, ".vgpr_count": 128,
        ".vgpr_spill_count": 0, ".wavefront_size": wave,
    }
    return dict(sorted(md.items()))


KERNEL_HEAD = """\
\t.text
\t.globl\t{k}
\t.p2align\t8
\t.type\t{k},@function
{k}:
\ts_load_dwordx2 s[0:1], s[4:5], 0x0
\tv_lshlrev_b32_e32 v0, 2, v0
\tv_mov_b32_e32 v1, {imm}
\ts_waitcnt lgkmcnt(0)
"""

KERNEL_TAIL = """\
{store}\ts_endpgm
.Lfunc_end{i}:
\t.size\t{k}, .Lfunc_end{i}-{k}
\t.section\t.rodata,"a",@progbits
\t.p2align\t6, 0x0
\t.amdhsa_kernel {k}
\t\t.amdhsa_group_segment_fixed_size 28672
\t\t.amdhsa_kernarg_size {kernarg}
\t\t.amdhsa_user_sgpr_count 6
\t\t.amdhsa_user_sgpr_private_segment_buffer 1
\t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1
\t\t.amdhsa_system_sgpr_workgroup_id_x 1
\t\t.amdhsa_next_free_vgpr 128
\t\t.amdhsa_next_free_sgpr {nsgpr}
{accum}\t\t.amdhsa_reserve_vcc 1
\t\t.amdhsa_reserve_flat_scratch 0
\t.end_amdhsa_kernel
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("out")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--kernels", type=int, default=0)
    ap.add_argument("--mcpu", default="gfx90a")
    ap.add_argument("--words", type=int, default=0)
    ap.add_argument("--labels", type=int, default=-1)
    ap.add_argument("--debug-bytes", type=int, default=0)
    ap.add_argument("--comment", default="")
    a = ap.parse_args()
    full, words, labels, nargs = SHAPES[a.shape]
    words = a.words or words
    labels = labels if a.labels < 0 else a.labels
    n = a.kernels or max(1, int(round(full * a.scale)))
    nsgpr = 80
    args, kernarg = args_of(nargs)
    # Code between labels: the kernel's words spread over its labels.
    chunk = max(1, words // max(1, labels))
    # What differs between targets: gfx8 has no global_* instructions,
    # only gfx90a and later have AGPRs split off at accum_offset, gfx10 and
    # later run wave32 (the descriptor's default there).
    proc = a.mcpu.split(":")[0]
    gen = int(proc[3:-2])
    store = ("\tflat_store_dword v[0:1], v1\n" if gen < 9 else
             "\tglobal_store_dword v0, v1, s[0:1]\n")
    accum = ("\t\t.amdhsa_accum_offset 128\n"
             if proc == "gfx90a" or proc.startswith("gfx94") or
             proc.startswith("gfx95") else "")
    wave = 32 if gen >= 10 else 64

    md_kernels = []
    note = os.path.abspath(a.out + ".note")
    with open(a.out, "w") as f:
        w = f.write
        w('\t.amdgcn_target "amdgcn-amd-amdhsa--{}"\n'.format(a.mcpu))
        w("\t.amdhsa_code_object_version 5\n")
        for i in range(n):
            k = kernel_name(a.shape, i)
            w(KERNEL_HEAD.format(k=k, imm=i & 0x3F))
            body = []
            for j in range(labels):
                body.append("label_{:04d}_k{}:\n\t.fill {}, 4, 0x{:08x}\n"
                            .format(j, i, chunk, S_NOP_0))
            if not labels:
                body.append("\t.fill {}, 4, 0x{:08x}\n".format(words,
                                                               S_NOP_0))
            w("".join(body))
            w(KERNEL_TAIL.format(k=k, i=i, kernarg=kernarg, nsgpr=nsgpr,
                                 store=store, accum=accum))
            md_kernels.append(kernel_md(k, args, kernarg, nsgpr + 6, wave))
        w("\t.text\n\t.p2alignl 6, 3212836864\n\t.fill 256, 4, 3212836864\n")
        if a.debug_bytes:
            w('\t.section\t.debug_info,"",@progbits\n')
            w("\t.fill {}, 1, 0x5a\n".format(a.debug_bytes))
        if a.comment:
            w('\t.section\t.comment,"MS",@progbits,1\n')
            w('\t.asciz\t"{}"\n'.format(a.comment))
        top = {"amdhsa.kernels": md_kernels,
               "amdhsa.target": "amdgcn-amd-amdhsa--" + a.mcpu,
               "amdhsa.version": [1, 2]}
        desc = bytearray()
        # amdhsa.kernels may exceed a map16/array16: use the 32-bit forms.
        desc.append(0x83)
        mp("amdhsa.kernels", desc)
        desc += b"\xdd" + struct.pack(">I", len(md_kernels))
        for km in md_kernels:
            mp(km, desc)
        mp("amdhsa.target", desc)
        mp(top["amdhsa.target"], desc)
        mp("amdhsa.version", desc)
        mp(top["amdhsa.version"], desc)
        with open(note, "wb") as nf:
            nf.write(desc)
        # NT_AMDGPU_METADATA (32), name "AMDGPU", as .amdgpu_metadata emits.
        w('\t.section\t.note,"a",@note\n\t.p2align\t2\n')
        w("\t.long\t7, {}, 32\n\t.asciz\t\"AMDGPU\"\n\t.p2align\t2\n"
          .format(len(desc)))
        w('\t.incbin\t"{}"\n\t.p2align\t2\n'.format(note))
    return 0


if __name__ == "__main__":
    sys.exit(main())
