// Replacements that swap-kernels must refuse for swap-orig.cl, one per
// -D macro (swap-kernels-refusals.test). Each differs from swap-orig.cl's
// vadd or kern2 in one thing the host or the loader relies on.
#if defined(ARG_SIZE) // the last argument is 8 bytes instead of 4
__kernel void vadd(__global float *a, __global const float *b, long n) {
  a[__builtin_amdgcn_workitem_id_x()] += n;
}
#elif defined(ARG_COUNT) // one argument more
__kernel void vadd(__global float *a, __global const float *b, int n, int m) {
  a[__builtin_amdgcn_workitem_id_x()] += n + m;
}
#elif defined(VALUE_KIND) // a pointer passed as an integer of its size
__kernel void vadd(ulong a, __global const float *b, int n) {
  ((__global float *)a)[__builtin_amdgcn_workitem_id_x()] += b[n];
}
#elif defined(REQD_WG) // a required work-group size the host must respect
__attribute__((reqd_work_group_size(64, 1, 1)))
__kernel void vadd(__global float *a, __global const float *b, int n) {
  a[__builtin_amdgcn_workitem_id_x()] += b[n];
}
#elif defined(DYN_RELOC) // data holding an address: a dynamic relocation
__global int G;
__global int *P = &G;
__kernel void vadd(__global float *a, __global const float *b, int n) {
  a[__builtin_amdgcn_workitem_id_x()] += *P;
}
#elif defined(OTHER_NAMES) // no kernel of swap-orig.cl
__kernel void other(__global int *p) { *p = 3; }
#endif
