//===- DumpFile.h - Where a dump goes and what it says ----------*- C++ -*-===//
//
// A dump is exactly the bytes of one counter area (one little-endian u64
// per counter, in counter map order), so that
// `hotswap-opt -passes='print<counters;dump=FILE>' OBJECT` reads it as it
// is. It goes to
//
//   $HOTSWAP_COUNTERS_DIR/hotswap-counters.<pid>.<n>.bin
//
// (the current directory when the variable is unset or empty), where <n>
// is the area's sequence number in this process (CounterArea::Sequence),
// with a sidecar `hotswap-counters.<pid>.<n>.json`: one JSON line naming
// the dump, the symbol's size, the agent and, when the runtime told, the
// URI of the loaded code object. Both are written to a temporary name and
// renamed, so a file under its final name is always whole; the sidecar
// comes second, so it never names a dump that is not there.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_COUNTERS_RT_DUMPFILE_H
#define HOTSWAP_COUNTERS_RT_DUMPFILE_H

#include "CounterArea.h"

#include <cstdint>
#include <vector>

namespace hotswap_counters {

/// Writes the dump of \p Area, whose bytes are \p Bytes, and its sidecar;
/// \p When says what made the dump ("destroy" or "unload"). Failures are
/// reported; nothing is left under a final name then.
void writeDump(const CounterArea &Area, const std::vector<uint8_t> &Bytes,
               const char *When);

} // namespace hotswap_counters

#endif // HOTSWAP_COUNTERS_RT_DUMPFILE_H
