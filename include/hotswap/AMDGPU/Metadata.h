//===- hotswap/AMDGPU/Metadata.h - AMDGPU metadata notes --------*- C++ -*-===//
//
// The NT_AMDGPU_METADATA notes (owner "AMDGPU", type 32) of a code object
// v3+: each a MessagePack map with amdhsa.version, amdhsa.target and
// amdhsa.kernels. A note section usually holds one; an object linked with
// LTO partitions (clang -fgpu-rdc) holds one per partition, each describing
// its own kernels. Pure bytes-in/bytes-out over the note section's contents;
// independent of the ELF model.
//
// Reading validates the structure and the types of the keys below, in every
// metadata note of the section. Writing is a batch: setField() (and
// setSGPRCount()) record changes, rewrite() produces the new note-section
// bytes with every change applied, each in the note that describes the
// kernel. The note section is
// loaded memory, so rewrite() keeps its size: a value is written in the
// width of the value it replaces (a small value in a wide form is legal
// msgpack), or widened into the descriptor's alignment padding; when neither
// holds it, rewrite() fails with a NoteGrowthError. rewrite(AllowGrowth)
// instead grows the descriptors that must grow, for a section written anew
// elsewhere (code::commitMetadata): the notes after a grown one move, every
// other byte stays as it was.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_METADATA_H
#define HOTSWAP_AMDGPU_METADATA_H

#include "hotswap/AMDGPU/MsgPackTokenizer.h"
#include "hotswap/AMDGPU/Notes.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace amdgpu {

/// Note type of the code object v3+ metadata note.
constexpr uint32_t NT_AMDGPU_METADATA = 32;
/// Owner name of AMDGPU notes.
constexpr llvm::StringLiteral AMDGPUNoteOwner = "AMDGPU";

/// The per-kernel keys this layer reads and validates.
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
  /// The note that describes the kernel (index in CodeObjectMetadata::notes())
  /// and the kernel's position in that note's amdhsa.kernels.
  unsigned Note = 0;
  unsigned Index = 0;

  /// The value of a field (UsesDynamicStack reads as 0/1).
  std::optional<uint64_t> get(KernelField F) const;
};

struct MetadataVersion {
  uint64_t Major = 0, Minor = 0;

  bool operator==(const MetadataVersion &O) const {
    return Major == O.Major && Minor == O.Minor;
  }
};

/// One NT_AMDGPU_METADATA note of the section.
struct MetadataNote {
  /// Offset of the note header within the section.
  uint64_t Offset = 0;
  /// The note's amdhsa.version and amdhsa.target, when present.
  std::optional<MetadataVersion> Version;
  std::optional<std::string> Target;
};

/// Result of CodeObjectMetadata::rewrite().
struct NoteRewrite {
  enum class Method {
    Unchanged,    // no pending change: Bytes are the input bytes
    InPlace,      // every value kept its encoded size; all other bytes equal
    PaddingSlack, // a descriptor grew into its own alignment padding
    Grown,        // a descriptor grew beyond its padding: the section is
                  // larger (rewrite(AllowGrowth) only)
  };
  Method How = Method::Unchanged;
  /// The complete new note section, as large as the old one unless How is
  /// Grown.
  std::vector<uint8_t> Bytes;
};

/// A new value that no same-size encoding of its note can hold: the note
/// would have to grow, and it is loaded memory.
class NoteGrowthError : public llvm::ErrorInfo<NoteGrowthError> {
public:
  static char ID;
  NoteGrowthError(std::string Symbol, KernelField Field, uint64_t Value,
                  uint64_t NoteOffset)
      : Symbol(std::move(Symbol)), Field(Field), Value(Value),
        NoteOffset(NoteOffset) {}

  /// The kernel (its .symbol), the field, the value that does not fit, and
  /// the file offset of the note that would have to grow.
  std::string Symbol;
  KernelField Field;
  uint64_t Value;
  uint64_t NoteOffset;

  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
};

