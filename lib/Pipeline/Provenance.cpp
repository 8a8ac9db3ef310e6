//===- lib/Pipeline/Provenance.cpp - Recording how to give back an input --===//
//
// Every object whose output differs from its input gets the provenance
// record of the run (ProvenanceRecord.h) in a new non-loaded note section,
// or its input's record extended. The record describes edits the layout
// makes, and the layout places the record: what breaks the circle is that
// the record is in no segment and after the input's end, so adding it
// changes nothing inside the input's extent but the ELF header (section
// count and table offset), which is recorded whole whatever the values.
// So: edits of the output without the record, plus the ELF header; then
// the record, the layout again, and a check that the final output edits
// nothing the record does not hold.
//
//===----------------------------------------------------------------------===//

#include "InputDigest.h"
#include "Rewrite.h"

#include "hotswap/Object/Writer.h"
#include "hotswap/Passes/ProvenanceEdits.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/Sha256.h"

#include "llvm/BinaryFormat/ELF.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;

void WrittenProvenance::addTo(OutputPieces &Pieces, const Layout &L,
                              ArrayRef<uint8_t> Input) const {
  const size_t HeadAt = Pieces.Pieces.size();
  Pieces.append(Note.pieces(Input), L.SectionOffsets[Section], uint64_t(0));
  if (Pending)
    Pieces.Pieces[HeadAt].Late = true; // the note's header and descriptor
}

void WrittenProvenance::settle() {
  if (!Pending)
    return;
  setOriginalDigest(Note, Pending->get());
  Pending.reset();
}

namespace {

/// Where the original's bytes are in the input being rewritten: the
/// input's own bytes, except inside the ranges of its record, whose
/// original bytes the record holds.
class OriginalBytes {
public:
  OriginalBytes(ArrayRef<uint8_t> Input, const ProvenanceRecord *Old)
      : Input(Input), Old(Old) {}

  /// The slices of the input that hold the original's bytes [Off, Off+Size).
  std::vector<ProvenanceNote::Slice> slices(uint64_t Off, uint64_t Size) {
    std::vector<ProvenanceNote::Slice> S;
    const uint64_t End = Off + Size;
    uint64_t Pos = Off;
    if (Old) {
      // Ranges are visited in increasing order: resume where we were.
      while (Next < Old->Ranges.size() && Old->Ranges[Next].end() <= Pos)
        ++Next;
      for (size_t I = Next; I < Old->Ranges.size() && Pos < End; ++I) {
        const ProvenanceRange &G = Old->Ranges[I];
        if (G.Offset >= End)
          break;
        if (G.Offset > Pos) {
          S.push_back({Pos, G.Offset - Pos});
          Pos = G.Offset;
        }
        const uint64_t To = std::min(End, G.end());
        const uint64_t At = G.Original.data() - Input.data();
        S.push_back({At + (Pos - G.Offset), To - Pos});
        Pos = To;
      }
    }
    if (Pos < End)
      S.push_back({Pos, End - Pos});
    return S;
  }

private:
  ArrayRef<uint8_t> Input;
  const ProvenanceRecord *Old;
  size_t Next = 0;
};

/// \p A without the bytes of \p B (both sorted and disjoint).
std::vector<ByteRange> subtractRanges(ArrayRef<ByteRange> A,
                                      ArrayRef<ByteRange> B) {
  std::vector<ByteRange> Out;
  size_t J = 0;
  for (const ByteRange &G : A) {
    uint64_t Pos = G.Offset;
    while (J < B.size() && B[J].end() <= Pos)
      ++J;
    for (size_t K = J; K < B.size() && B[K].Offset < G.end(); ++K) {
      if (B[K].Offset > Pos)
        Out.push_back({Pos, B[K].Offset - Pos});
      Pos = std::max(Pos, B[K].end());
    }
    if (Pos < G.end())
      Out.push_back({Pos, G.end() - Pos});
  }
  return Out;
}

/// SHA-256 of what \p Out holds in \p Ranges (inside [0, Limit)), in order.
SHA256Digest hashRanges(const OutputPieces &Out, ArrayRef<ByteRange> Ranges,
                        uint64_t Limit) {
  static const uint8_t Zeros[4096] = {};
  Sha256 H;
  std::vector<OutputSpan> Spans = resolveOutput(Out, 0, Limit);
  size_t S = 0;
  for (const ByteRange &G : Ranges) {
    while (S < Spans.size() && Spans[S].Offset + Spans[S].Size <= G.Offset)
      ++S;
    for (size_t I = S; I < Spans.size() && Spans[I].Offset < G.end(); ++I) {
      const OutputSpan &Sp = Spans[I];
      const uint64_t From = std::max(Sp.Offset, G.Offset);
      const uint64_t To = std::min(Sp.Offset + Sp.Size, G.end());
      if (Sp.Bytes) {
        H.update(ArrayRef<uint8_t>(Sp.Bytes + (From - Sp.Offset), To - From));
        continue;
      }
      for (uint64_t P = From; P < To; P += sizeof(Zeros))
        H.update(ArrayRef<uint8_t>(Zeros,
                                   std::min<uint64_t>(sizeof(Zeros), To - P)));
    }
  }
  return H.final();
}

} // namespace

