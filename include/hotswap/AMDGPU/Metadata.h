//===- hotswap/AMDGPU/Metadata.h - AMDGPU metadata note ---------*- C++ -*-===//
//
// The NT_AMDGPU_METADATA note (owner "AMDGPU", type 32) of a code object v3+:
// a MessagePack map with amdhsa.version, amdhsa.target and amdhsa.kernels.
// Pure bytes-in/bytes-out over the note section's contents; independent of
// the ELF model.
//
// Reading validates the structure and the types of the keys the tool uses.
// Writing is a batch: setters record changes, rewrite() produces the new
// note-section bytes with every change applied. The note section is loaded
// memory, so rewrite() keeps its size whenever any same-size encoding exists
// (see rewrite() for the exact, deterministic strategy) and otherwise says
// that the note must be relocated. It never silently changes the size.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_METADATA_H
#define HOTSWAP_AMDGPU_METADATA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hotswap {
namespace amdgpu {

/// Note type of the code object v3+ metadata note.
constexpr uint32_t NT_AMDGPU_METADATA = 32;
/// Owner name of AMDGPU notes.
constexpr llvm::StringLiteral AMDGPUNoteOwner = "AMDGPU";

/// The per-kernel keys this layer reads and may change.
enum class KernelField : unsigned {
  SGPRCount,
  VGPRCount,
  AGPRCount,
  KernargSegmentSize,
  WavefrontSize,
  GroupSegmentFixedSize,
  PrivateSegmentFixedSize,
  MaxFlatWorkgroupSize,
  SGPRSpillCount,
  VGPRSpillCount,
  UsesDynamicStack, // boolean; every other field is an unsigned integer
};
constexpr unsigned NumKernelFields = 11;

/// The msgpack key of a field (".sgpr_count").
llvm::StringRef kernelFieldKey(KernelField F);

struct KernelMD {
  std::string Name;   // .name
  std::string Symbol; // .symbol, the kernel descriptor symbol ("k.kd")
  std::optional<uint64_t> SGPRCount, VGPRCount, AGPRCount, KernargSegmentSize,
      WavefrontSize, GroupSegmentFixedSize, PrivateSegmentFixedSize,
      MaxFlatWorkgroupSize, SGPRSpillCount, VGPRSpillCount;
  std::optional<bool> UsesDynamicStack;
  /// Position in amdhsa.kernels.
  unsigned Index = 0;

  /// The value of an integer field (UsesDynamicStack reads as 0/1).
  std::optional<uint64_t> get(KernelField F) const;
};

struct MetadataVersion {
  uint64_t Major = 0, Minor = 0;
};

/// Result of CodeObjectMetadata::rewrite().
struct NoteRewrite {
  enum class Method {
    Unchanged,   // no pending change: Bytes are the input bytes
    InPlace,     // every value fit its encoding; all other bytes identical
    PaddingSlack, // descriptor grew into its own alignment padding
    Compacted,   // over-wide integers elsewhere were re-encoded smaller
    Relocate,    // no same-size encoding: the note section grows
  };
  /// True when Bytes has the size of the input section. When false, the
  /// caller must move the note section into new loadable memory.
  bool SameSize = true;
  Method How = Method::Unchanged;
  /// The complete new note section.
  std::vector<uint8_t> Bytes;
};

class CodeObjectMetadata {
public:
  /// Parses and validates a note section. A section without an AMDGPU
  /// metadata note is valid (hasMetadata() is then false). The bytes are
  /// copied.
  static llvm::Expected<CodeObjectMetadata>
  parse(llvm::ArrayRef<uint8_t> NoteSectionBytes);

  CodeObjectMetadata(CodeObjectMetadata &&);
  CodeObjectMetadata &operator=(CodeObjectMetadata &&);
  ~CodeObjectMetadata();

