//===- hotswap/Passes/ProvenanceRecord.h - How to give back an input -*- C++
//-*-===//
//
// Every output the pipeline changed carries a provenance record: how it was
// made and how to give back the very first input, byte for byte. It lives in
// `.hotswap.provenance`, an SHT_NOTE section without SHF_ALLOC, laid out
// after the input's last byte, so no loader or COMGR ever sees it (it is in
// no PT_LOAD and no PT_NOTE). One note of the record family (RecordNotes.h),
// owner "HOTSWAP", type ProvenanceNoteType, whose descriptor is
// (little-endian):
//
//   u32 format version (1)     u32 R, runs           u64 S, original size
//   u8[32] SHA-256 of the original (its S bytes)
//   u8[32] SHA-256 of what the output holds in the edited ranges, in order
//   u64 N, edited ranges
//   R x { u64 input size, u32 n, n bytes tool version,
//         u32 m, m bytes pipeline (UTF-8) }               oldest run first
//   N x { u64 offset, u64 size }       sorted, disjoint, non-empty, below S
//   versions 2 and 3: u64 K, rebuilt ranges (at least one in version 2)
//   K x { u64 offset, u64 size,        sorted, disjoint, non-empty, below S,
//         u64 source offset, u64 source size }   apart from the N ranges
//   version 3 only: u64 M, moved ranges
//   M x { u64 offset, u64 size,        sorted, disjoint, non-empty, below S,
//         u64 source offset }          apart from the N and K ranges
//   version 3 only: u64 T <= S, where the output was laid out again
//   u8[32] SHA-256 of the descriptor's bytes before this field
//   the original bytes of every one of the N ranges, in order
//
// The output starts with the whole input, every byte at its offset, and the
// edits inside it (ELF header, descriptors, metadata values, program
// headers, wrapper pointers, relocation addends, zeroed bundles) are a few
// known ranges: the original is the output's first S bytes with each
// range's original bytes put back. A later run that changes the file again
// extends the record (a run more; ranges united, the first original bytes of
// each kept), so the record always leads back to the very first input.
//
// A rebuilt range (version 2, written only when there is one) holds no
// original bytes: they are what `restore` makes of the bundle at its source
// (after the original's extent), the old bundle of a HIP host binary that
// its rewrite left as a hole once it proved that re-bundling the restored
// code objects gives that bundle's bytes back (the pipeline's
// RebuildFn). The original's SHA-256 covers them.
//
// A moved range (version 3, written only when there is one) holds no
// original bytes either: the file holds them elsewhere, at its source
// offset. A code object's non-loaded tail (symbol and string tables, debug
// information, the section header table) is laid out again after its new
// segment (Object::allowTailRelayout), each table keeping the input's bytes
// as its first part, so the record points at them instead of holding a
// second copy. From T on, the output holds what its layout put there (new
// segments first, then the tail): bytes of its own, like those after the
// original's extent, which the edited bytes' SHA-256 does not cover (it
// covers the ranges' parts before T). Version 3 is written when there is a
// moved range or T is inside the original.
//
// Every byte of the original extent is covered: a byte outside the ranges
// by the original's SHA-256, a byte inside one by the edited bytes'
// SHA-256; the record's own fields by its checksum. checkProvenance tells
// each apart; restoring and extending a record both check it first.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PROVENANCERECORD_H
#define HOTSWAP_PASSES_PROVENANCERECORD_H

#include "hotswap/Object/Object.h"
#include "hotswap/Object/Writer.h"
#include "hotswap/Passes/RecordNotes.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

inline constexpr llvm::StringLiteral ProvenanceSectionName =
    ".hotswap.provenance";
inline constexpr llvm::StringLiteral ProvenanceNoteOwner = RecordNoteOwner;
inline constexpr uint32_t ProvenanceNoteType =
    static_cast<uint32_t>(RecordNoteType::Provenance);
inline constexpr uint32_t ProvenanceFormatVersion = 1;
/// The version of a record with rebuilt ranges.
inline constexpr uint32_t ProvenanceRebuiltFormatVersion = 2;
/// The version of a record with moved ranges, or a tail laid out again.
inline constexpr uint32_t ProvenanceMovedFormatVersion = 3;

using SHA256Digest = std::array<uint8_t, 32>;

