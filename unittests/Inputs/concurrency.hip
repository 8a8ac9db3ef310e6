// Kernels of the code objects in this directory (concurrency-*.yaml), for
// unittests/ConcurrencyTest.cpp. Built by gen-concurrency-inputs.sh with
// clang -x hip --offload-device-only, without the HIP headers.
//
// The wideN kernels read N uniform float4s through SGPRs, so each one names
// a different number of SGPRs (which once decided their stubs' scratch
// pairs, through a scan of their code; now only their descriptors do).
// STEPS sets how far their loop is unrolled (the code size).

#define KERNEL extern "C" __attribute__((global))
#define DEVICE __attribute__((device))

#ifndef STEPS
#define STEPS 8
#endif

typedef float float4 __attribute__((ext_vector_type(4)));

static DEVICE int tid() { return __builtin_amdgcn_workitem_id_x(); }

#define WIDE(N)                                                                \
  KERNEL void wide##N(float *Y, const float *X, const float4 *C) {             \
    int I = tid();                                                             \
    float Acc = 0;                                                             \
    _Pragma("unroll") for (int J = 0; J < STEPS; ++J) {                        \
      float4 K = C[J % N];                                                     \
      Acc += X[I + J * 64] * K.x + K.y * Acc + K.z - K.w;                      \
    }                                                                          \
    Y[I] = Acc;                                                                \
  }

WIDE(1)
WIDE(2)
WIDE(3)
WIDE(4)
WIDE(5)
WIDE(6)
WIDE(7)
WIDE(8)

// A real call.
DEVICE __attribute__((noinline)) float helper(const float *P, int I) {
  return P[I] * 3.0f + P[I + 1];
}
KERNEL void calls(float *Y, const float *X) { Y[tid()] = helper(X, tid()); }

// LDS and a barrier.
KERNEL void lds(int *P) {
  __attribute__((shared)) int Tile[256];
  int I = tid();
  Tile[I] = P[I];
  __builtin_amdgcn_s_barrier();
  P[I] = Tile[255 - I];
}
