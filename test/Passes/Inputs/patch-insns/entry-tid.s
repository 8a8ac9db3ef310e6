; Code at the kernel's entry: the kernarg segment pointer, and the
; work-item ID (v0 at launch) in a VGPR reserved for the whole kernel
; (reserve-sgpr-pairs=1, reserve-vgpr-pairs=1).
s_mov_b64 %rp0, %kernarg
v_mov_b32 %rvp0.0, %tid
