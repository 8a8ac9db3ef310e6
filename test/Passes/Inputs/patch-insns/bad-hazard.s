# Writes s5 with an SALU and reads it with a VALU right after: gfx12 needs
# s_wait_alu depctr_sa_sdst(0) between (the pair s[4:5] is tracked there).
s_mov_b32 s5, 5
v_mov_b32 %v0, s5