Expected<WrittenProvenance>
pipeline::recordProvenance(Object &Obj, Layout &L, const PipelineText &P,
                           const std::shared_ptr<InputDigest> &Digest,
                           bool Defer, const HoleRecord *Holes) {
  ArrayRef<uint8_t> Input = Obj.input();
  Expected<std::optional<ProvenanceRecord>> Old = readProvenance(Obj);
  if (!Old)
    return prefixError("cannot extend the provenance record", Old.takeError());
  const ProvenanceRecord *Rec = *Old ? &**Old : nullptr;
  if (Rec)
    if (Error E =
            checkProvenance(*Rec, Input, Holes ? Holes->Rebuild : RebuildFn()))
      return prefixError("cannot extend the provenance record", std::move(E));

  ProvenanceContents C;
  if (Rec) {
    C.OriginalSize = Rec->OriginalSize;
    C.OriginalSHA256 = Rec->OriginalSHA256;
    C.Runs = Rec->Runs;
  } else {
    C.OriginalSize = Input.size();
    // Zeros until settle() when deferred (the checksum is redone then).
    if (!Defer)
      C.OriginalSHA256 = Digest->get();
  }
  C.Runs.push_back({getVersionString().str(), P.canonical(), Input.size()});

  // What this run edits inside the original, the ELF header included; what
  // earlier runs edited. The holes a host leaves inside the original are
  // rebuilt ranges, not held: edits are read off the output as the model
  // has it (the old bundles still there, or zeroed), and must lie outside
  // them (comparing gigabytes of holes with the input would find the
  // bundles' every byte).
  std::vector<RebuiltRange> Rebuilt;
  std::vector<ByteRange> RebuiltBytes;
  if (Rec)
    Rebuilt = Rec->Rebuilt;
  if (Holes) {
    for (RebuiltRange &G : Rebuilt)
      for (const auto &[From, To] : Holes->Moved)
        if (G.SourceOffset == From.Offset && G.SourceSize == From.Size) {
          G.SourceOffset = To.Offset;
          G.SourceSize = To.Size;
        }
    Rebuilt.insert(Rebuilt.end(), Holes->Rebuilt.begin(), Holes->Rebuilt.end());
    llvm::sort(Rebuilt, [](const RebuiltRange &A, const RebuiltRange &B) {
      return A.Offset < B.Offset;
    });
  }
  for (const RebuiltRange &G : Rebuilt)
    RebuiltBytes.push_back({G.Offset, G.Size});
  std::vector<ByteRange> Edits = subtractRanges(
      editedRanges(renderPieces(Obj, L), Input, C.OriginalSize), RebuiltBytes);
  // Every hole inside the original is a rebuilt range.
  if (Holes)
    for (const ByteRange &G : Holes->Holes)
      if (G.Offset < C.OriginalSize && !rangesCover(RebuiltBytes, ArrayRef(G)))
        return makeError("internal error: the hole at " + hex(G.Offset) +
                         " is not a rebuilt range of the provenance record");
  const ByteRange Header{
      0, std::min<uint64_t>(sizeof(ELF::Elf64_Ehdr), C.OriginalSize)};
  std::vector<ByteRange> Earlier;
  if (Rec)
    for (const ProvenanceRange &G : Rec->Ranges)
      Earlier.push_back({G.Offset, G.Size});
  std::vector<ByteRange> Ranges =
      uniteRanges(uniteRanges(Earlier, Edits), ArrayRef(Header));
  OriginalBytes Orig(Input, Rec);
  for (const ByteRange &G : Ranges)
    C.Ranges.push_back({G.Offset, G.Size, Orig.slices(G.Offset, G.Size)});
  C.Rebuilt = Rebuilt;
  // Held and rebuilt ranges never meet (a rebuilt one is an old bundle,
  // chosen outside every range of the input's record).
  for (const ByteRange &G : Ranges)
    for (const ByteRange &B : RebuiltBytes)
      if (G.Offset < B.end() && B.Offset < G.end())
        return makeError("internal error: the range at " + hex(G.Offset) +
                         " of the provenance record overlaps the rebuilt "
                         "one at " +
                         hex(B.Offset));

  Expected<ProvenanceNote> Note = encodeProvenance(C);
  if (!Note)
    return Note.takeError();
  Expected<Section *> Found = findProvenanceSection(Obj);
  if (!Found)
    return prefixError("cannot extend the provenance record",
                       Found.takeError());
  Section *S = *Found;
  if (!S) {
    auto New = std::make_unique<Section>();
    New->Name = ProvenanceSectionName.str();
    New->Type = ELF::SHT_NOTE;
    New->AddrAlign = 4;
    S = &Obj.addSection(std::move(New));
  }
  S->setExternalContents(Note->Size);
  Expected<Layout> Final = computeLayout(Obj);
  if (!Final)
    return prefixError("cannot add the provenance record", Final.takeError());
  L = std::move(*Final);

  WrittenProvenance W{S->index(), std::move(*Note), nullptr};
  if (Defer && !Rec)
    W.Pending = Digest;
  OutputPieces Out = renderPieces(Obj, L);
  W.addTo(Out, L, Input);
  if (!rangesCover(uniteRanges(Ranges, RebuiltBytes, 0),
                   editedRanges(Out, Input, C.OriginalSize, 0)))
    return makeError("internal error: the output edits bytes of the input "
                     "that its provenance record does not hold");
  finishProvenance(W.Note, hashRanges(Out, Ranges, C.OriginalSize));
  return std::move(W);
}

std::optional<std::string>
pipeline::hostLaidOutAgain(const Object &Host, const ProvenanceRecord &R) {
  const uint64_t PhOff = Host.inputTables().PhOff;
  if (PhOff >= R.OriginalSize)
    return std::nullopt;
  return "the file was laid out again by another tool after it was rewritten "
         "(its program header table is at " +
         hex(PhOff) + ", inside the original's " + hex(R.OriginalSize) +
         " bytes, where no rewrite puts it: GNU strip, objcopy and patchelf "
         "do)";
}
