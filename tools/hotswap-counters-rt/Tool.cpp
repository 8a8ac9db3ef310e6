//===- Tool.cpp - The HSA tools library's entry points --------------------===//
//
// ROCr loads every library named in HSA_TOOLS_LIB when it initialises,
// calls its OnLoad with the API table every application call goes through,
// and calls OnUnload when it shuts down. This library puts its own
// hsa_executable_freeze and hsa_executable_destroy into that table: after
// a freeze it looks for the executable's counter areas (CounterArea.h);
// before a destroy, and at OnUnload for the executables still alive, it
// copies each area to the host and writes its dump (DumpFile.h). It calls
// the runtime only through the table: it links no HSA runtime, and no
// LLVM, so that loading it into an application adds next to nothing.
//
// Whatever fails, the application goes on: the wrappers always return what
// the runtime returned, and every failure is one line on stderr.
//
//===----------------------------------------------------------------------===//

#include "CounterArea.h"
#include "DumpFile.h"
#include "Registry.h"
#include "Report.h"
#include "Runtime.h"

#include <cstdint>
#include <vector>

using namespace hotswap_counters;

namespace {

// Set once by OnLoad, before the table it patched is used; read-only after.
Runtime RT;

Registry &registry() {
  static Registry R;
  return R;
}

void dumpArea(const CounterArea &Area, const char *When) {
  std::vector<uint8_t> Bytes(Area.Size);
  hsa_status_t Status = RT.MemoryCopy(
      Bytes.data(), reinterpret_cast<const void *>(Area.Address), Area.Size);
  if (Status != HSA_STATUS_SUCCESS) {
    char Buf[32];
    report("cannot copy the counters of dump %llu (%llu bytes at 0x%llx on "
           "agent %u, %s): %s; no dump written",
           static_cast<unsigned long long>(Area.Sequence),
           static_cast<unsigned long long>(Area.Size),
           static_cast<unsigned long long>(Area.Address), Area.AgentIndex,
           Area.AgentName.c_str(), statusText(RT, Status, Buf, sizeof(Buf)));
    return;
  }
  writeDump(Area, Bytes, When);
}

hsa_status_t freezeAndFind(hsa_executable_t Executable, const char *Options) {
  hsa_status_t Status = RT.ExecutableFreeze(Executable, Options);
  // Only a frozen executable has its variables' addresses.
  if (Status == HSA_STATUS_SUCCESS)
    registry().add(findCounterAreas(RT, Executable));
  return Status;
}

hsa_status_t dumpAndDestroy(hsa_executable_t Executable) {
  // The areas go away with the executable: dump them first.
  for (const CounterArea &Area : registry().take(Executable))
    dumpArea(Area, "destroy");
  return RT.ExecutableDestroy(Executable);
}

} // namespace

extern "C" __attribute__((visibility("default"))) bool
OnLoad(HsaApiTable *Table, uint64_t RuntimeVersion, uint64_t FailedToolCount,
       const char *const *FailedToolNames) {
  const char *Why = nullptr;
  if (!readRuntime(Table, RT, Why)) {
    // false: ROCr counts the tool as failed and the application runs on.
    report("not loaded: %s", Why);
    return false;
  }
  Table->core_->hsa_executable_freeze_fn = freezeAndFind;
  Table->core_->hsa_executable_destroy_fn = dumpAndDestroy;
  return true;
}

extern "C" __attribute__((visibility("default"))) void OnUnload() {
  // The runtime still answers here: ROCr's Runtime::Unload calls its tools'
  // OnUnload first, before it destroys its loader and agents (so its
  // source reads; no GPU here to watch it). An application that never calls
  // hsa_shut_down gets no OnUnload, and no dump of what it did not destroy.
  for (const CounterArea &Area : registry().takeAll())
    dumpArea(Area, "unload");
}
