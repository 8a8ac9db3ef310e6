// far.cl with a second kernel: the padding before it (kernels start
// 256-byte aligned) is within reach of lds2's sites, room for a gateway.
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

__kernel void other(__global float *out) {
  out[__builtin_amdgcn_workitem_id_x()] = 1.0f;
}
