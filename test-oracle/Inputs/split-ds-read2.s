; ds_read2_b32 vdst[2], vaddr offset0:a offset1:b (offsets in dwords)
; becomes two single-address reads (offsets in bytes) and a wait.
ds_read_b32 %v0, %op1 offset:%op2*4
ds_read_b32 %op0.1, %op1 offset:%op3*4
s_waitcnt lgkmcnt(0)
v_mov_b32 %op0.0, %v0
