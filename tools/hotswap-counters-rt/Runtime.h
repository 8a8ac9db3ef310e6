//===- Runtime.h - The runtime entry points the tool calls ------*- C++ -*-===//
//
// The tool links no HSA runtime: it calls ROCr only through the API table
// ROCr hands to OnLoad. Runtime keeps the entry points it uses, as they
// were in that table before the tool put its own hsa_executable_freeze and
// hsa_executable_destroy there (so its wrappers call the runtime's, or the
// next tool's, and never themselves).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_COUNTERS_RT_RUNTIME_H
#define HOTSWAP_COUNTERS_RT_RUNTIME_H

#include "HsaHeaders.h"

namespace hotswap_counters {

struct Runtime {
  decltype(hsa_executable_freeze) *ExecutableFreeze = nullptr;
  decltype(hsa_executable_destroy) *ExecutableDestroy = nullptr;
  decltype(hsa_iterate_agents) *IterateAgents = nullptr;
  decltype(hsa_agent_get_info) *AgentGetInfo = nullptr;
  decltype(hsa_executable_iterate_agent_symbols) *IterateAgentSymbols = nullptr;
  decltype(hsa_executable_symbol_get_info) *SymbolGetInfo = nullptr;
  decltype(hsa_memory_copy) *MemoryCopy = nullptr;
  decltype(hsa_status_string) *StatusString = nullptr;
  decltype(hsa_system_get_major_extension_table) *GetMajorExtensionTable =
      nullptr;
};

/// The entry points the tool needs from \p Table, or null (with the reason
/// in \p Why) when the table is too old or too small to hold one of them:
/// each table records its size in version.minor_id, and a field past that
/// size is not there.
bool readRuntime(const HsaApiTable *Table, Runtime &Out, const char *&Why);

/// "HSA_STATUS_ERROR_INVALID_ARGUMENT: ..." from the runtime, or the number
/// when it gives no string.
const char *statusText(const Runtime &RT, hsa_status_t Status, char *Buf,
                       unsigned BufSize);

} // namespace hotswap_counters

#endif // HOTSWAP_COUNTERS_RT_RUNTIME_H
