//===- Registry.cpp - The counter areas of live executables ---------------===//

#include "Registry.h"

#include <utility>

namespace hotswap_counters {

void Registry::add(std::vector<CounterArea> Areas) {
  std::lock_guard<std::mutex> Guard(Lock);
  for (CounterArea &Area : Areas) {
    Area.Sequence = NextSequence++;
    Live.push_back(std::move(Area));
  }
}

std::vector<CounterArea> Registry::take(hsa_executable_t Executable) {
  std::lock_guard<std::mutex> Guard(Lock);
  std::vector<CounterArea> Taken, Kept;
  for (CounterArea &Area : Live)
    (Area.Executable.handle == Executable.handle ? Taken : Kept)
        .push_back(std::move(Area));
  Live = std::move(Kept);
  return Taken;
}

std::vector<CounterArea> Registry::takeAll() {
  std::lock_guard<std::mutex> Guard(Lock);
  std::vector<CounterArea> Taken = std::move(Live);
  Live.clear();
  return Taken;
}

} // namespace hotswap_counters
