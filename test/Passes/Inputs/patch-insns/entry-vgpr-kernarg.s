; Code at the kernel's entry: the kernarg segment pointer kept in a VGPR
; pair reserved for the whole kernel (reserve-vgpr-pairs=1), for kernels
; with no SGPR left above their own.
v_mov_b32 %rvp0.0, %kernarg.0
v_mov_b32 %rvp0.1, %kernarg.1
