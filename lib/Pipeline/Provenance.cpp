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

/// Input bytes the output holds: Size bytes of the input at In are the
/// output's at Out.
struct InputCopy {
  uint64_t In = 0, Out = 0, Size = 0;
};

/// Every run of input bytes in the output \p P of \p FileSize bytes (what
/// no later piece covers), by input offset.
std::vector<InputCopy> inputCopies(const OutputPieces &P, uint64_t FileSize,
                                   ArrayRef<uint8_t> Input) {
  std::vector<InputCopy> C;
  const uint8_t *Begin = Input.data(), *End = Begin + Input.size();
  for (const OutputSpan &S : resolveOutput(P, 0, FileSize))
    if (S.Bytes && S.Bytes >= Begin && S.Bytes < End &&
        S.Size <= uint64_t(End - S.Bytes))
      C.push_back({uint64_t(S.Bytes - Begin), S.Offset, S.Size});
  llvm::sort(
      C, [](const InputCopy &A, const InputCopy &B) { return A.In < B.In; });
  return C;
}

/// Moved ranges are worth their 24 bytes from this size on.
constexpr uint64_t MinMovedRange = 64;

/// \p Ranges with the parts whose original bytes (input bytes, by their
/// slices) the output holds elsewhere (\p Copies) made moved ranges; the
/// rest held. A moved range keeps its one slice, for the check.
std::vector<ProvenanceContents::Range>
moveRanges(std::vector<ProvenanceContents::Range> Ranges,
           ArrayRef<InputCopy> Copies) {
  std::vector<ProvenanceContents::Range> Out;
  Out.reserve(Ranges.size());
  for (ProvenanceContents::Range &G : Ranges) {
    uint64_t At = G.Offset;
    ProvenanceContents::Range Held;
    auto flushHeld = [&] {
      if (Held.Size)
        Out.push_back(std::move(Held));
      Held = ProvenanceContents::Range();
    };
    for (const ProvenanceNote::Slice &Sl : G.Original) {
      uint64_t InPos = Sl.InputOffset, Left = Sl.Size;
      while (Left) {
        // The copy holding InPos (the last one starting at or before it),
        // else how far the next one is.
        auto It = llvm::partition_point(
            Copies, [&](const InputCopy &C) { return C.In <= InPos; });
        uint64_t N = Left;
        std::optional<uint64_t> Source;
        if (It != Copies.begin() &&
            std::prev(It)->In + std::prev(It)->Size > InPos) {
          const InputCopy &C = *std::prev(It);
          N = std::min(Left, C.In + C.Size - InPos);
          if (N >= MinMovedRange)
            Source = C.Out + (InPos - C.In);
        } else if (It != Copies.end()) {
          N = std::min(Left, It->In - InPos);
        }
        if (Source) {
          flushHeld();
          ProvenanceContents::Range *B = Out.empty() ? nullptr : &Out.back();
          if (B && B->Source && B->Offset + B->Size == At &&
              *B->Source + B->Size == *Source &&
              B->Original.back().InputOffset + B->Original.back().Size ==
                  InPos) {
            B->Size += N;
            B->Original.back().Size += N;
          } else {
            Out.push_back({At, N, {{InPos, N}}, Source});
          }
        } else {
          if (!Held.Size)
            Held.Offset = At;
          Held.Original.push_back({InPos, N});
          Held.Size += N;
        }
        At += N;
        InPos += N;
        Left -= N;
      }
    }
    flushHeld();
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
    if (Error E = checkProvenance(
            *Rec, Input, Holes ? Holes->Rebuild : RebuildFn(),
            [&Obj](ArrayRef<uint8_t> B) { Obj.releaseInput(B); }))
      return prefixError("cannot extend the provenance record", std::move(E));

  ProvenanceContents C;
  if (Rec) {
    C.OriginalSize = Rec->OriginalSize;
    C.OriginalSHA256 = Rec->OriginalSHA256;
    C.Runs = Rec->Runs;
    C.LaidOutFrom = Rec->LaidOutFrom;
  } else {
    C.OriginalSize = C.LaidOutFrom = Input.size();
    // Zeros until settle() when deferred (the checksum is redone then).
    if (!Defer)
      C.OriginalSHA256 = Digest->get();
  }
  C.Runs.push_back({getVersionString().str(), P.canonical(), Input.size()});

  // The record's section (added when there is none). \p L was laid out
  // without a new one: found or added only where it is laid out again.
  auto recordSection = [&]() -> Expected<Section *> {
    Expected<Section *> Found = findProvenanceSection(Obj);
    if (!Found)
      return prefixError("cannot extend the provenance record",
                         Found.takeError());
    if (*Found)
      return *Found;
    auto New = std::make_unique<Section>();
    New->Name = ProvenanceSectionName.str();
    New->Type = ELF::SHT_NOTE;
    New->AddrAlign = 4;
    return &Obj.addSection(std::move(New));
  };
  Section *S = nullptr;
  if (Obj.tailRelayoutAllowed()) {
    Expected<Section *> Found = recordSection();
    if (!Found)
      return Found.takeError();
    S = *Found;
    // The layout with the record in it, but for its size: laid out last
    // and after the input, the record moves nothing else whatever its size,
    // while adding it may move the tail (a layout that was in place).
    S->AfterInput = true;
    S->setExternalContents(0);
    Expected<Layout> Trial = computeLayout(Obj);
    if (!Trial)
      return prefixError("cannot add the provenance record", Trial.takeError());
    L = std::move(*Trial);
  }

  C.LaidOutFrom = std::min(C.LaidOutFrom, L.TailStart);

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
  // (Bytes are compared up to a tail that moved: what the layout put over
  // it is an edit whatever it holds, below.)
  const uint64_t Compared =
      L.InPlace ? C.OriginalSize : std::min(C.OriginalSize, L.TailStart);
  std::vector<ByteRange> Edits = subtractRanges(
      editedRanges(renderPieces(Obj, L), Input, Compared), RebuiltBytes);
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
  // What the layout wrote over a tail that moved is edited whatever bytes
  // happen to agree: its parts are then moved ranges as long as the tables
  // they were.
  if (!L.InPlace && L.TailStart < C.OriginalSize) {
    std::vector<ByteRange> Over;
    for (const OutputSpan &Sp :
         resolveOutput(renderPieces(Obj, L), L.TailStart, C.OriginalSize))
      if (!Sp.AtInputOffset)
        Over.push_back({Sp.Offset, Sp.Size});
    llvm::sort(Over, [](const ByteRange &A, const ByteRange &B) {
      return A.Offset < B.Offset;
    });
    Ranges = uniteRanges(Ranges, uniteRanges(Over, {}));
  }
  OriginalBytes Orig(Input, Rec);
  for (const ByteRange &G : Ranges)
    C.Ranges.push_back(
        {G.Offset, G.Size, Orig.slices(G.Offset, G.Size), std::nullopt});
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

  if (Obj.tailRelayoutAllowed()) {
    C.Ranges = moveRanges(std::move(C.Ranges),
                          inputCopies(renderPieces(Obj, L), L.FileSize, Input));
  }

  Expected<ProvenanceNote> Note = encodeProvenance(C);
  if (!Note)
    return Note.takeError();
  if (!S) {
    Expected<Section *> Found = recordSection();
    if (!Found)
      return Found.takeError();
    S = *Found;
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
  // Bytes compared before a tail that moved; after it, every span that is
  // not the input's own bytes at their offset is held.
  std::vector<ByteRange> Written = editedRanges(
      Out, Input,
      L.InPlace ? C.OriginalSize : std::min(C.OriginalSize, L.TailStart), 0);
  if (!L.InPlace && L.TailStart < C.OriginalSize)
    for (const OutputSpan &Sp : resolveOutput(Out, L.TailStart, C.OriginalSize))
      if (!Sp.AtInputOffset)
        Written.push_back({Sp.Offset, Sp.Size});
  llvm::sort(Written, [](const ByteRange &A, const ByteRange &B) {
    return A.Offset < B.Offset;
  });
  if (!rangesCover(uniteRanges(Ranges, RebuiltBytes, 0),
                   uniteRanges(Written, {}, 0)))
    return makeError("internal error: the output edits bytes of the input "
                     "that its provenance record does not hold");
  // Each moved range's bytes are where the record says, input bytes all.
  for (const ProvenanceContents::Range &G : C.Ranges) {
    if (!G.Source)
      continue;
    const uint8_t *From = Input.data() + G.Original.front().InputOffset;
    uint64_t Seen = 0;
    for (const OutputSpan &Sp :
         resolveOutput(Out, *G.Source, *G.Source + G.Size)) {
      if (Sp.Bytes != From + (Sp.Offset - *G.Source))
        Seen = UINT64_MAX;
      else if (Seen != UINT64_MAX)
        Seen += Sp.Size;
    }
    if (Seen != G.Size)
      return makeError("internal error: the output does not hold the "
                       "original bytes of the moved range at " +
                       hex(G.Offset) + " at " + hex(*G.Source));
  }
  finishProvenance(W.Note, hashRanges(Out, Ranges, C.LaidOutFrom));
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
