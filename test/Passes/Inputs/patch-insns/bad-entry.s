s_mov_b64 %rp0, %kernarg
s_bogus %rp0
