//===- lib/Passes/ProvenanceRecord.cpp - How to give back an input --------===//
//
// The record's format: parse (validating every field), check against the
// file it is in, rebuild the original, encode.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/ProvenanceRecord.h"

#include "hotswap/AMDGPU/Notes.h"
#include "hotswap/Passes/ProvenanceEdits.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/ReleaseBatch.h"
#include "hotswap/Support/Sha256.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstring>
#include <iterator>

using namespace llvm;
using namespace hotswap;

namespace {

/// Where fields are in the descriptor: the edited bytes' digest, and the
/// first run (after version, run count, original size and digest, the
/// edited bytes' digest and the range count).
constexpr uint64_t OriginalSHAAt = 16, EditedSHAAt = 48, RunsAt = 88;
/// The smallest encoded run (two empty strings) and range.
constexpr uint64_t MinRunSize = 16, RangeSize = 16, RebuiltSize = 32,
                   MovedSize = 24;
constexpr uint64_t DescAt = RecordNoteDescAt;

Error malformed(const Twine &What) {
  return makeError("provenance record: " + What);
}

Error modified(const Twine &What) {
  return makeError("the file was modified after it was rewritten: " + What);
}

/// Reads the descriptor front to back; every read is checked against what
/// remains.
class Reader {
public:
  explicit Reader(ArrayRef<uint8_t> B) : B(B) {}
  uint64_t pos() const { return Pos; }
  uint64_t left() const { return B.size() - Pos; }
  bool take(uint64_t N, ArrayRef<uint8_t> &Out) {
    if (N > left())
      return false;
    Out = B.slice(Pos, N);
    Pos += N;
    return true;
  }
  bool u32(uint32_t &V) {
    ArrayRef<uint8_t> P;
    if (!take(4, P))
      return false;
    V = support::endian::read32le(P.data());
    return true;
  }
  bool u64(uint64_t &V) {
    ArrayRef<uint8_t> P;
    if (!take(8, P))
      return false;
    V = support::endian::read64le(P.data());
    return true;
  }
  bool digest(SHA256Digest &D) {
    ArrayRef<uint8_t> P;
    if (!take(D.size(), P))
      return false;
    std::memcpy(D.data(), P.data(), D.size());
    return true;
  }

private:
  ArrayRef<uint8_t> B;
  uint64_t Pos = 0;
};

/// A string field: u32 length, bytes, UTF-8.
Error readString(Reader &R, std::string &Out, const Twine &What) {
  uint32_t N;
  ArrayRef<uint8_t> P;
  if (!R.u32(N) || !R.take(N, P))
    return malformed(What + " is truncated");
  StringRef S = toStringRef(P);
  if (!json::isUTF8(S))
    return malformed(What + " is not UTF-8");
  Out = S.str();
  return Error::success();
}

template <typename T> void put(std::vector<uint8_t> &B, T V) {
  uint8_t Bytes[sizeof(T)];
  support::endian::write<T, llvm::endianness::little>(Bytes, V);
  B.insert(B.end(), Bytes, Bytes + sizeof(T));
}

void putDigest(std::vector<uint8_t> &B, const SHA256Digest &D) {
  B.insert(B.end(), D.begin(), D.end());
}

/// Hashes \p File's bytes over \p R's ranges, in order, before where the
/// output was laid out again.
SHA256Digest hashEdited(const ProvenanceRecord &R, ArrayRef<uint8_t> File) {
  Sha256 H;
  for (const ProvenanceRange &G : R.Ranges)
    if (G.Offset < R.LaidOutFrom)
      H.update(
          File.slice(G.Offset, std::min(G.Size, R.LaidOutFrom - G.Offset)));
  return H.final();
}

/// Hashes \p Bytes into \p H, handing them to \p Release behind the hash
/// a block at a time.
constexpr size_t HashBlock = 16u << 20;

void hashReleasing(Sha256 &H, ArrayRef<uint8_t> Bytes, ReleaseBatch &Release) {
  while (!Bytes.empty()) {
    ArrayRef<uint8_t> B = Bytes.take_front(HashBlock);
    H.update(B);
    Release.add(B);
    Bytes = Bytes.drop_front(B.size());
  }
}

/// Hashes the original \p R rebuilds from \p File.
SHA256Digest hashOriginal(const ProvenanceRecord &R, ArrayRef<uint8_t> File,
                          const ReleaseFn &ReleaseFile) {
  Sha256 H;
  // The file is read forward only here (the ranges' original bytes come
  // from the record), so a block handed back is not read again: a window
  // of one hash block keeps at most that much resident (the default 64 MiB
  // window was a third of what verify held on a Tensile object).
  ReleaseBatch Release(ReleaseFile, HashBlock);
  uint64_t Pos = 0;
  for (const ProvenanceRange &G : R.Ranges) {
    hashReleasing(H, File.slice(Pos, G.Offset - Pos), Release);
    H.update(G.Original);
    Pos = G.end();
  }
  hashReleasing(H, File.slice(Pos, R.OriginalSize - Pos), Release);
  return H.final();
}

/// Versions 2 and 3: the rebuilt ranges, after the ranges (which \p Rec
/// holds).
Error readRebuilt(Reader &R, ProvenanceRecord &Rec, uint32_t Version) {
  uint64_t Count;
  if (!R.u64(Count))
    return malformed("the rebuilt ranges are truncated");
  if (Count == 0 && Version == ProvenanceRebuiltFormatVersion)
    return malformed("a record of version " +
                     Twine(ProvenanceRebuiltFormatVersion) +
                     " has no rebuilt range");
  if (Count > R.left() / RebuiltSize)
    return malformed(Twine(Count) + " rebuilt ranges do not fit in the " +
                     Twine(R.left()) + " bytes left");
  Rec.Rebuilt.reserve(Count);
  uint64_t End = 0;
  size_t Held = 0; // the first range of Rec.Ranges not before this one
  for (uint64_t I = 0; I < Count; ++I) {
    RebuiltRange G;
    const Twine What = "rebuilt range " + Twine(I);
    if (!R.u64(G.Offset) || !R.u64(G.Size) || !R.u64(G.SourceOffset) ||
        !R.u64(G.SourceSize))
      return malformed(What + " is truncated");
    if (G.Size == 0 || G.SourceSize == 0)
      return malformed(What + " is empty");
    if (G.Offset < End)
      return malformed(What + " at " + hex(G.Offset) +
                       " is not after the one before it (ending at " +
                       hex(End) + ")");
    if (G.Offset > Rec.OriginalSize || G.Size > Rec.OriginalSize - G.Offset)
      return malformed(What + " at " + hex(G.Offset) + " of " + hex(G.Size) +
                       " bytes extends past the original's " +
                       hex(Rec.OriginalSize) + " bytes");
    if (G.SourceOffset < Rec.OriginalSize ||
        G.SourceSize > UINT64_MAX - G.SourceOffset)
      return malformed(What + "'s source at " + hex(G.SourceOffset) + " of " +
                       hex(G.SourceSize) +
                       " bytes is not after the original's " +
                       hex(Rec.OriginalSize) + " bytes");
    while (Held < Rec.Ranges.size() && Rec.Ranges[Held].end() <= G.Offset)
      ++Held;
    if (Held < Rec.Ranges.size() && Rec.Ranges[Held].Offset < G.end())
      return malformed(What + " at " + hex(G.Offset) +
                       " overlaps the range at " +
                       hex(Rec.Ranges[Held].Offset));
    End = G.end();
    Rec.Rebuilt.push_back(G);
  }
  return Error::success();
}

/// Version 3: the moved ranges, after the rebuilt ones, into \p Moved.
Error readMoved(Reader &R, const ProvenanceRecord &Rec,
                std::vector<ProvenanceRange> &Moved) {
  uint64_t Count;
  if (!R.u64(Count))
    return malformed("the moved ranges are truncated");
  if (Count > R.left() / MovedSize)
    return malformed(Twine(Count) + " moved ranges do not fit in the " +
                     Twine(R.left()) + " bytes left");
  Moved.reserve(Count);
  uint64_t End = 0;
  size_t Held = 0, Built = 0; // the first of each not before this one
  for (uint64_t I = 0; I < Count; ++I) {
    ProvenanceRange G;
    uint64_t Source;
    const Twine What = "moved range " + Twine(I);
    if (!R.u64(G.Offset) || !R.u64(G.Size) || !R.u64(Source))
      return malformed(What + " is truncated");
    if (G.Size == 0)
      return malformed(What + " is empty");
    if (G.Offset < End)
      return malformed(What + " at " + hex(G.Offset) +
                       " is not after the one before it (ending at " +
                       hex(End) + ")");
    if (G.Offset > Rec.OriginalSize || G.Size > Rec.OriginalSize - G.Offset)
      return malformed(What + " at " + hex(G.Offset) + " of " + hex(G.Size) +
                       " bytes extends past the original's " +
                       hex(Rec.OriginalSize) + " bytes");
    if (G.Size > UINT64_MAX - Source)
      return malformed(What + "'s source at " + hex(Source) + " of " +
                       hex(G.Size) + " bytes wraps around");
    while (Held < Rec.Ranges.size() && Rec.Ranges[Held].end() <= G.Offset)
      ++Held;
    if (Held < Rec.Ranges.size() && Rec.Ranges[Held].Offset < G.end())
      return malformed(What + " at " + hex(G.Offset) +
                       " overlaps the range at " +
                       hex(Rec.Ranges[Held].Offset));
    while (Built < Rec.Rebuilt.size() && Rec.Rebuilt[Built].end() <= G.Offset)
      ++Built;
    if (Built < Rec.Rebuilt.size() && Rec.Rebuilt[Built].Offset < G.end())
      return malformed(What + " at " + hex(G.Offset) +
                       " overlaps the rebuilt range at " +
                       hex(Rec.Rebuilt[Built].Offset));
    G.Source = Source;
    End = G.end();
    Moved.push_back(G);
  }
  return Error::success();
}

/// SHA-256 of the output \p P describes in [0, Size); what it reads of
/// \p File is handed to \p ReleaseFile behind it (not other bytes: a
/// rebuilt bundle's are no page of the file).
SHA256Digest hashPieces(const OutputPieces &P, uint64_t Size,
                        ArrayRef<uint8_t> File, const ReleaseFn &ReleaseFile) {
  static const uint8_t Zeros[4096] = {};
  Sha256 H;
  ReleaseBatch Release(ReleaseFile);
  ReleaseBatch None({});
  for (const OutputSpan &S : resolveOutput(P, 0, Size)) {
    if (S.Bytes) {
      const bool InFile = S.Bytes >= File.data() && S.Bytes <= File.end() &&
                          S.Size <= uint64_t(File.end() - S.Bytes);
      hashReleasing(H, ArrayRef<uint8_t>(S.Bytes, S.Size),
                    InFile ? Release : None);
      continue;
    }
    for (uint64_t Done = 0; Done < S.Size; Done += sizeof(Zeros))
      H.update(ArrayRef<uint8_t>(
          Zeros, std::min<uint64_t>(sizeof(Zeros), S.Size - Done)));
  }
  return H.final();
}

} // namespace

