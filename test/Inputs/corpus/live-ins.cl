// Kernels whose descriptors enable different live-in SGPRs (for
// test/Corpus/scratch-pair-live-ins.test): the kernarg pointer and
// workgroup ID X only; workgroup IDs Y and Z too; the dispatch pointer; a
// private stack (scratch: the private segment wave offset, or flat scratch
// init, depending on the target).
__kernel void plain(__global int *p) {
  p[__builtin_amdgcn_workitem_id_x()] = 1;
}

__kernel void wg_yz(__global int *p) {
  p[__builtin_amdgcn_workitem_id_x()] =
      __builtin_amdgcn_workgroup_id_y() + __builtin_amdgcn_workgroup_id_z();
}

__kernel void dispatch(__global int *p) {
  __constant unsigned short *D =
      (__constant unsigned short *)__builtin_amdgcn_dispatch_ptr();
  p[__builtin_amdgcn_workitem_id_x()] = D[2];
}

__kernel void stack(__global int *p, int i) {
  volatile int Local[64];
  for (int J = 0; J < 64; ++J)
    Local[J] = p[J];
  p[__builtin_amdgcn_workitem_id_x()] = Local[i & 63];
}
