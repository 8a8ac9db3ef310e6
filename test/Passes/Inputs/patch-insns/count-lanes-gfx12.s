; count-lanes.s for gfx12: the split counters.
s_load_b64 %sp0, %rp0, 0x10
v_mov_b32 %v0, 0
v_mov_b32 %v1, 1
s_wait_kmcnt 0
global_atomic_add_u32 %v0, %v1, %sp0
s_wait_storecnt 0