uint64_t ProvenanceRecord::editedBytes() const {
  uint64_t N = 0;
  for (const ProvenanceRange &G : Ranges)
    if (!G.Source)
      N += G.Size; // ranges lie inside OriginalSize: no overflow
  return N;
}

uint64_t ProvenanceRecord::movedBytes() const {
  uint64_t N = 0;
  for (const ProvenanceRange &G : Ranges)
    if (G.Source)
      N += G.Size;
  return N;
}

std::string hotswap::digestHex(const SHA256Digest &D) {
  return toHex(ArrayRef<uint8_t>(D), /*LowerCase=*/true);
}

Expected<ProvenanceRecord>
hotswap::parseProvenanceNote(ArrayRef<uint8_t> SectionBytes) {
  Expected<ArrayRef<uint8_t>> Note =
      recordNoteDesc(SectionBytes, RecordNoteType::Provenance);
  if (!Note)
    return prefixError("provenance record", Note.takeError());
  ArrayRef<uint8_t> Desc = *Note;
  Reader R(Desc);
  ProvenanceRecord Rec;
  uint32_t Version, RunCount;
  uint64_t RangeCount;
  if (!R.u32(Version) || !R.u32(RunCount) || !R.u64(Rec.OriginalSize) ||
      !R.digest(Rec.OriginalSHA256) || !R.digest(Rec.EditedSHA256) ||
      !R.u64(RangeCount))
    return malformed("the descriptor is truncated (" + Twine(Desc.size()) +
                     " bytes)");
  if (Version != ProvenanceFormatVersion &&
      Version != ProvenanceRebuiltFormatVersion &&
      Version != ProvenanceMovedFormatVersion)
    return malformed("unknown format version " + Twine(Version));
  if (RunCount == 0)
    return malformed("no run");
  // Counts against what could hold them, before anything is allocated.
  if (RunCount > R.left() / MinRunSize)
    return malformed(Twine(RunCount) + " runs do not fit in the " +
                     Twine(R.left()) + " bytes left");
  Rec.Runs.reserve(RunCount);
  for (uint32_t I = 0; I < RunCount; ++I) {
    ProvenanceRun Run;
    const Twine What = "run " + Twine(I + 1);
    if (!R.u64(Run.InputSize))
      return malformed(What + " is truncated");
    if (Error E = readString(R, Run.Version, What + ": its tool version"))
      return std::move(E);
    if (Error E = readString(R, Run.Pipeline, What + ": its pipeline"))
      return std::move(E);
    if (I == 0 ? Run.InputSize != Rec.OriginalSize
               : Run.InputSize < Rec.OriginalSize)
      return malformed(What + " read " + Twine(Run.InputSize) +
                       " bytes, but the original has " +
                       Twine(Rec.OriginalSize));
    Rec.Runs.push_back(std::move(Run));
  }
  if (RangeCount > R.left() / RangeSize)
    return malformed(Twine(RangeCount) + " ranges do not fit in the " +
                     Twine(R.left()) + " bytes left");
  Rec.Ranges.reserve(RangeCount);
  uint64_t End = 0, Total = 0;
  for (uint64_t I = 0; I < RangeCount; ++I) {
    ProvenanceRange G;
    if (!R.u64(G.Offset) || !R.u64(G.Size))
      return malformed("range " + Twine(I) + " is truncated");
    if (G.Size == 0)
      return malformed("range " + Twine(I) + " is empty");
    if (G.Offset < End)
      return malformed("range " + Twine(I) + " at " + hex(G.Offset) +
                       " is not after the one before it (ending at " +
                       hex(End) + ")");
    if (G.Offset > Rec.OriginalSize || G.Size > Rec.OriginalSize - G.Offset)
      return malformed("range " + Twine(I) + " at " + hex(G.Offset) + " of " +
                       hex(G.Size) + " bytes extends past the original's " +
                       hex(Rec.OriginalSize) + " bytes");
    End = G.end();
    Total += G.Size; // disjoint, inside OriginalSize: no overflow
    Rec.Ranges.push_back(G);
  }
  if (Version != ProvenanceFormatVersion)
    if (Error E = readRebuilt(R, Rec, Version))
      return std::move(E);
  std::vector<ProvenanceRange> Moved;
  Rec.LaidOutFrom = Rec.OriginalSize;
  if (Version == ProvenanceMovedFormatVersion) {
    if (Error E = readMoved(R, Rec, Moved))
      return std::move(E);
    if (!R.u64(Rec.LaidOutFrom))
      return malformed("where the output was laid out again is truncated");
    if (Rec.LaidOutFrom > Rec.OriginalSize)
      return malformed("it was laid out again from " + hex(Rec.LaidOutFrom) +
                       ", past the original's " + hex(Rec.OriginalSize) +
                       " bytes");
    if (Moved.empty() && Rec.LaidOutFrom == Rec.OriginalSize)
      return malformed("a record of version " +
                       Twine(ProvenanceMovedFormatVersion) +
                       " with neither a moved range nor a tail laid out "
                       "again");
  }
  const uint64_t Checked = R.pos();
  if (!R.digest(Rec.Checksum))
    return malformed("the checksum is truncated");
  if (Sha256::hash(Desc.take_front(Checked)) != Rec.Checksum)
    return modified("its provenance record does not match its checksum");
  if (R.left() != Total)
    return malformed("it holds " + Twine(R.left()) +
                     " bytes of original contents for ranges of " +
                     Twine(Total) + " bytes");
  for (ProvenanceRange &G : Rec.Ranges) {
    ArrayRef<uint8_t> Bytes;
    (void)R.take(G.Size, Bytes);
    G.Original = Bytes;
  }
  // One list in offset order (each was sorted, and they are disjoint).
  if (!Moved.empty()) {
    std::vector<ProvenanceRange> All;
    All.reserve(Rec.Ranges.size() + Moved.size());
    std::merge(Rec.Ranges.begin(), Rec.Ranges.end(), Moved.begin(), Moved.end(),
               std::back_inserter(All),
               [](const ProvenanceRange &A, const ProvenanceRange &B) {
                 return A.Offset < B.Offset;
               });
    Rec.Ranges = std::move(All);
  }
  return std::move(Rec);
}