/// One run that changed the file.
struct ProvenanceRun {
  /// The tool's version (getVersionString()).
  std::string Version;
  /// The pipeline's transform passes, in their canonical form
  /// (--print-pipeline-passes); verify and print<...> are left out.
  std::string Pipeline;
  /// The size of the file the run read.
  uint64_t InputSize = 0;
};

/// A range of the original the output holds other bytes in.
struct ProvenanceRange {
  uint64_t Offset = 0;
  uint64_t Size = 0;
  /// The original bytes: Size bytes of what the record was parsed from
  /// (empty in a record being built, see ProvenanceNote), or of the file
  /// at Source.
  llvm::ArrayRef<uint8_t> Original;
  /// A moved range: where in the file its original bytes are
  /// (readProvenance points Original there).
  std::optional<uint64_t> Source;

  uint64_t end() const { return Offset + Size; }
};

/// A range of the original whose bytes the record does not hold: they are
/// what the bundle of SourceSize bytes at SourceOffset of the file (after
/// the original's extent) gives back when restored.
struct RebuiltRange {
  uint64_t Offset = 0;
  uint64_t Size = 0;
  uint64_t SourceOffset = 0;
  uint64_t SourceSize = 0;

  uint64_t end() const { return Offset + Size; }
  bool operator==(const RebuiltRange &O) const {
    return Offset == O.Offset && Size == O.Size &&
           SourceOffset == O.SourceOffset && SourceSize == O.SourceSize;
  }
};

/// Makes the original bytes of a rebuilt range from the file: Size bytes as
/// pieces (offsets from the range's start; input pieces are bytes of the
/// file, at their offset of it), or why it cannot.
using RebuildFn =
    std::function<llvm::Expected<OutputPieces>(const RebuiltRange &)>;

/// Hands bytes of a mapped file back to the system once they are read
/// (PipelineOptions::ReleaseInput): checking a large record reads all of
/// its original, which would otherwise stay resident.
using ReleaseFn = std::function<void(llvm::ArrayRef<uint8_t>)>;

/// A parsed record.
struct ProvenanceRecord {
  uint64_t OriginalSize = 0;
  SHA256Digest OriginalSHA256{};
  SHA256Digest EditedSHA256{};
  SHA256Digest Checksum{};
  std::vector<ProvenanceRun> Runs;
  std::vector<ProvenanceRange> Ranges;
  std::vector<RebuiltRange> Rebuilt;
  /// Where the output was laid out again (OriginalSize when it was not):
  /// the edited bytes' digest covers what lies before.
  uint64_t LaidOutFrom = UINT64_MAX;

  /// Bytes the ranges the record holds the original bytes of hold
  /// together (moved ranges left out).
  uint64_t editedBytes() const;
  /// Bytes the moved ranges hold together.
  uint64_t movedBytes() const;
};

/// Parses the contents of a provenance section (one note). Every field is
/// validated with overflow-safe arithmetic before it is used; the first
/// problem is the error ("provenance record: ...").
llvm::Expected<ProvenanceRecord>
parseProvenanceNote(llvm::ArrayRef<uint8_t> SectionBytes);

/// The provenance section of \p Obj, or null. Fails when there are several,
/// or the one there is loaded, not a note, without file contents, or lies
/// inside the original extent its record claims (checked by
/// readProvenance).
llvm::Expected<Section *> findProvenanceSection(const Object &Obj);

/// Points each moved range's Original at its bytes in \p File, the file
/// \p R was read from; fails when they lie past its end.
llvm::Error resolveMovedRanges(ProvenanceRecord &R,
                               llvm::ArrayRef<uint8_t> File);

/// The record of \p Obj (nullopt when it has none), parsed from the input
/// bytes the model was read from; its ranges' Original point into them.
/// Fails as findProvenanceSection and parseProvenanceNote do, and when the
/// section lies inside the original extent.
llvm::Expected<std::optional<ProvenanceRecord>>
readProvenance(const Object &Obj);

/// Checks that \p R leads from \p File (the file it was read from) back to
/// its original: the file is at least the original's size, it holds what
/// the rewrite wrote in the edited ranges, and the original rebuilt from it
/// (each rebuilt range by \p Rebuild) has the recorded SHA-256. Fails with
/// "the file was modified after it was rewritten: ..." naming which, and
/// when the record has rebuilt ranges and there is no \p Rebuild. The
/// bytes of \p File it reads are handed to \p Release behind it.
llvm::Error checkProvenance(const ProvenanceRecord &R,
                            llvm::ArrayRef<uint8_t> File,
                            const RebuildFn &Rebuild = {},
                            const ReleaseFn &Release = {});

