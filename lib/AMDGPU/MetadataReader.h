//===- lib/AMDGPU/MetadataReader.h - One metadata note's contents -*- C++ -*-=//
//
// Private to the AMDGPU layer: reads and validates the descriptor of one
// NT_AMDGPU_METADATA note (CodeObjectMetadata puts the notes of a section
// together).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_AMDGPU_METADATAREADER_H
#define HOTSWAP_LIB_AMDGPU_METADATAREADER_H

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/MsgPackTokenizer.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <optional>
#include <vector>

namespace hotswap {
namespace amdgpu {

/// A kernel as one note describes it: its values, where the value of each
/// field it has is (indexed by KernelField; Size 0 when it has none), and
/// where its map is. Kept this small because a note may describe 100k
/// kernels, all read before the first is used.
struct NoteKernel {
  KernelMD MD;
  std::array<MetadataValueLoc, NumKernelFields> Fields;
  KernelMapLoc Map;
};

struct NoteContents {
  std::optional<MetadataVersion> Version;
  std::optional<std::string> Target;
  std::vector<NoteKernel> Kernels;
};

/// Reads the msgpack descriptor \p Blob of the metadata note at
/// \p NoteOffset. Every problem is reported once the whole blob was read, so
/// a malformed payload ("note at offset 0x0: malformed msgpack payload") wins
/// over a problem of the content; of those, the first in this order:
/// amdhsa.version, amdhsa.target, amdhsa.kernels, then kernel by kernel
/// (".name", ".symbol", the fields, a .symbol seen before in this note).
/// Content messages say "note at offset 0x..: " first only when
/// \p NameNote. No message starts with "metadata: ".
llvm::Expected<NoteContents>
readMetadataNote(llvm::StringRef Blob, uint64_t NoteOffset, bool NameNote);

/// readMetadataNote handing each valid kernel, in order, to \p OnKernel
/// instead of keeping it (NoteContents::Kernels stays empty): a reader that
/// only compares needs no copy of every kernel. Kernels after the first
/// problem are not handed on; the result's error is readMetadataNote's.
llvm::Expected<NoteContents>
readMetadataNote(llvm::StringRef Blob, uint64_t NoteOffset, bool NameNote,
                 llvm::function_ref<void(NoteKernel &&)> OnKernel);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_LIB_AMDGPU_METADATAREADER_H
