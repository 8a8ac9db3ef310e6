//===- fake-hip.c - A HIP runtime that only registers and records ---------===//
//
// Stands in for libamdhip64 in the FatBinary tests (there is no GPU). It
// defines what the host code of HIP programs calls at load time and when they
// launch kernels, and nothing else of substance:
//
//   __hipRegisterFatBinary(wrapper)   checks the wrapper (magic 0x48495046
//                                     "HIPF", version 1), follows its bundle
//                                     pointer, sizes the bundle the way the
//                                     HIP runtime does and dumps it
//   __hipRegisterFunction/Var/ManagedVar/Surface/Texture, __hipUnregister-
//   FatBinary, __hipPush/PopCallConfiguration, hipLaunchKernel
//                                     recorded as events; a launch names the
//                                     device function registered for the
//                                     host stub it was given
//   hipMalloc, hipFree, hipMemcpy, hipGetLastError, hipGetDeviceCount
//                                     what Debian's librocrand imports
//                                     besides registration: "no device"
//
// Sizing a bundle (HIP's rule, hip_fatbin.cpp):
//   __CLANG_OFFLOAD_BUNDLE__  the last entry's offset + size (offsets count
//                             from the bundle start, so the header is in)
//   CCOB v2                   u32 total size at offset 8
//   CCOB v3                   u64 total size at offset 8
//   anything else (CCOB v1, which has no total, included) is an error.
// The bundle must lie inside one PT_LOAD of a loaded object
// (dl_iterate_phdr), which also gives its file offset in that object.
//
// With FAKE_HIP_DUMP_DIR=DIR set, wrapper N (registration order, from 0)
// has its bundle written to DIR/bundle-N.bin and one line appended to
// DIR/index.txt:
//
//   wrapper=N object=NAME wrapper_vaddr=0x.. bundle_vaddr=0x..
//     bundle_offset=0x.. size=S format=bundle|ccob-v2|ccob-v3
//     wrapper_addr=0x.. bundle_addr=0x.. file=bundle-N.bin
//
// (one line): NAME is the basename of the object holding the bundle
// (the executable's own name for the main program), *_vaddr are link-time
// addresses (run-time address minus the object's load bias), bundle_offset
// the bundle's file offset in NAME, *_addr the run-time addresses. Events go
// to DIR/events.txt, one per line:
//
//   register-function wrapper=N name=DEVICE_NAME
//   register-var wrapper=N name=DEVICE_NAME size=S constant=C
//   launch name=DEVICE_NAME grid=X,Y,Z block=X,Y,Z shmem=S
//   unregister wrapper=N
//
// Without FAKE_HIP_DUMP_DIR nothing is written; wrappers are still checked.
// Use a fresh directory per process: numbering starts at 0 in each process.
// Any inconsistency prints "fake-hip: error: ..." on stderr and exits with
// status 70, so a broken wrapper or bundle cannot go unnoticed.
//
//===----------------------------------------------------------------------===//

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  unsigned x, y, z;
} dim3;

// clang's __hip_fatbin_wrapper (CGCUDANV.cpp, OffloadWrapper.cpp).
typedef struct {
  uint32_t Magic;
  uint32_t Version;
  const unsigned char *Bundle;
  const void *Unused;
} FatbinWrapper;

enum { WrapperMagic = 0x48495046, WrapperVersion = 1 };
enum { ErrorNoDevice = 100, ErrorInvalidValue = 1 };

// --- reporting
// ----------------------------------------------------------------

static __attribute__((noreturn, format(printf, 1, 2))) void
fail(const char *Fmt, ...) {
  va_list Ap;
  va_start(Ap, Fmt);
  fputs("fake-hip: error: ", stderr);
  vfprintf(stderr, Fmt, Ap);
  fputc('\n', stderr);
  va_end(Ap);
  fflush(NULL);
  _exit(70);
}

static const char *dumpDir(void) {
  const char *D = getenv("FAKE_HIP_DUMP_DIR");
  return D && *D ? D : NULL;
}

