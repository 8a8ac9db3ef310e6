s_nop 0
v_bogus v0
