//===- hotswap/Passes/RecordLines.h - Records as JSON lines -----*- C++ -*-===//
//
// What a pass records about what it did, for verify, print<kernels> and
// later runs: one JSON object per line in a section of its own that is not
// loaded (SHT_PROGBITS, no flags), so `llvm-readelf -p SECTION` shows it.
// Addresses and sizes are "0x..." strings (exact for any 64-bit value).
// `.hotswap.swaps` (SwapRecord.h) and `.hotswap.clones` (CloneRecord.h) are
// such sections.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_RECORDLINES_H
#define HOTSWAP_PASSES_RECORDLINES_H

#include "hotswap/Object/Object.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hotswap {

/// The value of "0x..." member \p Key of \p O.
llvm::Expected<uint64_t> hexMember(const llvm::json::Object &O,
                                   llvm::StringRef Key);
/// The value of string member \p Key of \p O.
llvm::Expected<std::string> stringMember(const llvm::json::Object &O,
                                         llvm::StringRef Key);

/// The lines of section \p Name of \p Obj, each parsed as a JSON object
/// (none without the section). Errors name the section and the line.
llvm::Expected<std::vector<llvm::json::Object>>
readRecordLines(const Object &Obj, llvm::StringRef Name);

/// readRecordLines one line at a time: \p Each gets each line's object and
/// its index (from 0), and may fail (its error is named by section and
/// line like a parse error). For records of one line per block, whose
/// parsed objects all at once take far more memory than their text.
llvm::Error forEachRecordLine(
    const Object &Obj, llvm::StringRef Name,
    llvm::function_ref<llvm::Error(llvm::json::Object &&, size_t)> Each);

/// Appends \p Lines (JSON objects) to section \p Name, making it when there
/// is none. \p What says what the records are, for the error when a
/// section of that name is loaded or has no contents.
llvm::Error appendRecordLines(Object &Obj, llvm::StringRef Name,
                              llvm::ArrayRef<llvm::json::Object> Lines,
                              llvm::StringRef What);
/// The same with \p Count lines that \p Line makes one at a time.
llvm::Error
appendRecordLines(Object &Obj, llvm::StringRef Name, size_t Count,
                  llvm::function_ref<llvm::json::Object(size_t)> Line,
                  llvm::StringRef What);

} // namespace hotswap

#endif // HOTSWAP_PASSES_RECORDLINES_H
