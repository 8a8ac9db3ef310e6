// A HIP library of two kernels and a host function that launches them.
// Built without HIP headers: these are the declarations clang's HIP front
// end looks up by name, and the attributes the headers would define.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))

struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned X = 1, unsigned Y = 1, unsigned Z = 1)
      : x(X), y(Y), z(Z) {}
};
typedef struct ihipStream_t *hipStream_t;
extern "C" {
int __hipPushCallConfiguration(dim3 Grid, dim3 Block, unsigned long Shmem = 0,
                               hipStream_t Stream = nullptr);
int __hipPopCallConfiguration(dim3 *Grid, dim3 *Block, unsigned long *Shmem,
                              hipStream_t *Stream);
int hipLaunchKernel(const void *Func, dim3 Grid, dim3 Block, void **Args,
                    unsigned long Shmem, hipStream_t Stream);
}

__device__ unsigned threadIndex() { return __builtin_amdgcn_workitem_id_x(); }

__global__ void vscale(float *X, float A, int N) {
  unsigned I = threadIndex();
  if (I < (unsigned)N)
    X[I] *= A;
}

__global__ void vfill(int *X, int V) { X[threadIndex()] = V; }

extern "C" int vscale_launch(float *X, float A, int N) {
  vscale<<<dim3(1), dim3(64)>>>(X, A, N);
  vfill<<<1, 32>>>(nullptr, 7);
  return 2;
}
