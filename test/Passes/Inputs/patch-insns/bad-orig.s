s_nop 0
%orig
