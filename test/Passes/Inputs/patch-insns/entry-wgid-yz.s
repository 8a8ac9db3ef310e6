; Code at the kernel's entry: the workgroup IDs y and z, kept in a reserved
; pair (on gfx12 both are halves of ttmp7: extracted first).
s_mov_b32 %rp0.0, %wgid.y
s_mov_b32 %rp0.1, %wgid.z
