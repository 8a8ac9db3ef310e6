// Kernels for the end-to-end corpus, built at test time with clang -nogpulib
// (no OpenCL builtins: work-item ids come from target builtins).

// A constant table read PC-relatively (s_getpc + s_add/s_addc of a rel32).
__constant float Table[4] = {1.0f, 2.0f, 3.0f, 4.0f};

__kernel void pcrel(__global float *a, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  if (i < n)
    a[i] = Table[i & 3];
}

// A real call and recursion: the kernel gets a stack (scratch, dynamic size).
__attribute__((noinline)) static int helper(__global int *p, int x) {
  return p[x] * 3 + x;
}

// Tree recursion: not turned into a loop, so the stack size is unknown.
__attribute__((noinline)) static int fib(int n) {
  return n <= 1 ? n : fib(n - 1) + fib(n - 2);
}

__kernel void calls(__global int *p, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  p[i] = helper(p, i) + fib(n);
}

// LDS.
__kernel void lds(__global int *p) {
  __local int Tile[256];
  int i = __builtin_amdgcn_workitem_id_x();
  Tile[i] = p[i];
  __builtin_amdgcn_s_barrier();
  p[i] = Tile[255 - i];
}

// Several arguments (kernarg preload candidates).
__kernel void preload(__global float *a, __global const float *b, float s,
                      int n) {
  int i = __builtin_amdgcn_workitem_id_x() +
          __builtin_amdgcn_workgroup_id_x() * 64;
  if (i < n)
    a[i] = b[i] * s;
}

// An overloadable kernel gets an Itanium-mangled name (_Z7mangledPU3AS1i).
__attribute__((overloadable)) __kernel void mangled(__global int *p) {
  *p = 2;
}