/// The bytes rewrite() produced fail its self-check (verifyRewrite()): a bug
/// in this layer, never a property of the input.
class MetadataSelfCheckError : public llvm::ErrorInfo<MetadataSelfCheckError> {
public:
  static char ID;
  explicit MetadataSelfCheckError(std::string Reason)
      : Reason(std::move(Reason)) {}

  /// What differs from the expected result.
  std::string Reason;

  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
};

/// One kernel argument as the host lays it out in the kernarg segment
/// (an entry of .args).
struct KernelArg {
  std::optional<uint64_t> Offset, Size; // .offset, .size
  std::string ValueKind;                // .value_kind ("" when absent)
};

/// What a host relies on when it launches a kernel, read from the kernel's
/// metadata map on demand (KernelMD does not keep it): the layout of its
/// arguments and the other keys that constrain a launch.
struct KernelInterface {
  /// .args; nullopt when the kernel has no such key.
  std::optional<std::vector<KernelArg>> Args;
  /// The launch keys the kernel has (.kernarg_segment_align,
  /// .reqd_workgroup_size, .workgroup_size_hint, .uniform_work_group_size,
  /// .vec_type_hint), by key, each value written out canonically ("8",
  /// "[64, 1, 1]", "true", "'int'") so that two equal values compare equal
  /// whatever their encodings.
  std::map<std::string, std::string> LaunchKeys;
};

/// Where the value of a kernel's field is encoded in its note's descriptor
/// (CodeObjectMetadata keeps one per field of each kernel).
struct MetadataValueLoc {
  uint32_t Offset = 0; // (a descriptor is smaller than 4 GiB)
  uint8_t Size = 0;    // 0: the kernel has no such key
  bool Signed = false;
};

/// Where a kernel's map is encoded in its note's descriptor: its header
/// (Size bytes at Offset, Length entries) and the offset just past its last
/// value, where a key is added.
struct KernelMapLoc {
  uint32_t Offset = 0;
  uint32_t End = 0;
  uint32_t Length = 0;
  uint8_t Size = 0;
};

class CodeObjectMetadata {
public:
  /// Parses and validates a note section: every NT_AMDGPU_METADATA note in
  /// it. A section without one is valid (hasMetadata() is then false). Fails
  /// when two notes describe kernels with the same .symbol, or disagree on
  /// amdhsa.version or amdhsa.target. The bytes are copied, unless \p Borrow
  /// says they outlive the result and never change (an input's bytes: a
  /// Tensile object's note is 50 MB). \p FileOffset: where the section lies
  /// in its file (what a NoteGrowthError adds to the note's offset in it).
  /// \p DoneWith, when set, is told of the section's bytes as parsing is
  /// done with them (in order, DoneWithStep bytes or more at a time, and
  /// the rest at the end): an owner of borrowed bytes may give their pages
  /// back (they are read again only by interfaceOf() and rewrite()).
  static llvm::Expected<CodeObjectMetadata>
  parse(llvm::ArrayRef<uint8_t> NoteSectionBytes, uint64_t FileOffset = 0,
        bool Borrow = false,
        llvm::function_ref<void(llvm::ArrayRef<uint8_t>)> DoneWith = {});
  static constexpr uint64_t DoneWithStep = 16u << 20;

  CodeObjectMetadata(CodeObjectMetadata &&);
  CodeObjectMetadata &operator=(CodeObjectMetadata &&);
  ~CodeObjectMetadata();

  bool hasMetadata() const { return !Notes.empty(); }
  /// The metadata notes, in section order.
  llvm::ArrayRef<MetadataNote> notes() const { return Notes; }
  /// amdhsa.version, when a note has it (all notes that have it agree).
  std::optional<MetadataVersion> version() const { return Version; }
  /// amdhsa.target ("amdgcn-amd-amdhsa--gfx90a"), empty when no note has it.
  llvm::StringRef target() const { return Target; }
  /// Kernels, note by note in amdhsa.kernels order. Values include pending
  /// changes.
  llvm::ArrayRef<KernelMD> kernels() const { return Kernels; }
  /// The kernel whose .symbol is \p Symbol, or null.
  const KernelMD *findBySymbol(llvm::StringRef Symbol) const;