/// The original \p R, a record without rebuilt ranges, leads back to, as
/// pieces over \p File (every piece an input piece: the first OriginalSize
/// bytes, then each range's original bytes where the record holds them).
/// Check it first (checkProvenance).
OutputPieces originalPieces(const ProvenanceRecord &R,
                            llvm::ArrayRef<uint8_t> File);

/// The original \p R leads back to, as pieces over \p File (input pieces:
/// the first OriginalSize bytes, then each range's original bytes where the
/// record holds them; each rebuilt range's pieces from \p Rebuild), checked
/// as checkProvenance checks it (\p Release as there: each rebuilt range's
/// source too, once it is rebuilt).
llvm::Expected<OutputPieces> checkedOriginal(const ProvenanceRecord &R,
                                             llvm::ArrayRef<uint8_t> File,
                                             const RebuildFn &Rebuild = {},
                                             const ReleaseFn &Release = {});

/// checkedOriginal in two parts, for a caller that writes the original
/// while its digest is computed: the pieces, once every other check passed
/// (the file's size, the edited ranges, each rebuilt range rebuilt), and
/// DigestCheck, the check of the original's SHA-256 (\p Release as in
/// checkProvenance), which the caller must run, and see succeed, before it
/// keeps what it wrote. \p R's ranges, \p File and the buffers Pieces owns
/// must outlive DigestCheck.
struct OriginalAhead {
  OutputPieces Pieces;
  std::function<llvm::Error()> DigestCheck;
};
llvm::Expected<OriginalAhead> originalAheadOfCheck(const ProvenanceRecord &R,
                                                   llvm::ArrayRef<uint8_t> File,
                                                   const RebuildFn &Rebuild,
                                                   const ReleaseFn &Release);

/// Lowercase hex of a digest.
std::string digestHex(const SHA256Digest &D);

/// A record to write: the section's bytes are Head, then the bytes of
/// \p Input at each of Slices (the original bytes: the input's own where
/// it still holds them, an older record's where it does not), then zero
/// padding to Size. Built by encodeProvenance; finishProvenance fills in
/// the two digests that depend on the final output.
struct ProvenanceNote {
  struct Slice {
    uint64_t InputOffset = 0;
    uint64_t Size = 0;
  };
  std::vector<uint8_t> Head;
  std::vector<Slice> Slices;
  uint64_t Size = 0;

  /// The section's pieces, from its start (input pieces for the slices).
  OutputPieces pieces(llvm::ArrayRef<uint8_t> Input) const;
};

/// What a record says, with each range's original bytes as slices of the
/// input being rewritten.
struct ProvenanceContents {
  uint64_t OriginalSize = 0;
  SHA256Digest OriginalSHA256{};
  std::vector<ProvenanceRun> Runs;
  struct Range {
    uint64_t Offset = 0;
    uint64_t Size = 0;
    std::vector<ProvenanceNote::Slice> Original;
    /// A moved range: the output holds its original bytes here (and the
    /// record does not; Original is then ignored).
    std::optional<uint64_t> Source;
  };
  std::vector<Range> Ranges;
  /// Apart from Ranges (version 2 when there is one).
  std::vector<RebuiltRange> Rebuilt;
  /// ProvenanceRecord::LaidOutFrom (version 3 when below OriginalSize).
  uint64_t LaidOutFrom = UINT64_MAX;
};

/// Encodes \p C with zero digests. Fails when the note would not fit its
/// 32-bit descriptor size, or a string is not UTF-8.
llvm::Expected<ProvenanceNote> encodeProvenance(const ProvenanceContents &C);

/// Writes \p Edited (SHA-256 of what the output holds in the ranges) and
/// then the record's checksum into \p N.
void finishProvenance(ProvenanceNote &N, const SHA256Digest &Edited);

/// Writes \p Original (the original's SHA-256, when it was not known at
/// encodeProvenance) and then the checksum again into \p N, in place: the
/// note's pieces stay valid.
void setOriginalDigest(ProvenanceNote &N, const SHA256Digest &Original);

} // namespace hotswap

#endif // HOTSWAP_PASSES_PROVENANCERECORD_H
