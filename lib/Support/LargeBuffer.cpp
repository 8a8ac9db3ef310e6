//===- lib/Support/LargeBuffer.cpp - Big byte vectors ---------------------===//

#include "hotswap/Support/LargeBuffer.h"

#include "llvm/Support/MathExtras.h"

#include <cassert>

#if defined(__linux__)
#include <sys/mman.h>
#endif

using namespace hotswap;

void hotswap::reserveLarge(std::vector<uint8_t> &V, size_t Size) {
  assert(V.empty() && "reserveLarge on a vector that holds bytes");
  V.reserve(Size);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Only whole 2 MiB pages inside the allocation can be huge.
  constexpr uintptr_t Huge = uintptr_t(2) << 20;
  if (V.capacity() < 2 * Huge)
    return;
  const auto Begin = reinterpret_cast<uintptr_t>(V.data());
  const uintptr_t First = llvm::alignTo(Begin, Huge);
  const uintptr_t Last = llvm::alignDown(Begin + V.capacity(), Huge);
  if (First < Last)
    ::madvise(reinterpret_cast<void *>(First), Last - First, MADV_HUGEPAGE);
#endif
}