Expected<Section *> hotswap::findProvenanceSection(const Object &Obj) {
  Section *Found = nullptr;
  for (const auto &S : Obj.sections()) {
    if (S->Name != ProvenanceSectionName)
      continue;
    if (Found)
      return makeError("sections " + Twine(Found->index()) + " and " +
                       Twine(S->index()) + " are both '" +
                       ProvenanceSectionName + "'");
    Found = S.get();
  }
  if (!Found)
    return nullptr;
  const Section &S = *Found;
  if (S.Type != ELF::SHT_NOTE || S.isAlloc() || S.isNoBits())
    return makeError("section '" + ProvenanceSectionName +
                     "' is not a note without SHF_ALLOC");
  return Found;
}

Expected<std::optional<ProvenanceRecord>>
hotswap::readProvenance(const Object &Obj) {
  Expected<Section *> S = findProvenanceSection(Obj);
  if (!S)
    return S.takeError();
  if (!*S)
    return std::nullopt;
  const Section &Sec = **S;
  if (!Sec.Orig)
    return makeError("section '" + ProvenanceSectionName +
                     "' is not the input's");
  // Parsed from the input, whatever a pass did to the model since.
  ArrayRef<uint8_t> Bytes = Obj.input().slice(Sec.Orig->Offset, Sec.Orig->Size);
  Expected<ProvenanceRecord> R = parseProvenanceNote(Bytes);
  if (!R)
    return R.takeError();
  if (Error E = resolveMovedRanges(*R, Obj.input()))
    return std::move(E);
  const uint64_t Begin = Sec.Orig->Offset, End = Begin + Sec.Orig->Size;
  if (Begin < R->OriginalSize)
    return malformed("it lies at " + hex(Begin) + ", inside the original's " +
                     hex(R->OriginalSize) + " bytes it describes");
  for (const auto &P : Obj.segments()) {
    if ((P->Type != ELF::PT_LOAD && P->Type != ELF::PT_NOTE) || P->IsNew ||
        P->FileSize == 0)
      continue;
    if (P->Offset < End &&
        (Begin < P->Offset || Begin - P->Offset < P->FileSize))
      return malformed(
          "it lies inside a " +
          StringRef(P->Type == ELF::PT_LOAD ? "PT_LOAD" : "PT_NOTE") +
          " segment at offset " + hex(P->Offset));
  }
  return std::optional<ProvenanceRecord>(std::move(*R));
}

