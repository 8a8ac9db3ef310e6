// A kernel with a program-scope variable of its own: after instrument,
// `seen` precedes __hotswap_counters among the global objects of .symtab
// (and so among the executable's variables).
__attribute__((visibility("default"))) global int seen = 7;

__kernel void loop(__global int *p, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += p[i];
  if (s > 10)
    p[0] = s + seen;
}
