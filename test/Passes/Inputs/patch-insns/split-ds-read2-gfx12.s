; The same for gfx12, whose LDS counter is waited for by s_wait_dscnt.
ds_load_b32 %v0, %op1 offset:%op2*4
ds_load_b32 %op0.1, %op1 offset:%op3*4
s_wait_dscnt 0
v_mov_b32 %op0.0, %v0
