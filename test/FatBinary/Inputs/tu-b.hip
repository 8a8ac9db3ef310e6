// The third translation unit of the multi-TU program.
#include "hip-lite.h"

__global__ void tbA(int *P) { *P = 3; }
__global__ void tbB(int *P, int N) { P[threadIdxX()] = N; }
__global__ void tbC(float *P) { *P = 4.0f; }

extern "C" int tu_b_launch() {
  tbA<<<1, 1>>>(nullptr);
  tbC<<<1, 1>>>(nullptr);
  return 2;
}
