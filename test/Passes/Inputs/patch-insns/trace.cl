// A kernel that never reads its third argument. patch-insns-entry.test
// keeps the launch's kernarg segment pointer for its sites, which count
// the lanes that store into trace[0].
__kernel void scale(__global float *out, __global const float *in,
                    __global unsigned *trace) {
  int g = __builtin_amdgcn_workgroup_id_x() * 64 +
          __builtin_amdgcn_workitem_id_x();
  if (g % 3 == 0)
    out[g] = in[g] * 3.0f;
}
