; ds_write2st64_b32 vaddr, vdata0, vdata1 offset0:a offset1:b (offsets in
; strides of 64 dwords) becomes two single-address writes and a wait.
ds_write_b32 %op0, %op1 offset:%op3*256
ds_write_b32 %op0, %op2 offset:%op4*256
s_waitcnt lgkmcnt(0)
