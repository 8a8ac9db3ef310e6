//===- FakeRuntime.h - A stand-in for ROCr over host memory -----*- C++ -*-===//
//
// Just the HSA entry points libhotswap-counters calls, and the ones the
// stand-in "application" calls to load a code object, implemented over
// host memory, in a real HsaApiTable (hsa_api_trace.h): agents (one CPU,
// then GPUs), executables holding one loaded code object per GPU agent
// (an allocation of the object's PT_LOAD extent, zero-filled), their
// symbols (kernel descriptors and variables), hsa_memory_copy (which, like
// the runtime, refuses memory it does not know: a copy from a destroyed
// executable fails), and ROCr's loader extension 1.01 (loaded code
// objects: agent, load base and size, URI). Every other entry of the table
// is null.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_HSA_STANDIN_FAKERUNTIME_H
#define HOTSWAP_HSA_STANDIN_FAKERUNTIME_H

#include "CodeObject.h"

#include "hsa.h"
#include "hsa_api_trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hotswap_standin {

struct FakeOptions {
  /// GPU agents after the CPU agent.
  unsigned Gpus = 1;
  /// Their HSA_AGENT_INFO_NAME.
  std::string GpuName = "gfx90a";
  /// hsa_memory_copy fails.
  bool FailCopy = false;
  /// The loader extension is not offered.
  bool NoLoader = false;
  /// The core table's version.minor_id (its size), as an older runtime
  /// would give; 0 for this header's size.
  uint32_t CoreTableSize = 0;
};

/// The API table ROCr would hand its tools: versions set like ROCr's
/// (minor_id = size), the stand-in's entry points in the core table.
struct FakeTables {
  HsaApiTable Root{};
  CoreApiTable Core{};
  AmdExtTable AmdExt{};
  FinalizerExtTable FinalizerExt{};
  ImageExtTable ImageExt{};
};

/// Sets up the agents and fills \p Tables.
void initFakeRuntime(const FakeOptions &Options, FakeTables &Tables);

struct CodeObjectFile {
  CodeObject Object;
  /// Where it was loaded from, as the loader extension names it.
  std::string Uri;
};

/// The application's part: an executable with each of \p Files loaded on
/// every GPU agent (not frozen yet).
hsa_executable_t loadExecutable(const std::vector<CodeObjectFile> &Files);

/// Stands in for the kernels of executable \p Executable (the
/// \p Index-th of the run): in each loaded copy, counter i of
/// `__hotswap_counters` on the G-th GPU becomes i*3+1 + 1000*Index + 100*G.
/// Returns how many areas it filled.
unsigned runKernels(hsa_executable_t Executable, unsigned Index);

/// The runtime's name for \p Status.
const char *statusName(hsa_status_t Status);

} // namespace hotswap_standin

#endif // HOTSWAP_HSA_STANDIN_FAKERUNTIME_H
