//===- hotswap/Passes/RecordLines.h - Records as JSON lines -----*- C++ -*-===//
//
// What a pass records about what it did, for verify, print<...> and later
// runs, when one JSON object per line says it best: `.hotswap.swaps`
// (SwapRecord.h), `.hotswap.clones` (CloneRecord.h) and
// `.hotswap.counters.map` (CounterRecord.h). Each is a record note of its
// own type (RecordNotes.h) in a section that is not loaded, whose
// descriptor is (little-endian):
//
//   u32 format version (1)
//   the lines: UTF-8 JSON objects, each followed by '\n'
//   u8[32] SHA-256 of the descriptor's bytes before this field
//
// Addresses and sizes are "0x..." strings (exact for any 64-bit value).
// `llvm-readelf -p SECTION` shows the lines.
//
// Outputs of earlier versions (before the record family) hold the lines
// alone, in an SHT_PROGBITS section of the same name, without a digest:
// those are read as they are, and a run that adds lines to one writes the
// note, with the old lines first, as they were.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_RECORDLINES_H
#define HOTSWAP_PASSES_RECORDLINES_H

#include "hotswap/Object/Object.h"
#include "hotswap/Passes/RecordNotes.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hotswap {

/// One kind of record lines: its section, its note type, and what the
/// records are (for errors).
struct RecordKind {
  llvm::StringLiteral Section;
  RecordNoteType Type;
  llvm::StringLiteral What;
};

/// The format version of record lines this tool writes and reads.
inline constexpr uint32_t RecordLinesVersion = 1;

/// The value of "0x..." member \p Key of \p O.
llvm::Expected<uint64_t> hexMember(const llvm::json::Object &O,
                                   llvm::StringRef Key);
/// The value of string member \p Key of \p O.
llvm::Expected<std::string> stringMember(const llvm::json::Object &O,
                                         llvm::StringRef Key);

/// The text of the lines of \p K's section of \p Obj (empty without the
/// section): a note's after its digest is checked, a section of an
/// earlier version as it is. Errors name the section: a note that is not
/// a record of \p K's type, of another version, or whose digest does not
/// match ("changed after it was written").
llvm::Expected<llvm::StringRef> recordLinesText(const Object &Obj,
                                                const RecordKind &K);

/// The lines of \p K's section of \p Obj, each parsed as a JSON object
/// (none without the section). Errors name the section and the line.
llvm::Expected<std::vector<llvm::json::Object>>
readRecordLines(const Object &Obj, const RecordKind &K);

/// The lines of \p K's section of \p Obj, each parsed into a record by
/// \p Parse (none without the section). An error names the section and the
/// line.
template <typename RecordT>
llvm::Expected<std::vector<RecordT>> readRecords(
    const Object &Obj, const RecordKind &K,
    llvm::function_ref<llvm::Expected<RecordT>(const llvm::json::Object &)>
        Parse) {
  llvm::Expected<std::vector<llvm::json::Object>> Lines =
      readRecordLines(Obj, K);
  if (!Lines)
    return Lines.takeError();
  std::vector<RecordT> Out;
  for (size_t I = 0; I != Lines->size(); ++I) {
    llvm::Expected<RecordT> R = Parse((*Lines)[I]);
    if (!R)
      return prefixError("section '" + K.Section + "': line " +
                             llvm::Twine(I + 1),
                         R.takeError());
    Out.push_back(std::move(*R));
  }
  return Out;
}

/// readRecordLines one line at a time: \p Each gets each line's object and
/// its index (from 0), and may fail (its error is named by section and
/// line like a parse error). For records of one line per block, whose
/// parsed objects all at once take far more memory than their text.
llvm::Error forEachRecordLine(
    const Object &Obj, const RecordKind &K,
    llvm::function_ref<llvm::Error(llvm::json::Object &&, size_t)> Each);

/// Appends \p Lines (JSON objects) to \p K's section, making it when there
/// is none. Fails when a section of that name is loaded, has no contents,
/// is neither a note nor lines of an earlier version, or does not read as
/// recordLinesText reads it.
llvm::Error appendRecordLines(Object &Obj, const RecordKind &K,
                              llvm::ArrayRef<llvm::json::Object> Lines);
/// The same with \p Count lines that \p Write writes one at a time, each
/// as one JSON value (an object whose keys come in sorted order, as
/// llvm::json prints a json::Object: lines read the same either way).
llvm::Error appendRecordLines(
    Object &Obj, const RecordKind &K, size_t Count,
    llvm::function_ref<void(llvm::json::OStream &, size_t)> Write);
/// The same with \p Count lines that \p Line makes one at a time.
llvm::Error
appendRecordLines(Object &Obj, const RecordKind &K, size_t Count,
                  llvm::function_ref<llvm::json::Object(size_t)> Line);

/// The section contents of a record note of \p K holding \p Text (lines,
/// each followed by '\n'): header, owner, version, the lines, their digest,
/// padding. Fails when it would not fit a note (4 GiB).
llvm::Expected<std::vector<uint8_t>> encodeRecordLines(const RecordKind &K,
                                                       llvm::StringRef Text);

} // namespace hotswap

#endif // HOTSWAP_PASSES_RECORDLINES_H
