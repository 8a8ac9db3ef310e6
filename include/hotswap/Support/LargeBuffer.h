//===- hotswap/Support/LargeBuffer.h - Big byte vectors ---------*- C++ -*-===//
//
// A host library's new bundles are hundreds of megabytes, filled once and
// written once. Faulting them in 4 KiB at a time was a third of a whole-
// library run (on a virtual machine a page fault is expensive), so large
// byte vectors are reserved here, with the kernel asked to back them with
// transparent huge pages before anything touches them.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_SUPPORT_LARGEBUFFER_H
#define HOTSWAP_SUPPORT_LARGEBUFFER_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hotswap {

/// Reserves \p Size bytes in \p V (which must be empty) and, when that is
/// large, asks for huge pages to back them (a hint: nothing changes where
/// the system does not have them).
void reserveLarge(std::vector<uint8_t> &V, size_t Size);

/// An empty vector with \p Size bytes reserved as above.
inline std::vector<uint8_t> largeBuffer(size_t Size) {
  std::vector<uint8_t> V;
  reserveLarge(V, Size);
  return V;
}

} // namespace hotswap

#endif // HOTSWAP_SUPPORT_LARGEBUFFER_H
