//===- FakeRuntime.cpp - A stand-in for ROCr over host memory -------------===//

#include "FakeRuntime.h"

#include "hsa_ven_amd_loader.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace hotswap_standin {

namespace {

struct FakeAgent {
  hsa_agent_t Handle;
  hsa_device_type_t Type;
  std::string Name;
  unsigned GpuIndex; // among the GPUs
};

struct FakeSymbol {
  std::string Name;
  hsa_symbol_kind_t Kind;
  uint64_t Address;
  uint64_t Size;
};

struct FakeLoadedObject {
  hsa_agent_t Agent;
  unsigned GpuIndex;
  std::string Uri;
  std::unique_ptr<uint8_t[]> Memory;
  uint64_t Size;
  std::vector<std::unique_ptr<FakeSymbol>> Symbols;
};

struct FakeExecutable {
  bool Frozen = false;
  std::vector<std::unique_ptr<FakeLoadedObject>> Objects;
};

// The HSA API has no context argument: the stand-in, like the runtime, is
// one per process. Applications call it from any thread (--threads): every
// entry point holds one lock, recursive because iteration callbacks call
// back in on the same thread.
struct State {
  std::recursive_mutex Lock;
  FakeOptions Options;
  std::vector<FakeAgent> Agents;
  std::map<uint64_t, std::unique_ptr<FakeExecutable>> Executables;
  uint64_t NextExecutable = 0x5000;
};

State &state() {
  static State S;
  return S;
}

std::unique_lock<std::recursive_mutex> locked() {
  return std::unique_lock<std::recursive_mutex>(state().Lock);
}

FakeExecutable *findExecutable(hsa_executable_t E) {
  auto It = state().Executables.find(E.handle);
  return It == state().Executables.end() ? nullptr : It->second.get();
}

const FakeAgent *findAgent(hsa_agent_t A) {
  for (const FakeAgent &Agent : state().Agents)
    if (Agent.Handle.handle == A.handle)
      return &Agent;
  return nullptr;
}

hsa_status_t iterateAgents(hsa_status_t (*Callback)(hsa_agent_t, void *),
                           void *Data) {
  auto Guard = locked();
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (const FakeAgent &Agent : state().Agents) {
    hsa_status_t S = Callback(Agent.Handle, Data);
    if (S != HSA_STATUS_SUCCESS)
      return S;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t agentGetInfo(hsa_agent_t A, hsa_agent_info_t Attribute,
                          void *Value) {
  auto Guard = locked();
  const FakeAgent *Agent = findAgent(A);
  if (!Agent)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  switch (Attribute) {
  case HSA_AGENT_INFO_DEVICE:
    *static_cast<hsa_device_type_t *>(Value) = Agent->Type;
    return HSA_STATUS_SUCCESS;
  case HSA_AGENT_INFO_NAME: {
    // A NUL-terminated char[64], every unused byte NUL.
    char *Out = static_cast<char *>(Value);
    std::memset(Out, 0, 64);
    std::strncpy(Out, Agent->Name.c_str(), 63);
    return HSA_STATUS_SUCCESS;
  }
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t
iterateAgentSymbols(hsa_executable_t E, hsa_agent_t A,
                    hsa_status_t (*Callback)(hsa_executable_t, hsa_agent_t,
                                             hsa_executable_symbol_t, void *),
                    void *Data) {
  auto Guard = locked();
  FakeExecutable *Exec = findExecutable(E);
  if (!Exec)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!findAgent(A))
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (auto &Obj : Exec->Objects) {
    if (Obj->Agent.handle != A.handle)
      continue;
    for (auto &Sym : Obj->Symbols) {
      hsa_executable_symbol_t Handle{reinterpret_cast<uint64_t>(Sym.get())};
      hsa_status_t S = Callback(E, A, Handle, Data);
      if (S != HSA_STATUS_SUCCESS)
        return S;
    }
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t symbolGetInfo(hsa_executable_symbol_t Handle,
                           hsa_executable_symbol_info_t Attribute,
                           void *Value) {
  auto Guard = locked();
  const auto *Sym = reinterpret_cast<const FakeSymbol *>(Handle.handle);
  if (!Sym)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL;
  switch (Attribute) {
  case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
    *static_cast<hsa_symbol_kind_t *>(Value) = Sym->Kind;
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH:
    *static_cast<uint32_t *>(Value) = static_cast<uint32_t>(Sym->Name.size());
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_NAME:
    // Exactly NAME_LENGTH characters, no NUL: as the HSA spec allows.
    std::memcpy(Value, Sym->Name.data(), Sym->Name.size());
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS:
    *static_cast<uint64_t *>(Value) = Sym->Address;
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE:
    *static_cast<uint32_t *>(Value) = static_cast<uint32_t>(Sym->Size);
    return HSA_STATUS_SUCCESS;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

/// Whether [P, P+Size) lies inside the memory of a live loaded object.
bool isLoadedMemory(const void *P, size_t Size) {
  auto Addr = reinterpret_cast<uintptr_t>(P);
  for (auto &[Handle, Exec] : state().Executables)
    for (auto &Obj : Exec->Objects) {
      auto Base = reinterpret_cast<uintptr_t>(Obj->Memory.get());
      if (Addr >= Base && Addr - Base <= Obj->Size &&
          Size <= Obj->Size - (Addr - Base))
        return true;
    }
  return false;
}

hsa_status_t memoryCopy(void *Dst, const void *Src, size_t Size) {
  auto Guard = locked();
  if (!Dst || !Src)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (state().Options.FailCopy)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  // The runtime copies memory it knows: here, the agents' memory is the
  // loaded objects' (the host buffer stands for system memory).
  if (!isLoadedMemory(Src, Size) && !isLoadedMemory(Dst, Size))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  std::memmove(Dst, Src, Size);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t executableFreeze(hsa_executable_t E, const char *) {
  auto Guard = locked();
  FakeExecutable *Exec = findExecutable(E);
  if (!Exec)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (Exec->Frozen)
    return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  Exec->Frozen = true;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t executableDestroy(hsa_executable_t E) {
  auto Guard = locked();
  auto It = state().Executables.find(E.handle);
  if (It == state().Executables.end())
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  state().Executables.erase(It);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t statusString(hsa_status_t Status, const char **Out) {
  *Out = statusName(Status);
  return HSA_STATUS_SUCCESS;
}

// The loader extension, version 1.01.

hsa_status_t
iterateLoadedObjects(hsa_executable_t E,
                     hsa_status_t (*Callback)(hsa_executable_t,
                                              hsa_loaded_code_object_t, void *),
                     void *Data) {
  auto Guard = locked();
  FakeExecutable *Exec = findExecutable(E);
  if (!Exec)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  for (auto &Obj : Exec->Objects) {
    hsa_loaded_code_object_t Handle{reinterpret_cast<uint64_t>(Obj.get())};
    hsa_status_t S = Callback(E, Handle, Data);
    if (S != HSA_STATUS_SUCCESS)
      return S;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
loadedObjectGetInfo(hsa_loaded_code_object_t Handle,
                    hsa_ven_amd_loader_loaded_code_object_info_t Attribute,
                    void *Value) {
  auto Guard = locked();
  const auto *Obj = reinterpret_cast<const FakeLoadedObject *>(Handle.handle);
  if (!Obj || !Value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (Attribute) {
  case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND:
    *static_cast<uint32_t *>(Value) =
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT;
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT:
    *static_cast<hsa_agent_t *>(Value) = Obj->Agent;
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE:
    *static_cast<uint64_t *>(Value) =
        reinterpret_cast<uint64_t>(Obj->Memory.get());
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE:
    *static_cast<uint64_t *>(Value) = Obj->Size;
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH:
    *static_cast<uint32_t *>(Value) = static_cast<uint32_t>(Obj->Uri.size());
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI:
    std::memcpy(Value, Obj->Uri.c_str(), Obj->Uri.size() + 1);
    return HSA_STATUS_SUCCESS;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t getMajorExtensionTable(uint16_t Extension, uint16_t Major,
                                    size_t Length, void *Table) {
  auto Guard = locked();
  if (state().Options.NoLoader || Extension != HSA_EXTENSION_AMD_LOADER ||
      Major != 1)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  hsa_ven_amd_loader_1_01_pfn_t Loader{};
  Loader.hsa_ven_amd_loader_executable_iterate_loaded_code_objects =
      iterateLoadedObjects;
  Loader.hsa_ven_amd_loader_loaded_code_object_get_info = loadedObjectGetInfo;
  // ROCr copies as much of its table as the caller asks for.
  std::memset(Table, 0, Length);
  std::memcpy(Table, &Loader, std::min(Length, sizeof(Loader)));
  return HSA_STATUS_SUCCESS;
}

template <typename T> void setVersion(T &Table, uint32_t Major) {
  Table.version.major_id = Major;
  Table.version.minor_id = sizeof(T);
  Table.version.step_id = 0;
}

} // namespace

void initFakeRuntime(const FakeOptions &Options, FakeTables &T) {
  State &S = state();
  S.Options = Options;
  S.Agents.push_back({{0x1000}, HSA_DEVICE_TYPE_CPU, "cpu", 0});
  for (unsigned I = 0; I < Options.Gpus; ++I)
    S.Agents.push_back(
        {{0x2000 + I * 0x100}, HSA_DEVICE_TYPE_GPU, Options.GpuName, I});

  setVersion(T.Root, HSA_API_TABLE_MAJOR_VERSION);
  setVersion(T.Core, HSA_CORE_API_TABLE_MAJOR_VERSION);
  setVersion(T.AmdExt, HSA_AMD_EXT_API_TABLE_MAJOR_VERSION);
  setVersion(T.FinalizerExt, HSA_FINALIZER_API_TABLE_MAJOR_VERSION);
  setVersion(T.ImageExt, HSA_IMAGE_API_TABLE_MAJOR_VERSION);
  if (Options.CoreTableSize)
    T.Core.version.minor_id = Options.CoreTableSize;
  T.Root.core_ = &T.Core;
  T.Root.amd_ext_ = &T.AmdExt;
  T.Root.finalizer_ext_ = &T.FinalizerExt;
  T.Root.image_ext_ = &T.ImageExt;

  T.Core.hsa_iterate_agents_fn = iterateAgents;
  T.Core.hsa_agent_get_info_fn = agentGetInfo;
  T.Core.hsa_executable_iterate_agent_symbols_fn = iterateAgentSymbols;
  T.Core.hsa_executable_symbol_get_info_fn = symbolGetInfo;
  T.Core.hsa_memory_copy_fn = memoryCopy;
  T.Core.hsa_executable_freeze_fn = executableFreeze;
  T.Core.hsa_executable_destroy_fn = executableDestroy;
  T.Core.hsa_status_string_fn = statusString;
  T.Core.hsa_system_get_major_extension_table_fn = getMajorExtensionTable;
}

hsa_executable_t loadExecutable(const std::vector<CodeObjectFile> &Files) {
  auto Guard = locked();
  State &S = state();
  auto Exec = std::make_unique<FakeExecutable>();
  for (const CodeObjectFile &File : Files)
    for (const FakeAgent &Agent : S.Agents) {
      if (Agent.Type != HSA_DEVICE_TYPE_GPU)
        continue;
      const CodeObject &Object = File.Object;
      auto Obj = std::make_unique<FakeLoadedObject>();
      Obj->Agent = Agent.Handle;
      Obj->GpuIndex = Agent.GpuIndex;
      Obj->Uri = File.Uri;
      Obj->Size = Object.LoadSize;
      // Zero-filled, as the loader leaves NOBITS memory.
      Obj->Memory = std::make_unique<uint8_t[]>(Object.LoadSize);
      for (const CodeObjectSymbol &Sym : Object.Symbols) {
        bool Kernel = Sym.Name.size() > 3 &&
                      Sym.Name.compare(Sym.Name.size() - 3, 3, ".kd") == 0;
        Obj->Symbols.push_back(std::make_unique<FakeSymbol>(FakeSymbol{
            Sym.Name,
            Kernel ? HSA_SYMBOL_KIND_KERNEL : HSA_SYMBOL_KIND_VARIABLE,
            reinterpret_cast<uint64_t>(Obj->Memory.get() + Sym.Offset),
            Sym.Size}));
      }
      Exec->Objects.push_back(std::move(Obj));
    }
  hsa_executable_t Handle{S.NextExecutable};
  S.NextExecutable += 0x10;
  S.Executables[Handle.handle] = std::move(Exec);
  return Handle;
}

unsigned runKernels(hsa_executable_t E, unsigned Index) {
  auto Guard = locked();
  FakeExecutable *Exec = findExecutable(E);
  if (!Exec)
    return 0;
  unsigned Filled = 0;
  for (auto &Obj : Exec->Objects)
    for (auto &Sym : Obj->Symbols) {
      if (Sym->Name != "__hotswap_counters")
        continue;
      auto *Area = reinterpret_cast<uint8_t *>(Sym->Address);
      for (uint64_t I = 0; I < Sym->Size / 8; ++I) {
        uint64_t V = I * 3 + 1 + 1000ull * Index + 100ull * Obj->GpuIndex;
        for (unsigned B = 0; B < 8; ++B) // little-endian, as the GPU writes
          Area[I * 8 + B] = static_cast<uint8_t>(V >> (8 * B));
      }
      ++Filled;
    }
  return Filled;
}

const char *statusName(hsa_status_t Status) {
  switch (Status) {
  case HSA_STATUS_SUCCESS:
    return "HSA_STATUS_SUCCESS";
  case HSA_STATUS_INFO_BREAK:
    return "HSA_STATUS_INFO_BREAK";
  case HSA_STATUS_ERROR_INVALID_ARGUMENT:
    return "HSA_STATUS_ERROR_INVALID_ARGUMENT";
  case HSA_STATUS_ERROR_OUT_OF_RESOURCES:
    return "HSA_STATUS_ERROR_OUT_OF_RESOURCES";
  case HSA_STATUS_ERROR_INVALID_AGENT:
    return "HSA_STATUS_ERROR_INVALID_AGENT";
  case HSA_STATUS_ERROR_INVALID_EXECUTABLE:
    return "HSA_STATUS_ERROR_INVALID_EXECUTABLE";
  case HSA_STATUS_ERROR_FROZEN_EXECUTABLE:
    return "HSA_STATUS_ERROR_FROZEN_EXECUTABLE";
  case HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL:
    return "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL";
  default:
    return "HSA_STATUS_ERROR";
  }
}

} // namespace hotswap_standin
