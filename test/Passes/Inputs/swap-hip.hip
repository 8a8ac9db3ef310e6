// A HIP kernel that reads threadIdx, for swap-kernels-hip.test: the same
// source with and without -DMORE_LDS (16 KiB of LDS).
#include "hip-coordinates.h"

__global__ void scale(float *A, int N) {
  unsigned I = threadIdx.x;
#ifdef MORE_LDS
  __shared__ float T[4096];
  T[I] = A[I];
  __builtin_amdgcn_s_barrier();
  A[I] = T[(I + 1) % 4096] * N;
#else
  A[I] *= N;
#endif
}
