//===- hotswap/Passes/CloneRecord.h - What clone-kernels did ----*- C++ -*-===//
//
// clone-kernels (CloneKernels.h) leaves two traces in a code object besides
// the copies it appends and the descriptors it repoints:
//
//   * `<kernel>.clone`, an STT_FUNC GLOBAL DEFAULT symbol of .symtab at the
//     copy the kernel now runs, with its size (debuggers name the dispatch
//     by it);
//   * one line per cloned kernel in `.hotswap.clones` (RecordLines.h): which
//     kernel, its original code and size, the copy's address and size, the
//     offset map (from each original offset listed on, the copy's offset is
//     the listed one plus the same distance, up to the next) and the ranges
//     of code inserted into the copy. A reader maps an original block
//     offset to the copy with it, and back.
//
// verifyClones() is verify's part for cloned kernels: for each kernel that
// runs the copy of its last record, the proof of code::proveRelocation
// (made from the bytes, not from the record), the record's offset map
// equal to what the proof found, and, for every inserted range (code
// patch-insns put there), the checks of code::checkBody against the seam
// before the original instruction it precedes or replaces
// (code::siteRegisters, from the original's liveness and counters).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_CLONERECORD_H
#define HOTSWAP_PASSES_CLONERECORD_H

#include "hotswap/Object/Object.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/RecordLines.h"
#include "hotswap/Passes/VerifyChecks.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hotswap {

inline constexpr llvm::StringLiteral CloneRecordSectionName = ".hotswap.clones";
/// Their record lines (RecordLines.h).
inline constexpr RecordKind CloneRecords{
    CloneRecordSectionName, RecordNoteType::Clones, "cloned kernels"};
/// `<kernel>.clone`: the symbol at a cloned kernel's copy.
inline constexpr llvm::StringLiteral CloneSymbolSuffix = ".clone";

struct CloneRecord {
  std::string Kernel;
  /// The original code and the copy.
  uint64_t Code = 0, Size = 0;
  uint64_t Clone = 0, CloneSize = 0;
  /// (original offset, copy offset) where the distance between them
  /// changes, from offset 0 on.
  std::vector<std::pair<uint64_t, uint64_t>> Map;
  /// Copy offsets [first, second) of inserted code.
  std::vector<std::pair<uint64_t, uint64_t>> Inserted;
  /// Original offsets of the instructions replaced by inserted code (the
  /// range where each would be), sorted. Absent in the line when empty.
  std::vector<uint64_t> Replaced;
  /// Copy offsets [first, second) of the relaxations of branches out of
  /// reach (LongJump.h), each right after its branch. Absent when empty.
  std::vector<std::pair<uint64_t, uint64_t>> Relaxed;
  /// Copy offsets of code that runs only on the fall-through way into an
  /// instruction (an edge's counter code). Absent when empty.
  std::vector<std::pair<uint64_t, uint64_t>> FallThrough;
  /// Copy offset where inserted code starts -> the assembly the pass made
  /// it from (patch-insns' bodies with their guards), which verify
  /// assembles again. Absent when empty (and in records before it).
  std::vector<std::pair<uint64_t, std::string>> Asm;

  /// The copy's offset of original offset \p Off (an instruction start),
  /// by the map; nullopt outside the original.
  std::optional<uint64_t> cloneOffset(uint64_t Off) const;
};

/// The records of \p Obj, in order (none without the section). Fails, with
/// the line, on a line that is not such a record.
llvm::Expected<std::vector<CloneRecord>> readCloneRecords(const Object &Obj);

/// Appends \p Records to `.hotswap.clones`, creating it when needed.
llvm::Error appendCloneRecords(Object &Obj,
                               llvm::ArrayRef<CloneRecord> Records);

/// The record of the copy \p K runs now (the last for K whose copy is K's
/// code entry), or null.
const CloneRecord *currentClone(llvm::ArrayRef<CloneRecord> Records,
                                const KernelInfo &K);

/// What is wrong with the cloned kernels of \p Obj, one line each.
void verifyClones(const Object &Obj, const KernelsAnalysis::Result &R,
                  VerifyProblems &Problems);

} // namespace hotswap

#endif // HOTSWAP_PASSES_CLONERECORD_H