  bool hasMetadata() const { return HasNote; }
  /// amdhsa.version, when present.
  std::optional<MetadataVersion> version() const { return Version; }
  /// amdhsa.target ("amdgcn-amd-amdhsa--gfx90a"), empty when absent.
  llvm::StringRef target() const { return Target; }
  /// Kernels in amdhsa.kernels order. Values include pending changes.
  llvm::ArrayRef<KernelMD> kernels() const { return Kernels; }
  /// The kernel whose .symbol is \p Symbol, or null.
  const KernelMD *findBySymbol(llvm::StringRef Symbol) const;

  /// Offset of the metadata note within the section (valid if hasMetadata()).
  uint64_t noteOffset() const { return NoteOffset; }

  /// Records a change of \p F of the kernel \p Symbol. Setting a field to the
  /// value it already has records nothing; setting an absent field adds the
  /// key. Fails on an unknown symbol, on a missing note, and on a value other
  /// than 0/1 for UsesDynamicStack.
  llvm::Error setField(llvm::StringRef Symbol, KernelField F, uint64_t Value);
  llvm::Error setSGPRCount(llvm::StringRef Symbol, uint64_t V) {
    return setField(Symbol, KernelField::SGPRCount, V);
  }
  llvm::Error setVGPRCount(llvm::StringRef Symbol, uint64_t V) {
    return setField(Symbol, KernelField::VGPRCount, V);
  }
  llvm::Error setAGPRCount(llvm::StringRef Symbol, uint64_t V) {
    return setField(Symbol, KernelField::AGPRCount, V);
  }
  llvm::Error setPrivateSegmentFixedSize(llvm::StringRef Symbol, uint64_t V) {
    return setField(Symbol, KernelField::PrivateSegmentFixedSize, V);
  }
  llvm::Error setUsesDynamicStack(llvm::StringRef Symbol, bool V) {
    return setField(Symbol, KernelField::UsesDynamicStack, V);
  }
  bool hasPendingChanges() const { return NumPending != 0; }

  /// Produces the new note section with every pending change applied, then
  /// checks it with verifyRewrite() before returning. Does not modify
  /// this object. Strategy, first that succeeds:
  ///  1. InPlace: each new integer is written over the old one with the old
  ///     encoding width (a small value in a wide form is legal msgpack), so
  ///     no other byte changes.
  ///  2. PaddingSlack: values that need a wider form get the smallest one;
  ///     the descriptor grows by G bytes. If G fits the descriptor's 4-byte
  ///     alignment padding, n_descsz grows and the note keeps its size.
  ///  3. Compacted: otherwise integers elsewhere in the document that use a
  ///     wider-than-needed encoding are re-encoded smaller (same signedness
  ///     family), in document order, until the growth fits the padding.
  ///  4. Relocate: SameSize is false and Bytes is the section with the
  ///     grown note (other notes unchanged).
  llvm::Expected<NoteRewrite> rewrite() const;

  /// Checks that \p NewSection is this note section with exactly the pending
  /// changes applied, as rewrite() does before returning: the section reads
  /// as valid metadata; every kernel's fields (and amdhsa.version and
  /// amdhsa.target) have the expected values; other notes and bytes are
  /// unchanged; and the msgpack token streams of the old and the new
  /// descriptor are identical (types, values, strings, element counts) except
  /// at the changed values and at the keys added to a kernel map. Integer
  /// encoding widths may differ.
  llvm::Error verifyRewrite(llvm::ArrayRef<uint8_t> NewSection) const;

  /// The metadata (as read, without pending changes) as YAML.
  llvm::Expected<std::string> toYAML() const;

private:
  CodeObjectMetadata();
  llvm::Error load();

  std::vector<uint8_t> Section;
  bool HasNote = false;
  uint64_t NoteOffset = 0, DescOffset = 0;
  uint32_t DescSize = 0, NameSize = 0;
  std::optional<MetadataVersion> Version;
  std::string Target;
  std::vector<KernelMD> Kernels;
  llvm::StringMap<unsigned> BySymbol;
  /// Per kernel index, the fields with a pending change (bit F for field F;
  /// the new value is the one in Kernels). Empty until the first change.
  std::vector<uint16_t> Pending;
  unsigned NumPending = 0;
};

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_METADATA_H