Error hotswap::resolveMovedRanges(ProvenanceRecord &R, ArrayRef<uint8_t> File) {
  for (ProvenanceRange &G : R.Ranges) {
    if (!G.Source)
      continue;
    if (*G.Source > File.size() || G.Size > File.size() - *G.Source)
      return malformed("the moved range at " + hex(G.Offset) +
                       " has its bytes at " + hex(*G.Source) + " +" +
                       hex(G.Size) + ", past the file's end (" +
                       hex(File.size()) + ")");
    G.Original = File.slice(*G.Source, G.Size);
  }
  return Error::success();
}

/// The checks of checkProvenance that need no rebuilt range.
static Error checkHeld(const ProvenanceRecord &R, ArrayRef<uint8_t> File) {
  if (File.size() < R.OriginalSize)
    return modified("it has " + Twine(File.size()) + " bytes, fewer than the " +
                    Twine(R.OriginalSize) +
                    " of the original it was rewritten from");
  if (hashEdited(R, File) != R.EditedSHA256)
    return modified("the bytes it edited in place (" + Twine(R.Ranges.size()) +
                    " ranges) are not what it "
                    "wrote there");
  return Error::success();
}

static Error notTheOriginal(const ProvenanceRecord &R) {
  return modified("the original rebuilt from it does not have the "
                  "recorded SHA-256 " +
                  digestHex(R.OriginalSHA256));
}

