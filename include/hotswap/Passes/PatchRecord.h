//===- hotswap/Passes/PatchRecord.h - Sites patched in place ----*- C++ -*-===//
//
// patch-insns with place=site (PatchInsns.h) changes the bytes of a
// kernel's own code: each site's instruction becomes a branch to a body in
// the run's appended code (Code/InPlace.h). One line per site in
// `.hotswap.patches` (RecordLines.h) says which kernel, where its code
// is, the site's offset and original bytes, where the body is, the range
// of code inserted in it and the assembly that code was made from.
//
// verifyPatches() is verify's part, from the bytes: each site's slot is a
// branch to its body; the kernel's code with every site's original bytes
// put back decodes, and at each site the seam's registers and counters are
// the original's (code::siteRegisters); the body is the layout of
// Code/InPlace.h around its inserted code, which passes code::checkBody
// at that seam, assembles again from the record's assembly, and, spliced
// into the original (code::relocate, as a copy would hold it), makes no
// hazard the original has not. restore puts the original bytes back
// through the provenance record, as it does every edit.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PATCHRECORD_H
#define HOTSWAP_PASSES_PATCHRECORD_H

#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Object/Object.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/RecordLines.h"
#include "hotswap/Passes/VerifyChecks.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hotswap {

inline constexpr llvm::StringLiteral PatchRecordSectionName =
    ".hotswap.patches";
inline constexpr RecordKind PatchRecords{
    PatchRecordSectionName, RecordNoteType::Patches, "sites patched in place"};

struct PatchRecord {
  std::string Kernel;
  /// The kernel's code (it runs it, not a copy) and its size.
  uint64_t Code = 0, Size = 0;
  /// The site's offset in the code, and its instruction's original bytes.
  uint64_t Site = 0;
  std::vector<uint8_t> Orig;
  code::SiteWhere Where = code::SiteWhere::Before;
  /// The body's address and size.
  uint64_t Body = 0, BodySize = 0;
  /// Body offsets [InsertBegin, InsertEnd) of the inserted code.
  uint64_t InsertBegin = 0, InsertEnd = 0;
  /// The gateway the site branches to (a long jump to the body in padding
  /// between functions; the body then returns with one), and its size; 0:
  /// the site branches to the body.
  uint64_t Gateway = 0, GatewaySize = 0;
  /// The assembly the inserted code was made from, one instruction (or
  /// .long) per line.
  std::string Asm;
};

/// The records of \p Obj, in order (none without the section). Fails, with
/// the line, on a line that is not such a record.
llvm::Expected<std::vector<PatchRecord>> readPatchRecords(const Object &Obj);

/// Appends \p Records to `.hotswap.patches`, creating it when needed.
llvm::Error appendPatchRecords(Object &Obj,
                               llvm::ArrayRef<PatchRecord> Records);

/// The names of the kernels with sites patched in place.
llvm::Expected<llvm::StringSet<>> patchedKernels(const Object &Obj);

/// What is wrong with the sites patched in place of \p Obj, one line each.
void verifyPatches(const Object &Obj, const KernelsAnalysis::Result &R,
                   VerifyProblems &Problems);

} // namespace hotswap

#endif // HOTSWAP_PASSES_PATCHRECORD_H
