// A kernel that reads its workgroup IDs y and z (the launch enables them).
__kernel void grid(__global int *out) {
  int x = __builtin_amdgcn_workitem_id_x();
  out[x] = __builtin_amdgcn_workgroup_id_y() * 1000 +
           __builtin_amdgcn_workgroup_id_z();
}
