; count-groups.s for gfx12: a VALU reads the SGPR an SALU just wrote,
; after s_wait_alu (the hazard is the body's own).
s_load_b64 %sp0, %rp0, 0x10
s_lshl_b32 %s0, %rp1.0, 2
s_wait_alu depctr_sa_sdst(0)
v_mov_b32 %v0, %s0
v_mov_b32 %v1, 1
s_wait_kmcnt 0
global_atomic_add_u32 %v0, %v1, %sp0
s_wait_storecnt 0
