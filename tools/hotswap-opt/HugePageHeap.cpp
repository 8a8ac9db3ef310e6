//===- tools/hotswap-opt/HugePageHeap.cpp - malloc's heap on huge pages ---===//

#include "HugePageHeap.h"

#include "llvm/Support/MathExtras.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
#endif

using namespace hotswap;

std::optional<std::pair<uintptr_t, uintptr_t>>
hotswap::useHugePagesForTheHeap() {
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t Huge = uintptr_t(2) << 20;
  constexpr int Step = 32 << 20, Reserve = 256 << 20;
  // Blocks up to 32 MiB from the heap; the heap grows, and is trimmed, so
  // as to keep 256 MiB of address space free at its top (a trimmed range
  // that comes back is a new mapping, without the mark).
  if (!mallopt(M_MMAP_THRESHOLD, Step) || !mallopt(M_TOP_PAD, Reserve) ||
      !mallopt(M_TRIM_THRESHOLD, 2 * Reserve))
    return std::nullopt;
  // Grow the heap now (a block larger than its free top), then mark what
  // the growth spans.
  const auto Old = reinterpret_cast<uintptr_t>(sbrk(0));
  void *volatile Block = malloc(mallinfo2().keepcost + 1); // not elided
  free(Block);
  const auto New = reinterpret_cast<uintptr_t>(sbrk(0));
  const uintptr_t First = llvm::alignTo(Old, Huge);
  const uintptr_t Last = llvm::alignDown(New, Huge);
  if (Old == uintptr_t(-1) || First >= Last ||
      ::madvise(reinterpret_cast<void *>(First), Last - First, MADV_HUGEPAGE))
    return std::nullopt;
  return std::make_pair(First, Last);
#else
  return std::nullopt;
#endif
}
