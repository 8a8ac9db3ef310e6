%else
s_nop 0
