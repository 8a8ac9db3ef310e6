// A small HIP library: three kernels (one a template instance), a device
// variable and a constant, and host entry points the test programs call
// through dlopen: launches through the host stubs (which the fake runtime
// resolves through __hipRegisterFunction) and C++ exceptions thrown and
// caught inside the library, and thrown out of it. With RDC (-fgpu-rdc,
// linked with tu-a.hip) it also defines the device function tu-a.hip calls.
#include "hip-lite.h"

#ifdef RDC
__device__ int twice(int X) { return 2 * X; }
#endif

__device__ int Counter;
__constant__ float Factor = 2.0f;

__global__ void vadd(float *A, const float *B, int N) {
  unsigned I = threadIdxX();
  if (I < (unsigned)N)
    A[I] += B[I] * Factor;
}

__global__ void count(int *Out) { *Out = Counter++; }

template <typename T> __global__ void fill(T *P, T V) { P[threadIdxX()] = V; }

extern "C" int fat_launch() {
  vadd<<<dim3(2), dim3(64)>>>(nullptr, nullptr, 0);
  count<<<1, 1>>>(nullptr);
  fill<int><<<1, 32, 256>>>(nullptr, 7);
  return 3;
}

struct FatError {
  int Code;
};

// Thrown and caught inside the library: the unwinder walks this object's
// .eh_frame (found through PT_GNU_EH_FRAME) and its LSDA.
static __attribute__((noinline)) void throwIt(int N) { throw FatError{N}; }
extern "C" int fat_catch(int N) {
  try {
    throwIt(N);
  } catch (const FatError &E) {
    return E.Code + 1;
  }
  return -1;
}

// Thrown out of the library into the caller.
extern "C" void fat_throw(int N) { throw FatError{N}; }
