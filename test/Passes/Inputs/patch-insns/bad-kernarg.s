; %kernarg outside the entry's code: an error.
s_mov_b64 %sp0, %kernarg
