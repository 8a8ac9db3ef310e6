// A kernel whose LDS read follows a call: what the callee leaves in flight
// is unknown there.
__attribute__((noinline)) float helper(__global float *p, int i) { return p[i] * 3.0f; }
__kernel void callee_then_lds(__global float *out, __global float *in) {
  __local float tile[130];
  int i = __builtin_amdgcn_workitem_id_x();
  tile[i] = in[i];
  tile[i + 64] = in[i + 64];
  __builtin_amdgcn_s_barrier();
  float h = helper(in, i);
  out[i] = tile[i] + tile[i + 1] + h;
}