Error hotswap::checkProvenance(const ProvenanceRecord &R,
                               ArrayRef<uint8_t> File, const RebuildFn &Rebuild,
                               const ReleaseFn &Release) {
  if (!R.Rebuilt.empty())
    return checkedOriginal(R, File, Rebuild, Release).takeError();
  if (Error E = checkHeld(R, File))
    return E;
  if (hashOriginal(R, File, Release) != R.OriginalSHA256)
    return notTheOriginal(R);
  return Error::success();
}

Expected<OutputPieces> hotswap::checkedOriginal(const ProvenanceRecord &R,
                                                ArrayRef<uint8_t> File,
                                                const RebuildFn &Rebuild,
                                                const ReleaseFn &Release) {
  Expected<OriginalAhead> A = originalAheadOfCheck(R, File, Rebuild, Release);
  if (!A)
    return A.takeError();
  if (Error E = A->DigestCheck())
    return std::move(E);
  return std::move(A->Pieces);
}

Expected<OriginalAhead>
hotswap::originalAheadOfCheck(const ProvenanceRecord &R, ArrayRef<uint8_t> File,
                              const RebuildFn &Rebuild,
                              const ReleaseFn &Release) {
  if (R.Rebuilt.empty()) {
    if (Error E = checkHeld(R, File))
      return std::move(E);
    OriginalAhead A;
    A.Pieces = originalPieces(R, File);
    A.DigestCheck = [R, File, Release]() -> Error {
      if (hashOriginal(R, File, Release) != R.OriginalSHA256)
        return notTheOriginal(R);
      return Error::success();
    };
    return std::move(A);
  }
  if (!Rebuild)
    return makeError("its provenance record rebuilds " +
                     Twine(R.Rebuilt.size()) +
                     " ranges from bundles, which only a HIP host binary's "
                     "record does");
  if (Error E = checkHeld(R, File))
    return std::move(E);
  // The file's bytes but in the rebuilt ranges (holes, zeros where no
  // piece of a rebuilt bundle goes), then the held ranges' originals.
  OriginalAhead A;
  OutputPieces &P = A.Pieces;
  uint64_t Pos = 0;
  for (const RebuiltRange &G : R.Rebuilt) {
    if (G.Offset > Pos)
      P.Pieces.push_back({Pos, File.slice(Pos, G.Offset - Pos), Pos});
    Pos = G.end();
  }
  if (Pos < R.OriginalSize)
    P.Pieces.push_back({Pos, File.slice(Pos, R.OriginalSize - Pos), Pos});
  for (const ProvenanceRange &G : R.Ranges)
    P.Pieces.push_back(
        {G.Offset, G.Original, uint64_t(G.Original.data() - File.data())});
  for (const RebuiltRange &G : R.Rebuilt) {
    if (G.SourceOffset > File.size() ||
        G.SourceSize > File.size() - G.SourceOffset)
      return modified("the bundle at " + hex(G.SourceOffset) + " of " +
                      hex(G.SourceSize) + " bytes that rebuilds the one at " +
                      hex(G.Offset) + " extends past its end (" +
                      hex(File.size()) + ")");
    Expected<OutputPieces> B = Rebuild(G);
    if (!B)
      return prefixError("the bundle at " + hex(G.SourceOffset) +
                             " does not rebuild the one at " + hex(G.Offset),
                         B.takeError());
    uint64_t End = 0;
    for (const OutputPiece &Piece : B->Pieces)
      End = std::max<uint64_t>(End, Piece.Offset + Piece.Bytes.size());
    if (End > G.Size)
      return modified("the bundle at " + hex(G.SourceOffset) + " rebuilds " +
                      hex(End) + " bytes or more, not the " + hex(G.Size) +
                      " of the one at " + hex(G.Offset));
    P.append(std::move(*B), G.Offset, uint64_t(0));
    // (What the rebuild read of the source, handed back.)
    if (Release)
      Release(File.slice(G.SourceOffset, G.SourceSize));
  }
  // The pieces, not the buffers they point into (which stay in A.Pieces,
  // whose owner keeps them until the check is done).
  OutputPieces Hashed;
  Hashed.Pieces = P.Pieces;
  A.DigestCheck = [R, File, Release, Hashed = std::move(Hashed)]() -> Error {
    if (hashPieces(Hashed, R.OriginalSize, File, Release) != R.OriginalSHA256)
      return notTheOriginal(R);
    return Error::success();
  };
  return std::move(A);
}

