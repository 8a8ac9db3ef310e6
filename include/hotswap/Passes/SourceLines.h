//===- hotswap/Passes/SourceLines.h - Source lines of code addresses -*- C++
//-*-===//
//
// The source file and line of an address of an object's code, from its
// DWARF line tables (an object built with -g), as print<counters> shows
// them beside each block. LLVM's DWARF reader does the reading, over the
// object's own sections (.debug_info, .debug_abbrev, .debug_line,
// .debug_str, .debug_line_str, .debug_str_offsets, .debug_addr, ranges):
// no second parse of the file. A linked code object has no relocations
// left in them. An object without line tables gives no lines.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_SOURCELINES_H
#define HOTSWAP_PASSES_SOURCELINES_H

#include "hotswap/Object/Object.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace llvm {
class DWARFContext;
} // namespace llvm

namespace hotswap {

class SourceLines {
public:
  /// The line tables of \p Obj (none: every lookup gives nothing).
  explicit SourceLines(const Object &Obj);
  ~SourceLines();

  /// "file:line" of the first code in [\p Begin, \p End) that a line table
  /// gives a line (line 0, code of no line, is passed over).
  std::optional<std::string> first(uint64_t Begin, uint64_t End) const;
  bool empty() const { return !Ctx; }

private:
  std::unique_ptr<llvm::DWARFContext> Ctx;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_SOURCELINES_H
