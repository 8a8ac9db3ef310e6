//===- CounterArea.cpp - __hotswap_counters in a frozen executable --------===//

#include "CounterArea.h"

#include "Report.h"

#include <cstring>

namespace hotswap_counters {

namespace {

struct Agent {
  hsa_agent_t Handle;
  unsigned Index;
  std::string Name;
};

struct AgentWalk {
  const Runtime *RT;
  std::vector<Agent> Gpus;
  unsigned Next = 0;
};

hsa_status_t visitAgent(hsa_agent_t Handle, void *Data) {
  auto &Walk = *static_cast<AgentWalk *>(Data);
  unsigned Index = Walk.Next++;
  hsa_device_type_t Type;
  if (Walk.RT->AgentGetInfo(Handle, HSA_AGENT_INFO_DEVICE, &Type) !=
          HSA_STATUS_SUCCESS ||
      Type != HSA_DEVICE_TYPE_GPU)
    return HSA_STATUS_SUCCESS; // only GPUs run instrumented kernels
  // HSA_AGENT_INFO_NAME is a NUL-terminated char[64].
  char Name[65] = {};
  if (Walk.RT->AgentGetInfo(Handle, HSA_AGENT_INFO_NAME, Name) !=
      HSA_STATUS_SUCCESS)
    std::strcpy(Name, "unknown");
  Walk.Gpus.push_back({Handle, Index, Name});
  return HSA_STATUS_SUCCESS;
}

struct SymbolSearch {
  const Runtime *RT;
  bool Found = false;
  hsa_executable_symbol_t Symbol{};
};

hsa_status_t visitSymbol(hsa_executable_t, hsa_agent_t,
                         hsa_executable_symbol_t Symbol, void *Data) {
  auto &Search = *static_cast<SymbolSearch *>(Data);
  const Runtime &RT = *Search.RT;
  hsa_symbol_kind_t Kind;
  if (RT.SymbolGetInfo(Symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &Kind) !=
          HSA_STATUS_SUCCESS ||
      Kind != HSA_SYMBOL_KIND_VARIABLE)
    return HSA_STATUS_SUCCESS;
  uint32_t Length = 0;
  if (RT.SymbolGetInfo(Symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH,
                       &Length) != HSA_STATUS_SUCCESS ||
      Length != sizeof(CounterSymbolName) - 1)
    return HSA_STATUS_SUCCESS;
  // The name is Length characters, not necessarily NUL-terminated.
  char Name[sizeof(CounterSymbolName)] = {};
  if (RT.SymbolGetInfo(Symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME, Name) !=
          HSA_STATUS_SUCCESS ||
      std::memcmp(Name, CounterSymbolName, Length) != 0)
    return HSA_STATUS_SUCCESS;
  Search.Found = true;
  Search.Symbol = Symbol;
  return HSA_STATUS_INFO_BREAK;
}

/// ROCr's loader extension, asked for once, at the first freeze rather than
/// in OnLoad: OnLoad runs inside hsa_init, and no document promises the
/// runtime answers from there.
const hsa_ven_amd_loader_1_01_pfn_t *loaderExtension(const Runtime &RT) {
  static const hsa_ven_amd_loader_1_01_pfn_t *Table =
      [&]() -> const hsa_ven_amd_loader_1_01_pfn_t * {
    static hsa_ven_amd_loader_1_01_pfn_t Storage;
    if (!RT.GetMajorExtensionTable ||
        RT.GetMajorExtensionTable(HSA_EXTENSION_AMD_LOADER, 1, sizeof(Storage),
                                  &Storage) != HSA_STATUS_SUCCESS ||
        !Storage.hsa_ven_amd_loader_executable_iterate_loaded_code_objects ||
        !Storage.hsa_ven_amd_loader_loaded_code_object_get_info)
      return nullptr;
    return &Storage;
  }();
  return Table;
}

struct UriSearch {
  const hsa_ven_amd_loader_1_01_pfn_t *Loader;
  const CounterArea *Area;
  std::string Uri;
};

hsa_status_t visitLoadedObject(hsa_executable_t, hsa_loaded_code_object_t Obj,
                               void *Data) {
  auto &Search = *static_cast<UriSearch *>(Data);
  auto GetInfo = Search.Loader->hsa_ven_amd_loader_loaded_code_object_get_info;
  uint32_t Kind = 0;
  hsa_agent_t Agent{};
  uint64_t Base = 0, Size = 0;
  if (GetInfo(Obj, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND, &Kind) !=
          HSA_STATUS_SUCCESS ||
      Kind != HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT ||
      GetInfo(Obj, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT, &Agent) !=
          HSA_STATUS_SUCCESS ||
      Agent.handle != Search.Area->Agent.handle ||
      GetInfo(Obj, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE,
              &Base) != HSA_STATUS_SUCCESS ||
      GetInfo(Obj, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE,
              &Size) != HSA_STATUS_SUCCESS)
    return HSA_STATUS_SUCCESS;
  // Several objects may be loaded on one agent: the one whose memory holds
  // the area is the one it belongs to. (Written so as not to overflow.)
  const CounterArea &Area = *Search.Area;
  if (Area.Address < Base || Area.Address - Base >= Size ||
      Area.Size > Size - (Area.Address - Base))
    return HSA_STATUS_SUCCESS;
  uint32_t Length = 0;
  if (GetInfo(Obj, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH,
              &Length) != HSA_STATUS_SUCCESS)
    return HSA_STATUS_SUCCESS;
  std::string Uri(Length + 1, '\0');
  if (GetInfo(Obj, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI,
              Uri.data()) != HSA_STATUS_SUCCESS)
    return HSA_STATUS_SUCCESS;
  Uri.resize(Length);
  Search.Uri = std::move(Uri);
  return HSA_STATUS_INFO_BREAK;
}

std::string uriOf(const Runtime &RT, const CounterArea &Area) {
  const hsa_ven_amd_loader_1_01_pfn_t *Loader = loaderExtension(RT);
  if (!Loader)
    return {};
  UriSearch Search{Loader, &Area, {}};
  Loader->hsa_ven_amd_loader_executable_iterate_loaded_code_objects(
      Area.Executable, visitLoadedObject, &Search);
  return Search.Uri;
}

} // namespace

std::vector<CounterArea> findCounterAreas(const Runtime &RT,
                                          hsa_executable_t Executable) {
  std::vector<CounterArea> Areas;
  AgentWalk Walk{&RT, {}};
  char Buf[32];
  hsa_status_t Status = RT.IterateAgents(visitAgent, &Walk);
  if (Status != HSA_STATUS_SUCCESS) {
    report("cannot list the agents: %s", statusText(RT, Status, Buf, 32));
    return Areas;
  }
  for (const Agent &Gpu : Walk.Gpus) {
    SymbolSearch Search{&RT};
    Status =
        RT.IterateAgentSymbols(Executable, Gpu.Handle, visitSymbol, &Search);
    if (Status != HSA_STATUS_SUCCESS && Status != HSA_STATUS_INFO_BREAK) {
      report("cannot list the symbols of executable 0x%llx on agent %u (%s): "
             "%s",
             static_cast<unsigned long long>(Executable.handle), Gpu.Index,
             Gpu.Name.c_str(), statusText(RT, Status, Buf, 32));
      continue;
    }
    if (!Search.Found)
      continue;
    CounterArea Area;
    Area.Executable = Executable;
    Area.Agent = Gpu.Handle;
    Area.AgentName = Gpu.Name;
    Area.AgentIndex = Gpu.Index;
    uint32_t Size = 0;
    if ((Status = RT.SymbolGetInfo(Search.Symbol,
                                   HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS,
                                   &Area.Address)) != HSA_STATUS_SUCCESS ||
        (Status = RT.SymbolGetInfo(Search.Symbol,
                                   HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE,
                                   &Size)) != HSA_STATUS_SUCCESS) {
      report("cannot read where '%s' is on agent %u (%s): %s",
             CounterSymbolName, Gpu.Index, Gpu.Name.c_str(),
             statusText(RT, Status, Buf, 32));
      continue;
    }
    // instrument always gives the symbol its size; 0 means the runtime
    // does not know it, and a dump of unknown length would be no dump.
    if (Size == 0) {
      report("'%s' on agent %u (%s) has no size: not dumped", CounterSymbolName,
             Gpu.Index, Gpu.Name.c_str());
      continue;
    }
    Area.Size = Size;
    Area.Uri = uriOf(RT, Area);
    Areas.push_back(std::move(Area));
  }
  return Areas;
}

} // namespace hotswap_counters
