// Adjacent LDS reads the compiler merges into ds_read2_b32 (gfx9) /
// ds_load_2addr_b32 (gfx11+), and a write pair (ds_write2st64_b32).
__kernel void lds2(__global float *out, __global const float *in) {
  __local float tile[130];
  int i = __builtin_amdgcn_workitem_id_x();
  int g = __builtin_amdgcn_workgroup_id_x() * 64 + i;
  tile[i] = in[g];
  tile[i + 64] = in[g + 64];
  __builtin_amdgcn_s_barrier();
  out[g] = tile[i] + tile[i + 1];
}
