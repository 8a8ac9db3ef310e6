// Third translation unit of the multi-TU and -fgpu-rdc programs.
#include "hip-lite.h"

#ifdef RDC
__device__ int twice(int X) { return 2 * X; }
#endif

__global__ void tbA(int *P) { *P = 3; }
__global__ void tbB(int *P, int N) { P[threadIdxX()] = N; }
__global__ void tbC(float *P) { *P = 4.0f; }

extern "C" int tu_b_launch() {
  tbA<<<1, 1>>>(nullptr);
  tbC<<<1, 1>>>(nullptr);
  return 2;
}
