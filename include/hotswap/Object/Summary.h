//===- hotswap/Object/Summary.h - Readable change dumps ---------*- C++ -*-===//
//
// A snapshot of what a user cares about in an object (sections, segments,
// symbols, section bytes, layout properties the writer will honour) and a
// readable diff between a snapshot and the current object: the output of
// -print-after / -print-after-all.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_SUMMARY_H
#define HOTSWAP_OBJECT_SUMMARY_H

#include "hotswap/Object/Object.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace hotswap {

class ObjectSnapshot {
public:
  static ObjectSnapshot take(const Object &Obj);
  /// Prints what differs between this snapshot and \p Now. Prints
  /// "no changes" when nothing does.
  void printDiff(const Object &Now, llvm::raw_ostream &OS) const;

private:
  struct Sec {
    std::string Name;
    uint32_t Type;
    uint64_t Addr, Size;
    std::vector<uint8_t> Bytes; // only for allocated sections (edits in place)
  };
  struct Seg {
    uint32_t Type, Flags;
    uint64_t VAddr, MemSize;
  };
  std::vector<Sec> Sections;
  std::vector<Seg> Segments;
  std::map<std::string, std::vector<std::string>> Symbols; // table -> names
  /// Layout properties of the model (Object::requestSectionHeadersLast()).
  bool SectionHeadersLast = false;
};

} // namespace hotswap

#endif // HOTSWAP_OBJECT_SUMMARY_H
