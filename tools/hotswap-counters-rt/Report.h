//===- Report.h - The tool's one way to say something went wrong -*- C++ -*-=//
//
// A tools library runs inside someone else's program: it never stops it.
// Everything that goes wrong (a copy that fails, a file that cannot be
// written, a runtime too old) is one line on stderr, prefixed
// "hotswap-counters: ", and the program goes on.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_COUNTERS_RT_REPORT_H
#define HOTSWAP_COUNTERS_RT_REPORT_H

namespace hotswap_counters {

/// Writes "hotswap-counters: <printf-formatted message>\n" to stderr in one
/// write, so that lines of threads that report at once do not interleave.
void report(const char *Format, ...) __attribute__((format(printf, 1, 2)));

} // namespace hotswap_counters

#endif // HOTSWAP_COUNTERS_RT_REPORT_H
