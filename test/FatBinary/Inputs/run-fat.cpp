//===- run-fat.cpp - Load a fat HIP library and use it
//---------------------===//
//
//   run-fat LIB [LIB2...]
//
// For each LIB: dlopen (RTLD_NOW: every relocation is processed now, and the
// library's constructors register its fat binaries), then, when LIB defines
// them, call fat_launch (kernel launches through the host stubs),
// fat_catch (an exception thrown and caught inside LIB) and fat_throw (an
// exception thrown by LIB and caught here), then dlclose (destructors
// unregister). Prints one line per step; exits 0 when every step behaved.
//
//===----------------------------------------------------------------------===//

#include <dlfcn.h>

#include <cstdio>

struct FatError {
  int Code;
};

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    std::fprintf(stderr, "usage: run-fat LIB...\n");
    return 2;
  }
  int Failures = 0;
  for (int I = 1; I < Argc; ++I) {
    void *H = dlopen(Argv[I], RTLD_NOW | RTLD_LOCAL);
    if (!H) {
      std::printf("dlopen failed: %s\n", dlerror());
      return 1;
    }
    std::printf("loaded %s\n", Argv[I]);
    if (auto *Launch = reinterpret_cast<int (*)()>(dlsym(H, "fat_launch")))
      std::printf("fat_launch: %d kernels launched\n", Launch());
    if (auto *Catch = reinterpret_cast<int (*)(int)>(dlsym(H, "fat_catch"))) {
      int R = Catch(5);
      std::printf("fat_catch: %d\n", R);
      Failures += R != 6;
    }
    if (auto *Throw = reinterpret_cast<void (*)(int)>(dlsym(H, "fat_throw"))) {
      try {
        Throw(7);
        std::printf("fat_throw: returned\n");
        ++Failures;
      } catch (const FatError &E) {
        std::printf("fat_throw: caught %d\n", E.Code);
        Failures += E.Code != 7;
      }
    }
    if (dlclose(H) != 0) {
      std::printf("dlclose failed: %s\n", dlerror());
      ++Failures;
    }
    std::printf("closed %s\n", Argv[I]);
  }
  return Failures ? 1 : 0;
}
