; ds_write2_b32 vaddr, vdata0, vdata1 offset0:a offset1:b (offsets in
; dwords) becomes two single-address writes (offsets in bytes) and a wait.
ds_write_b32 %op0, %op1 offset:%op3*4
ds_write_b32 %op0, %op2 offset:%op4*4
s_waitcnt lgkmcnt(0)
