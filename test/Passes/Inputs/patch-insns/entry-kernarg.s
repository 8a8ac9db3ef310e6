; Code at the kernel's entry: the launch's kernarg segment pointer, kept
; in a pair reserved for the whole kernel (reserve-sgpr-pairs=1).
s_mov_b64 %rp0, %kernarg
