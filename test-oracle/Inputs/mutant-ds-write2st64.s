; A wrong split of ds_write2st64_b32 for test-oracle: the second store lands
; one dword late, so one LDS slot the kernel reads is never written.
ds_write_b32 %op0, %op1 offset:%op3*256
ds_write_b32 %op0, %op2 offset:%op4*256+4
s_waitcnt lgkmcnt(0)