// Appends one line to DIR/NAME (O_APPEND: one write per line).
static __attribute__((format(printf, 2, 3))) void record(const char *Name,
                                                         const char *Fmt, ...) {
  const char *Dir = dumpDir();
  if (!Dir)
    return;
  char Path[PATH_MAX], Line[1024];
  snprintf(Path, sizeof Path, "%s/%s", Dir, Name);
  va_list Ap;
  va_start(Ap, Fmt);
  int N = vsnprintf(Line, sizeof Line - 1, Fmt, Ap);
  va_end(Ap);
  if (N < 0 || (size_t)N >= sizeof Line - 1)
    fail("record line too long for %s", Name);
  Line[N++] = '\n';
  int Fd = open(Path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (Fd < 0 || write(Fd, Line, (size_t)N) != N)
    fail("cannot write %s: %s", Path, strerror(errno));
  close(Fd);
}

// --- where an address lives
// -----------------------------------------------------

typedef struct {
  uintptr_t Addr, Size; // the range looked up
  int Found;
  char Name[PATH_MAX]; // the object's path ("" for the main program)
  uintptr_t Bias;      // load bias (dlpi_addr)
  uint64_t FileOffset; // of Addr in that object
} Location;

static int findRange(struct dl_phdr_info *Info, size_t Sz, void *Data) {
  (void)Sz;
  Location *L = Data;
  for (int I = 0; I < Info->dlpi_phnum; ++I) {
    const ElfW(Phdr) *P = &Info->dlpi_phdr[I];
    if (P->p_type != PT_LOAD)
      continue;
    uintptr_t Start = Info->dlpi_addr + P->p_vaddr;
    // Only bytes backed by the file: a bundle in .bss would be nonsense.
    uintptr_t End = Start + P->p_filesz;
    if (L->Addr < Start || L->Addr >= End)
      continue;
    if (L->Size > End - L->Addr)
      fail("range 0x%lx+0x%lx runs past the end of its PT_LOAD in '%s'",
           (unsigned long)L->Addr, (unsigned long)L->Size, Info->dlpi_name);
    L->Found = 1;
    snprintf(L->Name, sizeof L->Name, "%s", Info->dlpi_name);
    L->Bias = Info->dlpi_addr;
    L->FileOffset = L->Addr - Start + P->p_offset;
    return 1;
  }
  return 0;
}

static Location locate(const void *Addr, uintptr_t Size, const char *What) {
  Location L;
  memset(&L, 0, sizeof L);
  L.Addr = (uintptr_t)Addr;
  L.Size = Size;
  dl_iterate_phdr(findRange, &L);
  if (!L.Found)
    fail("%s at %p is not in a file-backed PT_LOAD of any loaded object", What,
         Addr);
  return L;
}

static const char *baseName(const char *Path) {
  static char Self[PATH_MAX];
  if (!*Path) { // the main program
    ssize_t N = readlink("/proc/self/exe", Self, sizeof Self - 1);
    if (N <= 0)
      return "main";
    Self[N] = '\0';
    Path = Self;
  }
  const char *Slash = strrchr(Path, '/');
  return Slash ? Slash + 1 : Path;
}

// --- bundles
// --------------------------------------------------------------------

static uint64_t readU64(const unsigned char *P) {
  uint64_t V;
  memcpy(&V, P, 8);
  return V;
}

static uint32_t readU32(const unsigned char *P) {
  uint32_t V;
  memcpy(&V, P, 4);
  return V;
}

// The header of an uncompressed bundle must be readable before it is sized:
// check each piece of it lies in a mapped file-backed segment before reading.
static uint64_t sizeUncompressed(const unsigned char *B) {
  locate(B, 32, "bundle header");
  uint64_t N = readU64(B + 24);
  if (N == 0 || N > 4096)
    fail("bundle at %p has %llu entries", (const void *)B,
         (unsigned long long)N);
  uint64_t Pos = 32, Last = 0, Max = 0;
  for (uint64_t I = 0; I < N; ++I) {
    locate(B + Pos, 24, "bundle entry");
    uint64_t Off = readU64(B + Pos), Size = readU64(B + Pos + 8),
             IdLen = readU64(B + Pos + 16);
    if (IdLen == 0 || IdLen > 4096)
      fail("bundle at %p: entry %llu has an id of %llu bytes", (const void *)B,
           (unsigned long long)I, (unsigned long long)IdLen);
    Pos += 24 + IdLen;
    Last = Off + Size;
    if (Last > Max)
      Max = Last;
  }
  if (Pos > Last)
    fail("bundle at %p: header (%llu bytes) ends after its last entry (%llu)",
         (const void *)B, (unsigned long long)Pos, (unsigned long long)Last);
  if (Max != Last)
    fail("bundle at %p: the last entry ends at %llu but another at %llu (HIP "
         "would cut the bundle short)",
         (const void *)B, (unsigned long long)Last, (unsigned long long)Max);
  return Last;
}

static uint64_t sizeCompressed(const unsigned char *B, const char **Format) {
  locate(B, 16, "compressed bundle header");
  unsigned Version = B[4] | (B[5] << 8);
  switch (Version) {
  case 2:
    *Format = "ccob-v2";
    return readU32(B + 8);
  case 3:
    *Format = "ccob-v3";
    return readU64(B + 8);
  default:
    fail("compressed bundle at %p has version %u: no total size in its header",
         (const void *)B, Version);
  }
}

// --- registration
// ---------------------------------------------------------------

enum { MaxModules = 4096 };

typedef struct {
  int Index;
  const FatbinWrapper *Wrapper;
} Module;

typedef struct {
  const void *Host;
  const char *Name;
} Function;

static Module Modules[MaxModules];
static int NumModules;
static Function *Functions;
static size_t NumFunctions, CapFunctions;

static void dumpBundle(int Index, const unsigned char *B, uint64_t Size) {
  const char *Dir = dumpDir();
  if (!Dir)
    return;
  char Path[PATH_MAX];
  snprintf(Path, sizeof Path, "%s/bundle-%d.bin", Dir, Index);
  int Fd = open(Path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (Fd < 0)
    fail("cannot create %s: %s", Path, strerror(errno));
  for (uint64_t Done = 0; Done < Size;) {
    ssize_t N = write(Fd, B + Done, Size - Done);
    if (N <= 0)
      fail("cannot write %s: %s", Path, strerror(errno));
    Done += (uint64_t)N;
  }
  close(Fd);
}

EXPORT void **__hipRegisterFatBinary(const void *Data) {
  const FatbinWrapper *W = Data;
  if (NumModules == MaxModules)
    fail("more than %d fat binaries", MaxModules);
  Location WL = locate(W, sizeof *W, "wrapper");
  if (W->Magic != WrapperMagic)
    fail("wrapper at %p: magic 0x%08x, expected 0x%08x", Data, W->Magic,
         WrapperMagic);
  if (W->Version != WrapperVersion)
    fail("wrapper at %p: version %u, expected %u", Data, W->Version,
         WrapperVersion);
  const unsigned char *B = W->Bundle;
  if (!B)
    fail("wrapper at %p: null bundle pointer", Data);
  locate(B, 24, "bundle");
  const char *Format;
  uint64_t Size;
  if (memcmp(B, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0) {
    Format = "bundle";
    Size = sizeUncompressed(B);
  } else if (memcmp(B, "CCOB", 4) == 0) {
    Size = sizeCompressed(B, &Format);
  } else {
    fail("wrapper at %p points at %p, which holds no offload bundle magic",
         Data, (const void *)B);
  }
  Location BL = locate(B, Size, "bundle");
  int Index = NumModules;
  Modules[Index].Index = Index;
  Modules[Index].Wrapper = W;
  ++NumModules;
  dumpBundle(Index, B, Size);
  record("index.txt",
         "wrapper=%d object=%s wrapper_vaddr=0x%lx bundle_vaddr=0x%lx "
         "bundle_offset=0x%llx size=%llu format=%s wrapper_addr=%p "
         "bundle_addr=%p file=bundle-%d.bin",
         Index, baseName(BL.Name), (unsigned long)(WL.Addr - WL.Bias),
         (unsigned long)(BL.Addr - BL.Bias), (unsigned long long)BL.FileOffset,
         (unsigned long long)Size, Format, Data, (const void *)B, Index);
  // The handle the other registration calls receive: our module record.
  return (void **)&Modules[Index];
}

static int moduleIndex(void **Handle) {
  Module *M = (Module *)Handle;
  if (M < Modules || M >= Modules + NumModules)
    fail("unknown fat binary handle %p", (void *)Handle);
  return M->Index;
}

EXPORT void __hipUnregisterFatBinary(void **Handle) {
  record("events.txt", "unregister wrapper=%d", moduleIndex(Handle));
}

EXPORT void __hipRegisterFunction(void **Handle, const void *HostFunction,
                                  char *DeviceFunction, const char *DeviceName,
                                  unsigned ThreadLimit, void *Tid, void *Bid,
                                  dim3 *BlockDim, dim3 *GridDim, int *WSize) {
  (void)DeviceFunction, (void)ThreadLimit, (void)Tid, (void)Bid, (void)BlockDim,
      (void)GridDim, (void)WSize;
  int Index = moduleIndex(Handle);
  if (NumFunctions == CapFunctions) {
    CapFunctions = CapFunctions ? 2 * CapFunctions : 64;
    Functions = realloc(Functions, CapFunctions * sizeof *Functions);
    if (!Functions)
      fail("out of memory");
  }
  Functions[NumFunctions].Host = HostFunction;
  Functions[NumFunctions].Name = DeviceName;
  ++NumFunctions;
  record("events.txt", "register-function wrapper=%d name=%s", Index,
         DeviceName);
}

EXPORT void __hipRegisterVar(void **Handle, void *Var, char *HostVar,
                             char *DeviceVar, int Ext, size_t Size,
                             int Constant, int Global) {
  (void)Var, (void)HostVar, (void)Ext, (void)Global;
  record("events.txt", "register-var wrapper=%d name=%s size=%zu constant=%d",
         moduleIndex(Handle), DeviceVar, Size, Constant);
}

EXPORT void __hipRegisterManagedVar(void *Handle, void **Pointer,
                                    void *InitValue, const char *Name,
                                    size_t Size, unsigned Align) {
  (void)Pointer, (void)InitValue, (void)Align;
  record("events.txt", "register-managed-var wrapper=%d name=%s size=%zu",
         moduleIndex(Handle), Name, Size);
}

EXPORT void __hipRegisterSurface(void **Handle, void *Var, char *HostVar,
                                 char *DeviceVar, int Type, int Ext) {
  (void)Var, (void)HostVar, (void)Type, (void)Ext;
  record("events.txt", "register-surface wrapper=%d name=%s",
         moduleIndex(Handle), DeviceVar);
}

EXPORT void __hipRegisterTexture(void **Handle, void *Var, char *HostVar,
                                 char *DeviceVar, int Type, int Norm, int Ext) {
  (void)Var, (void)HostVar, (void)Type, (void)Norm, (void)Ext;
  record("events.txt", "register-texture wrapper=%d name=%s",
         moduleIndex(Handle), DeviceVar);
}

// --- launches
// -------------------------------------------------------------------

static __thread dim3 ConfigGrid, ConfigBlock;
static __thread size_t ConfigShmem;
static __thread void *ConfigStream;
static __thread int ConfigDepth;

EXPORT int __hipPushCallConfiguration(dim3 Grid, dim3 Block, size_t Shmem,
                                      void *Stream) {
  if (ConfigDepth++ != 0)
    fail("nested call configurations");
  ConfigGrid = Grid, ConfigBlock = Block, ConfigShmem = Shmem,
  ConfigStream = Stream;
  return 0;
}

EXPORT int __hipPopCallConfiguration(dim3 *Grid, dim3 *Block, size_t *Shmem,
                                     void **Stream) {
  if (ConfigDepth-- != 1)
    fail("call configuration popped without a push");
  *Grid = ConfigGrid, *Block = ConfigBlock, *Shmem = ConfigShmem,
  *Stream = ConfigStream;
  return 0;
}

EXPORT int hipLaunchKernel(const void *HostFunction, dim3 Grid, dim3 Block,
                           void **Args, size_t Shmem, void *Stream) {
  (void)Args, (void)Stream;
  for (size_t I = 0; I < NumFunctions; ++I) {
    if (Functions[I].Host != HostFunction)
      continue;
    record("events.txt",
           "launch name=%s grid=%u,%u,%u block=%u,%u,%u shmem=%zu",
           Functions[I].Name, Grid.x, Grid.y, Grid.z, Block.x, Block.y, Block.z,
           Shmem);
    return 0;
  }
  fail("launch of unregistered host function %p", HostFunction);
}

// --- the rest of what librocrand imports: no device here
// -------------------------

EXPORT int hipMalloc(void **Ptr, size_t Size) {
  (void)Size;
  if (Ptr)
    *Ptr = NULL;
  return ErrorNoDevice;
}
EXPORT int hipFree(void *Ptr) { return Ptr ? ErrorInvalidValue : 0; }
EXPORT int hipMemcpy(void *Dst, const void *Src, size_t Size, int Kind) {
  (void)Dst, (void)Src, (void)Size, (void)Kind;
  return ErrorNoDevice;
}
EXPORT int hipGetLastError(void) { return 0; }
EXPORT int hipGetDeviceCount(int *Count) {
  if (Count)
    *Count = 0;
  return ErrorNoDevice;
}
