; A wrong split of ds_read2_b32 for test-oracle: the second read is one
; dword too far (offset1 + 1), so the kernel adds the wrong neighbour.
ds_read_b32 %v0, %op1 offset:%op2*4
ds_read_b32 %op0.1, %op1 offset:%op3*4+4
s_waitcnt lgkmcnt(0)
v_mov_b32 %op0.0, %v0
