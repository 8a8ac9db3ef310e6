; trace[workgroup ID x] += 1 for every lane that runs the site.
s_load_dwordx2 %sp0, %rp0, 0x10
s_lshl_b32 %s0, %rp1.0, 2
v_mov_b32 %v0, %s0
v_mov_b32 %v1, 1
s_waitcnt lgkmcnt(0)
global_atomic_add %v0, %v1, %sp0
s_waitcnt vmcnt(0)
