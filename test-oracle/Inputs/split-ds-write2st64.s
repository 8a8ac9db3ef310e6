ds_write_b32 %op0, %op1 offset:%op3*256
ds_write_b32 %op0, %op2 offset:%op4*256
s_waitcnt lgkmcnt(0)
