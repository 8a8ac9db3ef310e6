; count-items.s for gfx11.
s_load_b64 %sp0, %rp0, 0x10
v_and_b32 %v0, 0x3ff, %rvp0.0
v_lshlrev_b32 %v0, 2, %v0
v_mov_b32 %v1, 1
s_waitcnt lgkmcnt(0)
global_atomic_add_u32 %v0, %v1, %sp0
s_waitcnt_vscnt null, 0
