// bump begins with s_getpc_b64 and s_add_u32 (the address of Counter),
// as a long-form stub does; plain begins with a kernarg load.
global int Counter;
kernel void bump(void) { Counter = Counter + 1; }
kernel void plain(global int *o) { o[0] = 1; }
