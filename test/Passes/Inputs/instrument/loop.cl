__kernel void loop(__global int *out, int n) {
  int id = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += i * id + (s >> 3);
  if (id & 1)
    s = -s;
  out[id] = s;
}
