ds_read_b32 %v0, %op1  // never waited for
