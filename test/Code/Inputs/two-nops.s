; two s_nop: code inserted between a long branch and its target
s_nop 0
s_nop 0
