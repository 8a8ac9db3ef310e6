// far.cl with a second kernel: the padding before it (kernels start
// 256-byte aligned) is within reach of lds2's sites, room for a gateway.
#include "far.cl"

__kernel void other(__global float *out) {
  out[__builtin_amdgcn_workitem_id_x()] = 1.0f;
}
