//===- tools/hotswap-opt/Progress.h - One updating line on a terminal -*- C++
//-*-===//
//
// Long runs show how far they are on standard error when it is a terminal
// (never on a pipe or a file), on one line redrawn in place:
//
//   12/40 inputs, 301/777 code objects, 512.3/1250.0 MB, 210.4 MB/s, 0:03 left
//
// inputs done of all (when there are several), code objects of containers
// done of those found so far, bytes done of all the inputs' bytes, the rate,
// and the time left at that rate. Shown once the work has taken a moment
// (half a second; -progress-after changes it); erased before anything else
// is printed.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_TOOLS_HOTSWAPOPT_PROGRESS_H
#define HOTSWAP_TOOLS_HOTSWAPOPT_PROGRESS_H

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace hotswap {

/// Not thread-safe: every call is made with the caller's lock held.
class Progress {
public:
  /// \p Total inputs of \p TotalBytes bytes; shown after \p AfterMs
  /// milliseconds of work, on \p OS when \p Enabled (standard error is a
  /// terminal).
  Progress(size_t Total, uint64_t TotalBytes, unsigned AfterMs,
           llvm::raw_ostream &OS, bool Enabled);
  /// An input is done; \p Bytes is its size, \p InFlight what of it was
  /// already counted by codeObjectDone.
  void inputDone(uint64_t Bytes, uint64_t InFlight);
  /// A container's code objects are known.
  void codeObjectsFound(unsigned Count);
  /// A code object of a container is done.
  void codeObjectDone(uint64_t Bytes);
  /// Erases the line, if shown.
  void clear();

private:
  void show(bool Final);
  size_t Total, Done = 0, CodeObjects = 0, CodeObjectsFound = 0;
  uint64_t Bytes = 0, TotalBytes;
  unsigned AfterMs;
  llvm::raw_ostream &OS;
  bool Enabled, Shown = false;
  std::chrono::steady_clock::time_point Start;
};

} // namespace hotswap

#endif // HOTSWAP_TOOLS_HOTSWAPOPT_PROGRESS_H
