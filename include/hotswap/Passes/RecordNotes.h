//===- hotswap/Passes/RecordNotes.h - The records' one note family -*- C++ -*-//
//
// Every record the tool leaves in an output, saying what it did for verify,
// print<...>, restore and later runs, is one ELF note in a section of its
// own that is not loaded (SHT_NOTE, no flags, in no PT_NOTE): owner
// "HOTSWAP", one type per kind of record, a descriptor that starts with a
// 32-bit format version and carries the SHA-256 of its fields, so a record
// changed after it was written is told from one that was not.
//
//   type 1  .hotswap.provenance     how to give back the input, binary
//                                   (ProvenanceRecord.h)
//   type 2  .hotswap.swaps          swapped kernels (SwapRecord.h)
//   type 3  .hotswap.clones         cloned kernels (CloneRecord.h)
//   type 4  .hotswap.counters.map   counter index -> block (CounterRecord.h)
//   type 5  .hotswap.patches        sites patched in place (PatchRecord.h)
//
// Types 2 to 5 hold JSON lines (RecordLines.h). This module writes and
// checks what they all share: the header, the owner and the type.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_RECORDNOTES_H
#define HOTSWAP_PASSES_RECORDNOTES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace hotswap {

/// The owner of every record note.
inline constexpr llvm::StringLiteral RecordNoteOwner = "HOTSWAP";

enum class RecordNoteType : uint32_t {
  Provenance = 1,
  Swaps = 2,
  Clones = 3,
  Counters = 4,
  Patches = 5,
};

/// Where a record note's descriptor starts in its section: after the note
/// header (12 bytes) and the owner, "HOTSWAP\0".
inline constexpr uint64_t RecordNoteDescAt = 20;

/// Appends the header and the owner of a record note of type \p T whose
/// descriptor has \p DescSize bytes (RecordNoteDescAt bytes).
void putRecordNoteHead(std::vector<uint8_t> &Out, RecordNoteType T,
                       uint32_t DescSize);

/// The descriptor of the one note \p SectionBytes holds. Fails when the
/// notes do not parse, when there is not exactly one, or when it is not a
/// record note of type \p T.
llvm::Expected<llvm::ArrayRef<uint8_t>>
recordNoteDesc(llvm::ArrayRef<uint8_t> SectionBytes, RecordNoteType T);

} // namespace hotswap

#endif // HOTSWAP_PASSES_RECORDNOTES_H
