//===- unittests/EmbeddedInputs.h - Inputs/*.yaml compiled in ---*- C++ -*-===//
//
// The obj2yaml texts of unittests/Inputs/*.yaml, compiled in as string
// literals (UnittestInputs.inc, made by EmbedInputs.cmake).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_UNITTESTS_EMBEDDEDINPUTS_H
#define HOTSWAP_UNITTESTS_EMBEDDEDINPUTS_H

namespace hotswap::unittest {

struct EmbeddedInput {
  const char *Name;
  const char *YAML;
};

inline constexpr EmbeddedInput EmbeddedInputs[] = {
#include "UnittestInputs.inc"
};

} // namespace hotswap::unittest

#endif
