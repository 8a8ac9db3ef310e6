# A user hook: copy s4 into a free VGPR.
v_mov_b32 %v0, s4