  /// The interface of the kernel \p Symbol (see KernelInterface), read from
  /// its note. Fails on an unknown symbol and on an .args that is not an
  /// array of maps whose .offset and .size are unsigned integers and
  /// .value_kind a string.
  llvm::Expected<KernelInterface> interfaceOf(llvm::StringRef Symbol) const;

  /// Records a new value of \p Field for the kernel \p Symbol (0 or 1 for
  /// UsesDynamicStack). Setting the value it already has records nothing.
  /// A kernel without that key gets it, at the end of its map: only a
  /// rewrite that may grow can add it (rewrite() names it in a
  /// NoteGrowthError otherwise). Fails on a missing note, an unknown symbol
  /// and a boolean that is not 0 or 1.
  llvm::Error setField(llvm::StringRef Symbol, KernelField Field,
                       uint64_t Value);
  /// setField(Symbol, KernelField::SGPRCount, Value).
  llvm::Error setSGPRCount(llvm::StringRef Symbol, uint64_t Value);
  bool hasPendingChanges() const { return NumPending != 0; }

  /// Produces the new note section with every pending change applied, then
  /// checks it with verifyRewrite() before returning. Does not modify this
  /// object. Fails with a NoteGrowthError when a value does not fit (see the
  /// file comment), naming the first kernel, in document order, whose value
  /// does not. With \p AllowGrowth, a note whose new values do not fit grows
  /// instead (NoteRewrite::Method::Grown).
  llvm::Expected<NoteRewrite> rewrite(bool AllowGrowth = false) const;

  /// Checks that \p NewSection is this note section with exactly the pending
  /// changes applied, as rewrite() does before returning: the notes keep
  /// their order, names, types and sizes, but for notes with changes, whose
  /// descriptors (and n_descsz) alone differ and may have grown, moving the
  /// notes after them by as much; the section reads as valid metadata with
  /// the expected kernels, values, versions and targets; and each changed
  /// descriptor equals the old one byte for byte, except that the token of
  /// each changed value is one token (an integer, or a boolean
  /// for .uses_dynamic_stack) holding the new value. Fails
  /// with a MetadataSelfCheckError.
  llvm::Error verifyRewrite(llvm::ArrayRef<uint8_t> NewSection) const;

private:
  CodeObjectMetadata();
  class Loader;
  llvm::Error load(llvm::function_ref<void(llvm::ArrayRef<uint8_t>)> DoneWith);
  llvm::Error checkRewrite(llvm::ArrayRef<uint8_t> NewSection) const;

  /// The note section: OwnedSection's bytes, or borrowed ones.
  llvm::ArrayRef<uint8_t> Section;
  std::vector<uint8_t> OwnedSection;
  uint64_t FileOffset = 0;
  std::vector<MetadataNote> Notes;
  /// The framing of each of Notes (pointing into Section).
  std::vector<NoteRef> NoteRefs;
  std::optional<MetadataVersion> Version;
  std::string Target;
  std::vector<KernelMD> Kernels;
  /// Per kernel, where each of its fields is (indexed by KernelField).
  std::vector<std::array<MetadataValueLoc, NumKernelFields>> FieldLocs;
  /// Per kernel, where its map is.
  std::vector<KernelMapLoc> MapLocs;
  llvm::StringMap<unsigned> BySymbol;
  /// Per kernel and field (bit Kernel * NumKernelFields + Field), whether
  /// it has a pending change (the new value is the one in Kernels). Empty
  /// until the first change.
  llvm::BitVector Pending;
  unsigned NumPending = 0;
};

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_METADATA_H
