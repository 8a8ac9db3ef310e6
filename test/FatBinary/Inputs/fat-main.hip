// A HIP program: two kernels of its own, launched from main, and the kernels
// of more translation units: tu-a.hip and tu-b.hip when built with MULTI_TU,
// tu-a.hip alone with RDC (-fgpu-rdc; this TU then defines the device
// function tu-a.hip calls). main also throws and catches a C++ exception,
// so the executable's own unwind tables are used.
#include "hip-lite.h"

extern "C" int printf(const char *, ...);

__global__ void mainKernel(int *P) { P[threadIdxX()] = 1; }
__global__ void mainKernel2(float *P, float V) { P[threadIdxX()] = V; }

#if defined(MULTI_TU) || defined(RDC)
extern "C" int tu_a_launch();
#endif
#ifdef MULTI_TU
extern "C" int tu_b_launch();
#endif
#ifdef RDC
__device__ int twice(int X) { return 2 * X; }
#endif

struct MainError {
  int Code;
};

static __attribute__((noinline)) void throwIt(int N) { throw MainError{N}; }

int main() {
  int Launched = 0;
  mainKernel<<<dim3(4), dim3(64)>>>(nullptr);
  mainKernel2<<<1, 1>>>(nullptr, 1.5f);
  Launched += 2;
#if defined(MULTI_TU) || defined(RDC)
  Launched += tu_a_launch();
#endif
#ifdef MULTI_TU
  Launched += tu_b_launch();
#endif
  int Caught = 0;
  try {
    throwIt(41);
  } catch (const MainError &E) {
    Caught = E.Code + 1;
  }
  printf("main: launched %d, caught %d\n", Launched, Caught);
  return Caught == 42 ? 0 : 1;
}
