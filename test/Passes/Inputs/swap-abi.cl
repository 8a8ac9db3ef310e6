// Replacements for swap-orig.cl that differ from it only in what the ABI
// lets a hot-fix change (swap-kernels-abi.test), one per -D macro: the
// launch interface of vadd and kern2 stays swap-orig.cl's (but for
// REQD_WG, which changes vadd's).
#if defined(MANY_VGPRS) // vadd needs more than 127 VGPRs: .vgpr_count
                        // takes a wider msgpack integer than its old 1-byte
                        // form
__kernel void vadd(__global float *a, __global const float *b, int n) {
  __local float t[64];
  int l = __builtin_amdgcn_workitem_id_x();
  int i = l + __builtin_amdgcn_workgroup_id_x() * 64;
  t[l & 63] = b[i];
  __builtin_amdgcn_s_barrier();
  __asm__ volatile("; clobbers v150" ::: "v150");
  if (i < n)
    a[i] += t[63 - (l & 63)];
}
#elif defined(MORE_LDS) // vadd uses 8 KiB of LDS instead of 256 bytes
__kernel void vadd(__global float *a, __global const float *b, int n) {
  __local float t[2048];
  int l = __builtin_amdgcn_workitem_id_x();
  int i = l + __builtin_amdgcn_workgroup_id_x() * 64;
  t[(l * 31) & 2047] = b[i];
  __builtin_amdgcn_s_barrier();
  if (i < n)
    a[i] += t[2047 - (l & 2047)];
}
#elif defined(GROWS) // vadd needs more than 127 VGPRs and 80000 bytes of
                     // scratch: .private_segment_fixed_size needs 4 bytes
                     // more than the 1-byte 0, more than the note's padding
__kernel void vadd(__global float *a, __global const float *b, int n) {
  volatile int s[20000];
  int l = __builtin_amdgcn_workitem_id_x();
  int i = l + __builtin_amdgcn_workgroup_id_x() * 64;
  s[l] = i;
  __asm__ volatile("; clobbers v150" ::: "v150");
  if (i < n)
    a[i] += b[s[(l * 7) % 20000]];
}
#elif defined(REQD_WG) // vadd's launch interface changes: a required
                       // work-group size the host must respect (refused)
__attribute__((reqd_work_group_size(64, 1, 1)))
__kernel void vadd(__global float *a, __global const float *b, int n) {
  a[__builtin_amdgcn_workitem_id_x()] += b[n];
}
#else
#error "one of MANY_VGPRS, MORE_LDS, GROWS, REQD_WG"
#endif

__kernel void kern2(__global int *p) { p[__builtin_amdgcn_workitem_id_x()] = 5; }
