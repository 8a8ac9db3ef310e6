//===- Runtime.cpp - The runtime entry points the tool calls --------------===//

#include "Runtime.h"

#include <cstddef>
#include <cstdio>

namespace hotswap_counters {

namespace {
// A core table field is present when it lies wholly inside the size the
// runtime wrote into version.minor_id (hsa_api_trace.h's copyTables reads
// it the same way), and set when it is not null.
bool hasField(const CoreApiTable *Core, size_t Offset, const void *Value) {
  return Offset + sizeof(void *) <= Core->version.minor_id && Value != nullptr;
}
} // namespace

bool readRuntime(const HsaApiTable *Table, Runtime &Out, const char *&Why) {
  if (!Table || Table->version.major_id != HSA_API_TABLE_MAJOR_VERSION ||
      Table->version.minor_id < offsetof(HsaApiTable, core_) + sizeof(void *) ||
      !Table->core_) {
    Why = "the runtime's API table has no core table this library knows";
    return false;
  }
  const CoreApiTable *Core = Table->core_;
  if (Core->version.major_id != HSA_CORE_API_TABLE_MAJOR_VERSION) {
    Why = "the runtime's core API table has an unknown major version";
    return false;
  }
#define HOTSWAP_TAKE(Field, Member)                                            \
  if (!hasField(Core, offsetof(CoreApiTable, Field),                           \
                reinterpret_cast<const void *>(Core->Field))) {                \
    Why = "the runtime's core API table has no " #Field;                       \
    return false;                                                              \
  }                                                                            \
  Out.Member = Core->Field;
  HOTSWAP_TAKE(hsa_executable_freeze_fn, ExecutableFreeze)
  HOTSWAP_TAKE(hsa_executable_destroy_fn, ExecutableDestroy)
  HOTSWAP_TAKE(hsa_iterate_agents_fn, IterateAgents)
  HOTSWAP_TAKE(hsa_agent_get_info_fn, AgentGetInfo)
  HOTSWAP_TAKE(hsa_executable_iterate_agent_symbols_fn, IterateAgentSymbols)
  HOTSWAP_TAKE(hsa_executable_symbol_get_info_fn, SymbolGetInfo)
  HOTSWAP_TAKE(hsa_memory_copy_fn, MemoryCopy)
#undef HOTSWAP_TAKE
  // Optional: without them errors show numbers, and dumps name no URI.
  if (hasField(Core, offsetof(CoreApiTable, hsa_status_string_fn),
               reinterpret_cast<const void *>(Core->hsa_status_string_fn)))
    Out.StatusString = Core->hsa_status_string_fn;
  if (hasField(Core,
               offsetof(CoreApiTable, hsa_system_get_major_extension_table_fn),
               reinterpret_cast<const void *>(
                   Core->hsa_system_get_major_extension_table_fn)))
    Out.GetMajorExtensionTable = Core->hsa_system_get_major_extension_table_fn;
  return true;
}

const char *statusText(const Runtime &RT, hsa_status_t Status, char *Buf,
                       unsigned BufSize) {
  const char *Text = nullptr;
  if (RT.StatusString && RT.StatusString(Status, &Text) == HSA_STATUS_SUCCESS &&
      Text)
    return Text;
  std::snprintf(Buf, BufSize, "HSA status 0x%x", static_cast<unsigned>(Status));
  return Buf;
}

} // namespace hotswap_counters
