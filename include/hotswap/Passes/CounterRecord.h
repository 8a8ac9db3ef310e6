//===- hotswap/Passes/CounterRecord.h - What instrument counts --*- C++ -*-===//
//
// instrument (Instrument.h) leaves, besides the kernels' copies with their
// counter code:
//
//   * `__hotswap_counters`, an STT_OBJECT GLOBAL DEFAULT symbol of .symtab
//     (where the HSA loader looks variables up) over the counter area: one
//     64-bit counter per counted block, zero-filled (a NOBITS section,
//     `.hotswap.counters`, at the end of the run's appended segment: no file
//     bytes);
//   * the counter map, one line per counter in `.hotswap.counters.map`
//     (RecordLines.h): its index, the kernel, what it counts ("entry": the
//     kernel's first block, so the kernel's dispatch waves; "block"), in
//     what unit ("wave", or "lane": the active lanes of each wave), the
//     block's offset in the kernel's original code, and the address of its
//     counter code in the copy. A reader of a dump of the area needs nothing
//     else to say which count is which.
//
// verifyCounters() is verify's part: every entry's counter code, decoded
// from the object's bytes, adds 1 to its own counter and nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_COUNTERRECORD_H
#define HOTSWAP_PASSES_COUNTERRECORD_H

#include "hotswap/Object/Object.h"
#include "hotswap/Passes/RecordLines.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

inline constexpr llvm::StringLiteral CounterMapSectionName =
    ".hotswap.counters.map";
/// Its record lines (RecordLines.h).
inline constexpr RecordKind CounterMapRecords{
    CounterMapSectionName, RecordNoteType::Counters, "counters"};
inline constexpr llvm::StringLiteral CounterSymbolName = "__hotswap_counters";
/// Each counter is a little-endian 64-bit count.
inline constexpr uint64_t CounterBytes = 8;

struct CounterEntry {
  uint64_t Index = 0;
  std::string Kernel;
  /// "entry", "block" or "edge" (the fall-through edge of a conditional
  /// branch: Offset is the branch's block, To the block it falls into).
  std::string Kind;
  /// What is counted: "wave" (waves that run the block) or "lane" (their
  /// active lanes).
  std::string Unit;
  /// The counted block's offset in the kernel's original code.
  uint64_t Offset = 0;
  /// The address of the counter code in the kernel's copy.
  uint64_t Code = 0;
  /// An edge's target block (its offset in the original code).
  std::optional<uint64_t> To;
};

/// The map of \p Obj, in index order (none without the section). Fails,
/// with the line, on a line that is not an entry, and on indices out of
/// order.
llvm::Expected<std::vector<CounterEntry>> readCounterMap(const Object &Obj);

/// Appends \p Entries to `.hotswap.counters.map`, creating it when needed.
llvm::Error appendCounterMap(Object &Obj, llvm::ArrayRef<CounterEntry> Entries);

} // namespace hotswap

#endif // HOTSWAP_PASSES_COUNTERRECORD_H
