//===- CounterArea.h - __hotswap_counters in a frozen executable -*- C++ -*-=//
//
// instrument leaves the counters of a code object in a zero-filled area
// named by the global STT_OBJECT symbol `__hotswap_counters` of .symtab,
// which the HSA loader turns into an agent variable of every executable the
// object is loaded into: one area per (executable, agent). findCounterAreas
// asks the runtime, through its API table only, for that variable on every
// GPU agent of a frozen executable, and, when ROCr's loader extension
// (hsa_ven_amd_loader 1.01) answers, for the URI of the loaded code object
// whose memory holds it, so that a dump says which object it belongs to.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_COUNTERS_RT_COUNTERAREA_H
#define HOTSWAP_COUNTERS_RT_COUNTERAREA_H

#include "Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hotswap_counters {

inline constexpr const char CounterSymbolName[] = "__hotswap_counters";

struct CounterArea {
  hsa_executable_t Executable{};
  hsa_agent_t Agent{};
  /// The agent's HSA_AGENT_INFO_NAME ("gfx90a").
  std::string AgentName;
  /// The agent's position among the runtime's agents (hsa_iterate_agents
  /// order, CPUs included), for telling two GPUs of one name apart.
  unsigned AgentIndex = 0;
  /// The area, in the agent's memory.
  uint64_t Address = 0;
  uint64_t Size = 0;
  /// "file:///path#offset=...&size=..." or "memory://pid#..."; empty when
  /// the loader extension is missing or names no object holding the area.
  std::string Uri;
  /// This process's number for the area, in the order areas are found
  /// (executables in freeze order, agents in runtime order): the dump's
  /// file name.
  uint64_t Sequence = 0;
};

/// The counter areas of the frozen \p Executable, one per GPU agent that
/// has the variable (none when the object was not instrumented). Queries
/// that fail are reported and skip that agent.
std::vector<CounterArea> findCounterAreas(const Runtime &RT,
                                          hsa_executable_t Executable);

} // namespace hotswap_counters

#endif // HOTSWAP_COUNTERS_RT_COUNTERAREA_H
