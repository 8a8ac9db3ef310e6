// A kernel without arguments: its launch gives it no kernarg segment
// pointer (patch-insns-entry.test).
__kernel void noargs() {}
