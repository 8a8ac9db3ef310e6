//===- hotswap/Code/MetadataCommit.h - Writing metadata back -----*- C++
//-*-===//
//
// The one way a pass writes changed metadata values back into the object.
// Usually in place: the note section rewritten whole with every pending
// change of the editor (amdgpu::CodeObjectMetadata::setField), the same
// size. When a value outgrows its encoding (`.vgpr_count` 70 -> 177 where
// the note has no padding left) or a key must be added, the note section
// is written anew, grown,
// as a region of the run's appended segment (CodePurpose::Metadata,
// `.hotswap.note`, SHT_NOTE), and the PT_NOTE that led to the old section
// is led to the new one (a new PT_NOTE when none did). The old section's
// bytes stay where they are: nothing loaded moves. The runtimes take the
// first PT_NOTE holding a metadata note (COMGR, measured; the HIP runtime
// through it), and so does the kernels analysis.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_METADATACOMMIT_H
#define HOTSWAP_CODE_METADATACOMMIT_H

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/Object/Object.h"

#include "llvm/Support/Error.h"

namespace hotswap {
namespace code {

/// How commitMetadata wrote the changes.
enum class MetadataCommit {
  Unchanged, // no pending change
  InPlace,   // over the old bytes, the same size
  NewNote,   // a note section written anew (or grown again in this run)
};

/// Writes \p MD's pending changes. \p NoteSection is the section that holds
/// the metadata now: the one \p MD was parsed from, or the note this run
/// already wrote anew for it; a commit that writes a note anew sets it to
/// the new section. Fails with amdgpu::NoteGrowthError only when the note
/// cannot be written anew either (the PT_NOTE leading to it holds other
/// sections too); nothing changes then.
llvm::Expected<MetadataCommit>
commitMetadata(const amdgpu::CodeObjectMetadata &MD, Object &Obj,
               Section *&NoteSection);

/// Whether \p S is a metadata note written anew in this run.
bool isNewNote(const Section &S);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_METADATACOMMIT_H