OutputPieces hotswap::originalPieces(const ProvenanceRecord &R,
                                     ArrayRef<uint8_t> File) {
  assert(R.Rebuilt.empty() && "rebuilt ranges: checkedOriginal");
  OutputPieces P;
  P.Pieces.push_back({0, File.take_front(R.OriginalSize), uint64_t(0)});
  for (const ProvenanceRange &G : R.Ranges) {
    assert(G.Original.data() >= File.data() &&
           G.Original.data() + G.Size <= File.data() + File.size() &&
           "a record read from another file");
    P.Pieces.push_back(
        {G.Offset, G.Original, uint64_t(G.Original.data() - File.data())});
  }
  return P;
}

OutputPieces ProvenanceNote::pieces(ArrayRef<uint8_t> Input) const {
  static const uint8_t Zeros[4] = {};
  OutputPieces P;
  P.Pieces.push_back({0, Head, std::nullopt});
  uint64_t At = Head.size();
  for (const Slice &S : Slices) {
    if (S.Size)
      P.Pieces.push_back(
          {At, Input.slice(S.InputOffset, S.Size), S.InputOffset});
    At += S.Size;
  }
  if (At < Size)
    P.Pieces.push_back({At, ArrayRef<uint8_t>(Zeros, Size - At), std::nullopt});
  return P;
}

