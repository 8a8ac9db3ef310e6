// The code object a swap starts from (swap-kernels tests), built with
// clang -nogpulib (no OpenCL builtins: work-item ids come from target
// builtins). vadd uses 256 bytes of LDS, so its .group_segment_fixed_size
// is a 2-byte msgpack integer that a larger value can replace in place.
__kernel void vadd(__global float *a, __global const float *b, int n) {
  __local float t[64];
  int l = __builtin_amdgcn_workitem_id_x();
  int i = l + __builtin_amdgcn_workgroup_id_x() * 64;
  t[l & 63] = b[i];
  __builtin_amdgcn_s_barrier();
  if (i < n)
    a[i] += t[63 - (l & 63)];
}

__kernel void kern2(__global int *p) { p[__builtin_amdgcn_workitem_id_x()] = 7; }

// Not in the replacement: never swapped.
__kernel void keep(__global int *p) { *p = 1; }
