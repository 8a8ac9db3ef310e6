//===- hotswap/Passes/ProvenanceEdits.h - Edits an output makes -*- C++ -*-===//
//
// What a provenance record (ProvenanceRecord.h) must hold is read off the
// output as the writer describes it, never from what passes say they did:
// an output is pieces over a file of zeros, later pieces winning where they
// overlap (Writer.h), and its edits of the input are exactly the bytes
// inside the input's extent where the winning piece holds other bytes than
// the input.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PROVENANCEEDITS_H
#define HOTSWAP_PASSES_PROVENANCEEDITS_H

#include "hotswap/Object/Writer.h"

#include <cstdint>
#include <vector>

namespace hotswap {

/// Bytes of an output: Size bytes at Offset, which are Bytes, or zeros
/// (Bytes null: no piece covers them).
struct OutputSpan {
  uint64_t Offset = 0;
  uint64_t Size = 0;
  const uint8_t *Bytes = nullptr;
  /// The bytes come from an input piece at the same offset of the input
  /// (OutputPiece::InputOffset == Offset): the input's own bytes.
  bool AtInputOffset = false;
};

/// The output \p P describes over [Begin, End), in order, each byte from
/// the last piece that covers it. Linear in the pieces (times a logarithm).
std::vector<OutputSpan> resolveOutput(const OutputPieces &P, uint64_t Begin,
                                      uint64_t End);

/// A range of bytes.
struct ByteRange {
  uint64_t Offset = 0;
  uint64_t Size = 0;

  uint64_t end() const { return Offset + Size; }
  bool operator==(const ByteRange &O) const {
    return Offset == O.Offset && Size == O.Size;
  }
};

/// Where the output \p P differs from \p Input in [0, Limit) (Limit at most
/// Input.size()), sorted and disjoint; two differences fewer than
/// \p MergeGap bytes apart are one range.
std::vector<ByteRange> editedRanges(const OutputPieces &P,
                                    llvm::ArrayRef<uint8_t> Input,
                                    uint64_t Limit, uint64_t MergeGap = 16);

/// \p A and \p B (each sorted and disjoint) united, sorted and disjoint;
/// ranges fewer than \p MergeGap bytes apart are one.
std::vector<ByteRange> uniteRanges(llvm::ArrayRef<ByteRange> A,
                                   llvm::ArrayRef<ByteRange> B,
                                   uint64_t MergeGap = 16);

/// Whether every range of \p Inner lies inside a range of \p Outer (both
/// sorted and disjoint).
bool rangesCover(llvm::ArrayRef<ByteRange> Outer,
                 llvm::ArrayRef<ByteRange> Inner);

} // namespace hotswap

#endif // HOTSWAP_PASSES_PROVENANCEEDITS_H
