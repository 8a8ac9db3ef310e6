; count-lanes.s with the pointer from entry-vgpr-kernarg.s: back into a
; scratch SGPR pair first.
v_readfirstlane_b32 %sp1.0, %rvp0.0
v_readfirstlane_b32 %sp1.1, %rvp0.1
s_load_dwordx2 %sp0, %sp1, 0x10
v_mov_b32 %v0, 0
v_mov_b32 %v1, 1
s_waitcnt lgkmcnt(0)
global_atomic_add %v0, %v1, %sp0
s_waitcnt vmcnt(0)
