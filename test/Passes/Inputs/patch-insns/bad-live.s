s_nop 0
v_mov_b32 v2, 0        // v2 holds the output address here
