//===- Report.cpp - The tool's one way to say something went wrong --------===//

#include "Report.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace hotswap_counters {

void report(const char *Format, ...) {
  static const char Prefix[] = "hotswap-counters: ";
  char Line[1024];
  std::memcpy(Line, Prefix, sizeof(Prefix) - 1);
  size_t Len = sizeof(Prefix) - 1;
  va_list Args;
  va_start(Args, Format);
  int N = std::vsnprintf(Line + Len, sizeof(Line) - Len - 1, Format, Args);
  va_end(Args);
  if (N < 0)
    N = 0;
  // A longer message is cut: still one line.
  Len += std::min<size_t>(static_cast<size_t>(N), sizeof(Line) - Len - 2);
  Line[Len++] = '\n';
  // Nothing to do when stderr is gone: the program must go on.
  ssize_t Ignored = ::write(STDERR_FILENO, Line, Len);
  (void)Ignored;
}

} // namespace hotswap_counters
