// The replacement for swap-orig.cl (swap-kernels tests): the same kernel
// signatures, other bodies and more resources. vadd now uses 1024 bytes of
// LDS, a volatile private array (scratch: fewer than 128 bytes, so that
// .private_segment_fixed_size still fits the 1-byte msgpack integer 0
// takes), more VGPRs (24 loads in flight) and a constant table of its own,
// read PC-relatively.
__constant float Scale[4] = {2.0f, 3.0f, 4.0f, 5.0f};

__kernel void vadd(__global float *a, __global const float *b, int n) {
  __local float t[256];
  volatile float s[16];
  float v[24];
  int l = __builtin_amdgcn_workitem_id_x();
  int i = l + __builtin_amdgcn_workgroup_id_x() * 64;
  for (int k = 0; k < 24; ++k)
    v[k] = b[(i * 24 + k) & 4095];
  float r = 0.0f;
  for (int k = 0; k < 24; ++k)
    r += v[k] * v[23 - k];
  for (int k = 0; k < 16; ++k)
    s[k] = r * (float)(k + 1);
  t[l & 255] = b[i];
  __builtin_amdgcn_s_barrier();
  if (i < n)
    a[i] += t[255 - (l & 255)] * Scale[i & 3] + s[(i * 7) & 15];
}

__kernel void kern2(__global int *p) { p[__builtin_amdgcn_workitem_id_x()] = 9; }
