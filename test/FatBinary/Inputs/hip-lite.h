//===- hip-lite.h - The little of HIP the FatBinary sources need ----------===//
//
// The corpus is built with clang-22 alone (-nogpulib -nogpuinc -no-hip-rt):
// no HIP SDK headers. This prelude gives clang what its HIP front end looks
// up by name (__hipPushCallConfiguration for <<<...>>>, hipLaunchKernel and
// __hipPopCallConfiguration for the host-side launch stubs) and the
// attributes the HIP headers would define. The host side is resolved at run
// time by the fake runtime (fake-hip.c).
//
//===----------------------------------------------------------------------===//

#ifndef HIP_LITE_H
#define HIP_LITE_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))

typedef unsigned long hip_size_t;

struct dim3 {
  unsigned x, y, z;
  __host__ __device__ dim3(unsigned X = 1, unsigned Y = 1, unsigned Z = 1)
      : x(X), y(Y), z(Z) {}
};

extern "C" {
int __hipPushCallConfiguration(dim3 Grid, dim3 Block, hip_size_t Shmem = 0,
                               void *Stream = nullptr);
int __hipPopCallConfiguration(dim3 *Grid, dim3 *Block, hip_size_t *Shmem,
                              void **Stream);
int hipLaunchKernel(const void *Function, dim3 Grid, dim3 Block, void **Args,
                    hip_size_t Shmem, void *Stream);
}

// The work-item id, from the AMDGPU builtins (device side only).
__device__ inline unsigned threadIdxX() {
  return __builtin_amdgcn_workitem_id_x();
}

#endif // HIP_LITE_H
