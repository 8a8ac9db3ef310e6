// A second translation unit for the multi-TU and -fgpu-rdc builds. With RDC
// defined, kernel taA calls a device function defined in the other TU
// (fat-lib.hip or fat-main.hip): only possible with -fgpu-rdc.
#include "hip-lite.h"

#ifdef RDC
__device__ int twice(int X);
#else
static __device__ int twice(int X) { return 2 * X; }
#endif

__global__ void taA(int *P) { *P = twice(21); }
__global__ void taB(int *P) { *P = 2; }

extern "C" int tu_a_launch() {
  taA<<<1, 1>>>(nullptr);
  taB<<<1, 1>>>(nullptr);
  return 2;
}
