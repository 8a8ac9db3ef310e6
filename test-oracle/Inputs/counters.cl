// Kernels whose block counts follow from the program, run on the emulator
// before and after instrument (test-oracle/counters-*.test). Workgroups of
// 64 work-items.

// A loop every wave runs n times (n is the same for every lane).
__kernel void loop(__global float *out, __global const float *in, int n) {
  int g = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  float acc = 0.0f;
  for (int i = 0; i < n; ++i)
    acc = acc * 0.5f + in[(g + i) & 255];
  out[g] = acc;
}

// A branch half the lanes of every wave take (the odd ones).
__kernel void odd(__global float *out, __global const float *in) {
  int g = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  float v = in[g & 255];
  if (g & 1)
    v = v * 3.0f + in[(g + 7) & 255];
  out[g] = v;
}

// A sum of 64 values per workgroup in LDS: six halving steps.
__kernel void reduce(__global float *out, __global const float *in) {
  __local float tile[64];
  int i = __builtin_amdgcn_workitem_id_x();
  int g = __builtin_amdgcn_workgroup_id_x() * 64 + i;
  tile[i] = in[g];
  __builtin_amdgcn_s_barrier();
  for (int s = 32; s > 0; s >>= 1) {
    if (i < s)
      tile[i] += tile[i + s];
    __builtin_amdgcn_s_barrier();
  }
  if (i == 0)
    out[__builtin_amdgcn_workgroup_id_x()] = tile[0];
}
