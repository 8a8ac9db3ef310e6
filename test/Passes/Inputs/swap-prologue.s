// The prologue of the stubs swap-kernels-trampolined.test swaps through:
// two instructions that are easy to spot in a disassembly and change no
// register (s_nop 0 and s_nop 1: BF800000 and BF800001).
s_nop 0
s_nop 1
