# A user hook: load through the SGPR pair the next load uses (s[6:7]), into
# a free VGPR, and wait for it.
global_load_dword %v0, %v1, s[6:7]
s_waitcnt vmcnt(0)
