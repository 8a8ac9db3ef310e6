//===- CodeObject.h - What the stand-in loads of a code object --*- C++ -*-===//
//
// The few facts of an AMDGPU code object the stand-in HSA runtime needs to
// "load" it as ROCr's loader would: the extent of its PT_LOAD segments
// (one allocation, as the loader makes) and its defined global STT_OBJECT
// symbols of .symtab, where the loader finds kernel descriptors (`NAME.kd`)
// and variables such as `__hotswap_counters`.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_HSA_STANDIN_CODEOBJECT_H
#define HOTSWAP_HSA_STANDIN_CODEOBJECT_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hotswap_standin {

struct CodeObjectSymbol {
  std::string Name;
  /// Offset from the lowest PT_LOAD address.
  uint64_t Offset = 0;
  uint64_t Size = 0;
};

struct CodeObject {
  /// Bytes from the lowest PT_LOAD address to the end of the highest
  /// segment's memory image.
  uint64_t LoadSize = 0;
  std::vector<CodeObjectSymbol> Symbols;
};

/// Reads \p Path; fails on anything that is not a 64-bit little-endian ELF
/// with PT_LOAD segments, or on a symbol outside them.
llvm::Expected<CodeObject> readCodeObject(const std::string &Path);

} // namespace hotswap_standin

#endif // HOTSWAP_HSA_STANDIN_CODEOBJECT_H
