// lds2.cl with 256 KiB of zeroed data after the code: the run's
// appended code starts past it, out of a branch's reach (128 KiB).
__global int far_table[65536];

__kernel void lds2(__global float *out, __global const float *in) {
  __local float tile[130];
  int i = __builtin_amdgcn_workitem_id_x();
  int g = __builtin_amdgcn_workgroup_id_x() * 64 + i;
  tile[i] = in[g];
  tile[i + 64] = in[g + 64];
  __builtin_amdgcn_s_barrier();
  out[g] = tile[i] + tile[i + 1] + far_table[g & 65535];
}
