; trace[work-item ID x] += 1 for every lane that runs the site (x: bits
; 0-9 of the launch's v0, which packs y and z above it on some targets).
s_load_dwordx2 %sp0, %rp0, 0x10
v_and_b32 %v0, 0x3ff, %rvp0.0
v_lshlrev_b32 %v0, 2, %v0
v_mov_b32 %v1, 1
s_waitcnt lgkmcnt(0)
global_atomic_add %v0, %v1, %sp0
s_waitcnt vmcnt(0)
