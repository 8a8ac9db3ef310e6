; trace[0] += 1 for every lane that runs the site; trace is the kernel's
; third argument, at byte 16 of the kernarg segment %rp0 points at.
s_load_dwordx2 %sp0, %rp0, 0x10
v_mov_b32 %v0, 0
v_mov_b32 %v1, 1
s_waitcnt lgkmcnt(0)
global_atomic_add %v0, %v1, %sp0
s_waitcnt vmcnt(0)
