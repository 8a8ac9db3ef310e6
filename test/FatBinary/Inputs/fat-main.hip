// A HIP program: two kernels of its own, launched from main, and (when built
// with tu-a.hip and tu-b.hip, MULTI_TU) the kernels of two more translation
// units. main also throws and catches a C++ exception, so the executable's
// own unwind tables are used.
#include "hip-lite.h"

extern "C" int printf(const char *, ...);

__global__ void mainKernel(int *P) { P[threadIdxX()] = 1; }
__global__ void mainKernel2(float *P, float V) { P[threadIdxX()] = V; }

#ifdef MULTI_TU
extern "C" int tu_a_launch();
extern "C" int tu_b_launch();
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
#ifdef MULTI_TU
  Launched += tu_a_launch();
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
