//===- tools/hotswap-opt/HugePageHeap.h - malloc's heap on huge pages -*- C++
//-*-===//
//
// For the driver only (a library must not set process-wide malloc options):
// a code object's run allocates megabytes in blocks of hundreds of KiB, each
// faulted in 4 KiB at a time from glibc's defaults; from a heap backed by
// transparent huge pages they cost a few faults instead of a thousand
// (librocsparse0's largest objects: -31% to -36% wall time).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_TOOLS_HOTSWAPOPT_HUGEPAGEHEAP_H
#define HOTSWAP_TOOLS_HOTSWAPOPT_HUGEPAGEHEAP_H

#include <cstdint>
#include <optional>
#include <utility>

namespace hotswap {

/// Serves blocks up to 32 MiB from the malloc heap rather than mappings of
/// their own, keeps 256 MiB of address space free at the heap's top
/// (growing and trimming it by that margin), grows it now and asks for huge
/// pages to back what it grew (the whole 2 MiB pages in it: the returned
/// range); much as glibc's `glibc.malloc.hugetlb=1` tunable does for a
/// process started with it. The heap then keeps what is freed: fine for
/// code-object-sized inputs, not for a whole library. Nothing without glibc.
std::optional<std::pair<uintptr_t, uintptr_t>> useHugePagesForTheHeap();

} // namespace hotswap

#endif // HOTSWAP_TOOLS_HOTSWAPOPT_HUGEPAGEHEAP_H