Expected<ProvenanceNote>
hotswap::encodeProvenance(const ProvenanceContents &C) {
  ProvenanceNote N;
  std::vector<uint8_t> Desc;
  size_t MovedCount = 0;
  for (const ProvenanceContents::Range &G : C.Ranges)
    MovedCount += G.Source.has_value();
  const bool Moves = MovedCount || C.LaidOutFrom < C.OriginalSize;
  put<uint32_t>(Desc, Moves               ? ProvenanceMovedFormatVersion
                      : C.Rebuilt.empty() ? ProvenanceFormatVersion
                                          : ProvenanceRebuiltFormatVersion);
  put<uint32_t>(Desc, static_cast<uint32_t>(C.Runs.size()));
  put<uint64_t>(Desc, C.OriginalSize);
  putDigest(Desc, C.OriginalSHA256);
  putDigest(Desc, SHA256Digest{}); // the edited bytes' digest, at the end
  put<uint64_t>(Desc, C.Ranges.size() - MovedCount);
  assert(Desc.size() == RunsAt && "field positions");
  (void)RunsAt;
  if (C.Runs.size() > UINT32_MAX)
    return makeError("too many runs for a provenance record");
  for (const ProvenanceRun &R : C.Runs) {
    for (StringRef S : {StringRef(R.Version), StringRef(R.Pipeline)})
      if (!json::isUTF8(S) || S.size() > UINT32_MAX)
        return makeError("cannot record the pipeline: not UTF-8, or too long");
    put<uint64_t>(Desc, R.InputSize);
    put<uint32_t>(Desc, static_cast<uint32_t>(R.Version.size()));
    Desc.insert(Desc.end(), R.Version.begin(), R.Version.end());
    put<uint32_t>(Desc, static_cast<uint32_t>(R.Pipeline.size()));
    Desc.insert(Desc.end(), R.Pipeline.begin(), R.Pipeline.end());
  }
  uint64_t Blob = 0;
  for (const ProvenanceContents::Range &G : C.Ranges) {
    if (G.Source)
      continue;
    put<uint64_t>(Desc, G.Offset);
    put<uint64_t>(Desc, G.Size);
    Blob += G.Size; // disjoint ranges of the original: no overflow
    for (const ProvenanceNote::Slice &S : G.Original)
      N.Slices.push_back(S);
  }
  if (!C.Rebuilt.empty() || Moves) {
    put<uint64_t>(Desc, C.Rebuilt.size());
    for (const RebuiltRange &G : C.Rebuilt) {
      put<uint64_t>(Desc, G.Offset);
      put<uint64_t>(Desc, G.Size);
      put<uint64_t>(Desc, G.SourceOffset);
      put<uint64_t>(Desc, G.SourceSize);
    }
  }
  if (Moves) {
    put<uint64_t>(Desc, MovedCount);
    for (const ProvenanceContents::Range &G : C.Ranges)
      if (G.Source) {
        put<uint64_t>(Desc, G.Offset);
        put<uint64_t>(Desc, G.Size);
        put<uint64_t>(Desc, *G.Source);
      }
    put<uint64_t>(Desc, std::min(C.LaidOutFrom, C.OriginalSize));
  }
  putDigest(Desc, SHA256Digest{}); // the checksum, at the end
  const uint64_t DescSize = Desc.size() + Blob;
  if (DescSize > UINT32_MAX)
    return makeError("the provenance record would hold " + Twine(DescSize) +
                     " bytes, more than a note can (4 GiB)");
  putRecordNoteHead(N.Head, RecordNoteType::Provenance,
                    static_cast<uint32_t>(DescSize));
  assert(N.Head.size() == DescAt && "note header and owner");
  N.Head.insert(N.Head.end(), Desc.begin(), Desc.end());
  N.Size = DescAt + alignTo(DescSize, amdgpu::NoteAlign);
  return std::move(N);
}

/// The record's checksum, over its descriptor but the original bytes.
static void checksumProvenance(ProvenanceNote &N) {
  const uint64_t ChecksumAt = N.Head.size() - sizeof(SHA256Digest);
  SHA256Digest Sum = Sha256::hash(
      ArrayRef<uint8_t>(N.Head).slice(DescAt, ChecksumAt - DescAt));
  std::memcpy(N.Head.data() + ChecksumAt, Sum.data(), Sum.size());
}

void hotswap::finishProvenance(ProvenanceNote &N, const SHA256Digest &Edited) {
  std::memcpy(N.Head.data() + DescAt + EditedSHAAt, Edited.data(),
              Edited.size());
  checksumProvenance(N);
}

void hotswap::setOriginalDigest(ProvenanceNote &N,
                                const SHA256Digest &Original) {
  std::memcpy(N.Head.data() + DescAt + OriginalSHAAt, Original.data(),
              Original.size());
  checksumProvenance(N);
}
