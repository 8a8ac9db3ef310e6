// HIP device code for the relocatable-device-code corpus (-fgpu-rdc), built
// at test time without HIP headers (-nogpuinc): kernels are declared with
// the attribute behind __global__, work-item ids come from target builtins.
// rdc-b.hip calls scale() across the translation units.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))

__device__ float scale(float x, int i);

__global__ void fill(int *p) { p[__builtin_amdgcn_workitem_id_x()] = 1; }

__global__ void bump(int *p, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  if (i < n)
    p[i] += 2;
}

__global__ void scaled(float *p) {
  int i = __builtin_amdgcn_workitem_id_x();
  p[i] = scale(p[i], i);
}
