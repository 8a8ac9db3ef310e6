//===- Registry.h - The counter areas of live executables -------*- C++ -*-===//
//
// What the tool remembers between an executable's freeze and its destroy
// (or the runtime's unload): its counter areas. Applications load and
// destroy executables from any thread, so every access holds one mutex;
// dumps are made after an area is taken out, outside the lock, so the
// runtime is never called with it held.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_COUNTERS_RT_REGISTRY_H
#define HOTSWAP_COUNTERS_RT_REGISTRY_H

#include "CounterArea.h"

#include <cstdint>
#include <mutex>
#include <vector>

namespace hotswap_counters {

class Registry {
public:
  /// Remembers \p Areas, giving each the next sequence number.
  void add(std::vector<CounterArea> Areas);
  /// Forgets the areas of \p Executable and returns them, in the order
  /// they were added.
  std::vector<CounterArea> take(hsa_executable_t Executable);
  /// Forgets every area and returns them, in the order they were added.
  std::vector<CounterArea> takeAll();

private:
  std::mutex Lock;
  std::vector<CounterArea> Live;
  uint64_t NextSequence = 0;
};

} // namespace hotswap_counters

#endif // HOTSWAP_COUNTERS_RT_REGISTRY_H
