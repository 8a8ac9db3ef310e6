// The second translation unit of the -fgpu-rdc corpus (see rdc-a.hip).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))

__device__ float scale(float x, int i) { return x * 3.0f + float(i); }

__global__ void triple(float *p) {
  int i = __builtin_amdgcn_workitem_id_x();
  p[i] = scale(p[i], 0);
}

__global__ void minus(float *p) { p[__builtin_amdgcn_workitem_id_x()] -= 4.0f; }
