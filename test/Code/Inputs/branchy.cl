// Kernels with the control flow a compiler makes: ifs, if/else, loops with
// divergent exits, a switch, a call to a device function, cross-lane work.
__attribute__((noinline)) float helper(float x, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i)
    s += x * (float)i;
  return s;
}

__kernel void branches(__global float *out, __global const int *in, int n) {
  int i = (__builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x());
  float v = 0.0f;
  if (i < n) {
    if (in[i] > 3)
      v = (float)in[i] * 2.0f;
    else
      v = (float)in[i] - 1.0f;
  }
  for (int k = 0; k < in[i & 7]; ++k) {
    if (v > 100.0f)
      break;
    v += (float)k;
  }
  switch (in[i & 3]) {
  case 0: v += 1.0f; break;
  case 1: v *= 3.0f; break;
  case 5: v -= 2.0f; break;
  default: v = -v;
  }
  out[i] = v;
}

__kernel void calls(__global float *out, int n) {
  int i = (__builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x());
  out[i] = helper((float)i, n + (i & 3));
}

__kernel void reduce(__global int *out, __local int *tmp) {
  int l = __builtin_amdgcn_workitem_id_x();
  tmp[l] = l * 3;
  __builtin_amdgcn_s_barrier();
  for (int s = 128; s > 0; s >>= 1) {
    if (l < s)
      tmp[l] += tmp[l + s];
    __builtin_amdgcn_s_barrier();
  }
  if (l == 0)
    out[__builtin_amdgcn_workgroup_id_x()] = tmp[0];
}
