; Code at the kernel's entry: the kernarg segment pointer and the
; workgroup ID x, kept for every site (reserve-sgpr-pairs=2).
s_mov_b64 %rp0, %kernarg
s_mov_b32 %rp1.0, %wgid.x
