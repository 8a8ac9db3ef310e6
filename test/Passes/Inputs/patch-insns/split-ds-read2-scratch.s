; ds_read2_b32 vdst[2], vaddr offset0:a offset1:b (offsets in dwords)
; becomes two single-address reads (offsets in bytes) and a wait.
; The first result goes through a scratch VGPR: the address may be the
; destination's first register (gfx9 and gfx10: ds_read2_b32; gfx11:
; ds_load_2addr_b32, whose single form LLVM also accepts as ds_read_b32).
ds_read_b32 %v0, %op1 offset:%op2*4
ds_read_b32 %op0.1, %op1 offset:%op3*4
s_waitcnt lgkmcnt(0)
v_mov_b32 %op0.0, %v0
