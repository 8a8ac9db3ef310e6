; ds_read2_b32 vdst[2], vaddr offset0:a offset1:b (offsets in dwords)
; becomes two single-address reads (offsets in bytes) and a wait, with no
; scratch register: the first read must not write the address the second
; one reads. The pass takes the first alternative that passes its checks
; at each site (an instruction that reads a register a load of the body
; still writes fails them).
ds_read_b32 %op0.0, %op1 offset:%op2*4
ds_read_b32 %op0.1, %op1 offset:%op3*4
s_waitcnt lgkmcnt(0)
%else
; The address is the destination's first register: read the second first.
ds_read_b32 %op0.1, %op1 offset:%op3*4
ds_read_b32 %op0.0, %op1 offset:%op2*4
s_waitcnt lgkmcnt(0)
