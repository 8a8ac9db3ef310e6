//===- hotswap/Code/MetadataCommit.h - Writing metadata back -----*- C++
//-*-===//
//
// The one way a pass writes changed metadata values back into the object:
// the note section rewritten whole with every pending change of the editor
// (amdgpu::CodeObjectMetadata::setField), the same size, in place. A value
// that does not fit fails with amdgpu::NoteGrowthError (callers may say
// which kernel and why); nothing changes then.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_METADATACOMMIT_H
#define HOTSWAP_CODE_METADATACOMMIT_H

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/Object/Object.h"

#include "llvm/Support/Error.h"

namespace hotswap {
namespace code {

/// Writes \p MD's pending changes into \p NoteSection (the section it was
/// parsed from). Does nothing when there are none.
llvm::Error commitMetadata(const amdgpu::CodeObjectMetadata &MD,
                           Section &NoteSection);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_METADATACOMMIT_H
