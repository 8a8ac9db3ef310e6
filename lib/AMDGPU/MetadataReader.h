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

#include <array>
#include <optional>
#include <vector>

namespace hotswap {
namespace amdgpu {

/// A kernel as one note describes it: its values, where the value of each
/// field it has is (indexed by KernelField; Size 0 when it has none), and
/// where its map is.
struct NoteKernel {
  KernelMD MD;
  std::array<MetadataValueLoc, NumKernelFields> Fields;
  KernelMapLoc Map;
};

/// What a note says besides its kernels (which go to a NoteKernelSink).
struct NoteContents {
  std::optional<MetadataVersion> Version;
  std::optional<std::string> Target;
};

/// Where readMetadataNote hands the kernels of a note as it reads them
/// (a note may describe 100k kernels): a reader that only compares needs no
/// copy of every kernel, and one that keeps them (CodeObjectMetadata) needs
/// no second copy nor a second map of their symbols.
class NoteKernelSink {
public:
  virtual ~NoteKernelSink() = default;
  /// Before the first kernel: amdhsa.kernels promises at most \p Kernels
  /// (bounded by what the rest of the blob can hold).
  virtual void expect(size_t Kernels) {}
  /// A valid kernel, in order. Returns the index in this note of an earlier
  /// kernel with the same .symbol, when the sink knows one (the note's
  /// problem then); the reader itself keeps no map of symbols. Kernels
  /// after the first problem are not handed on.
  virtual std::optional<unsigned> take(NoteKernel &&K) = 0;
  /// The blob's bytes below \p Offset will not be read again.
  virtual void readUpTo(uint64_t Offset) {}
};

/// Reads the msgpack descriptor \p Blob of the metadata note at
/// \p NoteOffset. Every problem is reported once the whole blob was read, so
/// a malformed payload ("note at offset 0x0: malformed msgpack payload") wins
/// over a problem of the content; of those, the first in this order:
/// amdhsa.version, amdhsa.target, amdhsa.kernels, then kernel by kernel
/// (".name", ".symbol", the fields, a .symbol seen before in this note).
/// Content messages say "note at offset 0x..: " first only when
/// \p NameNote. No message starts with "metadata: ". Each valid kernel goes
/// to \p Sink as it is read.
llvm::Expected<NoteContents> readMetadataNote(llvm::StringRef Blob,
                                              uint64_t NoteOffset,
                                              bool NameNote,
                                              NoteKernelSink &Sink);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_LIB_AMDGPU_METADATAREADER_H
