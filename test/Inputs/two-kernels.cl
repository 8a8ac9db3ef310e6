// Two small kernels for tests: built with clang -nogpulib (no OpenCL
// builtins), so work-item ids come from target builtins.
__constant int Bias = 5;

__kernel void vadd(__global float *a, __global const float *b, int n) {
  int i = __builtin_amdgcn_workitem_id_x() + __builtin_amdgcn_workgroup_id_x() * 64;
  if (i < n)
    a[i] += b[i] + Bias;
}

__kernel void kern2(__global int *p) { p[__builtin_amdgcn_workitem_id_x()] = 7; }
