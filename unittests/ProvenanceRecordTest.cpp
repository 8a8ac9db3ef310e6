//===- unittests/ProvenanceRecordTest.cpp - Provenance record tests -------===//
//
// The record's format on its own: encoded, read back, checked against the
// file it is in, the original rebuilt; each kind of tampering told apart;
// malformed records refused. And the edits an output makes, read off its
// pieces.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/ProvenanceRecord.h"
#include "hotswap/Passes/ProvenanceEdits.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/ReleaseBatch.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/SHA256.h"

#include "gtest/gtest.h"

#include <random>

using namespace llvm;
using namespace hotswap;

namespace {

/// An original of 64 bytes, rewritten: bytes [8, 12) and [40, 41) edited
/// in place, then its record appended (as a rewrite lays it out: after the
/// original's last byte).
struct Rewritten {
  std::vector<uint8_t> Original, File;
  uint64_t RecordAt = 0;

  Rewritten() {
    for (unsigned I = 0; I != 64; ++I)
      Original.push_back(uint8_t(I * 7 + 1));
    File = Original;
    for (unsigned I = 8; I != 12; ++I)
      File[I] ^= 0xff;
    File[40] ^= 0x55;

    ProvenanceContents C;
    C.OriginalSize = Original.size();
    C.OriginalSHA256 = SHA256::hash(Original);
    C.Runs.push_back({"1.0", "synth-trampolines,patch-descriptors", 64});
    C.Ranges.push_back({8, 4, {{8, 4}}});
    C.Ranges.push_back({40, 1, {{40, 1}}});
    Expected<ProvenanceNote> N = encodeProvenance(C);
    EXPECT_TRUE(bool(N)) << toString(N.takeError());
    SHA256 Edited;
    Edited.update(ArrayRef<uint8_t>(File).slice(8, 4));
    Edited.update(ArrayRef<uint8_t>(File).slice(40, 1));
    finishProvenance(*N, Edited.final());
    RecordAt = File.size();
    File.resize(RecordAt + N->Size);
    OutputPieces P = N->pieces(Original);
    std::vector<uint8_t> Section(N->Size);
    P.applyTo(Section);
    std::copy(Section.begin(), Section.end(), File.begin() + RecordAt);
  }

  ArrayRef<uint8_t> section() const {
    return ArrayRef<uint8_t>(File).drop_front(RecordAt);
  }
};

std::string problem(const Rewritten &W) {
  Expected<ProvenanceRecord> R = parseProvenanceNote(W.section());
  if (!R)
    return toString(R.takeError());
  Error E = checkProvenance(*R, W.File);
  return E ? toString(std::move(E)) : "";
}

TEST(ProvenanceRecordTest, ReadsBackAndRebuildsTheOriginal) {
  Rewritten W;
  Expected<ProvenanceRecord> R = parseProvenanceNote(W.section());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(R->OriginalSize, 64u);
  EXPECT_EQ(R->OriginalSHA256, SHA256::hash(W.Original));
  ASSERT_EQ(R->Runs.size(), 1u);
  EXPECT_EQ(R->Runs[0].Version, "1.0");
  EXPECT_EQ(R->Runs[0].Pipeline, "synth-trampolines,patch-descriptors");
  EXPECT_EQ(R->Runs[0].InputSize, 64u);
  ASSERT_EQ(R->Ranges.size(), 2u);
  EXPECT_EQ(R->Ranges[0].Offset, 8u);
  EXPECT_EQ(R->Ranges[1].end(), 41u);
  EXPECT_EQ(R->editedBytes(), 5u);
  ASSERT_FALSE(bool(checkProvenance(*R, W.File)));

  std::vector<uint8_t> Back(R->OriginalSize);
  originalPieces(*R, W.File).applyTo(Back);
  EXPECT_EQ(Back, W.Original);
}

TEST(ProvenanceRecordTest, TellsTamperingApart) {
  EXPECT_EQ(problem(Rewritten()), "");
  {
    Rewritten W;
    W.File[0] ^= 1; // outside the edited ranges
    EXPECT_NE(problem(W).find("the file was modified after it was "
                              "rewritten: the original rebuilt from it "
                              "does not have the recorded SHA-256"),
              std::string::npos)
        << problem(W);
  }
  {
    Rewritten W;
    W.File[9] ^= 1; // inside an edited range
    EXPECT_EQ(problem(W), "the file was modified after it was rewritten: "
                          "the bytes it edited in place (2 ranges) are not "
                          "what it wrote there");
  }
  {
    Rewritten W;
    W.File[W.RecordAt + 0x24] ^= 1; // the original's digest in the record
    EXPECT_EQ(problem(W), "the file was modified after it was rewritten: "
                          "its provenance record does not match its "
                          "checksum");
  }
  {
    Rewritten W;
    // The last original byte the record holds: the descriptor's last
    // (its size is the note's second word; it starts after 20 bytes).
    const uint32_t DescSize =
        support::endian::read32le(&W.File[W.RecordAt + 4]);
    W.File[W.RecordAt + 20 + DescSize - 1] ^= 1;
    EXPECT_NE(problem(W).find("does not have the recorded SHA-256"),
              std::string::npos)
        << problem(W);
  }
  {
    Rewritten W;
    W.File.resize(W.RecordAt); // (the record parsed before the cut)
    Expected<ProvenanceRecord> R = parseProvenanceNote(Rewritten().section());
    ASSERT_TRUE(bool(R));
    ArrayRef<uint8_t> Short = ArrayRef<uint8_t>(W.File).take_front(63);
    Error E = checkProvenance(*R, Short);
    EXPECT_EQ(toString(std::move(E)),
              "the file was modified after it was rewritten: it has 63 "
              "bytes, fewer than the 64 of the original it was rewritten "
              "from");
  }
}

TEST(ProvenanceRecordTest, RefusesMalformedRecords) {
  Rewritten W;
  for (size_t Cut : {size_t(0), size_t(12), size_t(20), size_t(40),
                     W.section().size() - 1}) {
    SCOPED_TRACE(Cut);
    Expected<ProvenanceRecord> R =
        parseProvenanceNote(W.section().take_front(Cut));
    ASSERT_FALSE(bool(R));
    EXPECT_EQ(toString(R.takeError()).rfind("provenance record: ", 0), 0u);
  }
  // The format version (the descriptor's first field, after the 20 bytes of
  // note header and owner).
  std::vector<uint8_t> Bad(W.section().begin(), W.section().end());
  Bad[20] = 7;
  Expected<ProvenanceRecord> R = parseProvenanceNote(Bad);
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(toString(R.takeError()),
            "provenance record: unknown format version 7");
}

TEST(ProvenanceRecordTest, EditsAreReadOffThePieces) {
  std::vector<uint8_t> Input(100, 0xaa);
  std::vector<uint8_t> Patch = {0xaa, 0xbb, 0xbb, 0xaa};
  std::vector<uint8_t> Far = {0xcc};
  OutputPieces P;
  P.Pieces.push_back({0, Input, uint64_t(0)});
  P.Pieces.push_back({10, Patch, std::nullopt}); // edits [11, 13)
  P.Pieces.push_back({60, Far, std::nullopt});   // edits [60, 61)
  P.Pieces.push_back({100, Far, std::nullopt});  // past the input: no edit
  std::vector<ByteRange> R = editedRanges(P, Input, Input.size());
  EXPECT_EQ(R, (std::vector<ByteRange>{{11, 2}, {60, 1}}));
  // Fewer than the merge gap apart: one range.
  EXPECT_EQ(editedRanges(P, Input, Input.size(), 64),
            (std::vector<ByteRange>{{11, 50}}));
  EXPECT_EQ(uniteRanges(R, std::vector<ByteRange>{{0, 12}}, 0),
            (std::vector<ByteRange>{{0, 13}, {60, 1}}));
  EXPECT_TRUE(rangesCover(std::vector<ByteRange>{{0, 20}, {50, 20}}, R));
  EXPECT_FALSE(rangesCover(std::vector<ByteRange>{{0, 12}, {50, 20}}, R));
}

// Against the definition, byte by byte: pieces of memory and of zeros
// (where none goes) over random inputs with edits of every length at every
// alignment, merge gaps 0 and 5.
TEST(ProvenanceRecordTest, EditedRangesAreEveryDifferingRun) {
  std::mt19937 Rng(7);
  for (int Round = 0; Round < 300; ++Round) {
    const size_t Size = 1 + Rng() % 200;
    std::vector<uint8_t> Input(Size);
    for (uint8_t &B : Input)
      B = Rng() % 3 == 0 ? 0 : uint8_t(Rng());
    // A copy of a slice with some bytes changed, and a hole (zeros).
    const size_t From = Rng() % Size, To = From + Rng() % (Size - From + 1);
    std::vector<uint8_t> Patch(Input.begin() + From, Input.begin() + To);
    for (size_t K = Rng() % 6; K; --K)
      if (!Patch.empty()) {
        const size_t At = Rng() % Patch.size(), Len = 1 + Rng() % 12;
        for (size_t J = At; J < std::min(Patch.size(), At + Len); ++J)
          Patch[J] ^= uint8_t(1 + Rng() % 255);
      }
    const size_t HoleAt = Rng() % Size, HoleEnd = std::min(Size, HoleAt + 20);
    OutputPieces P;
    P.Pieces.push_back(
        {0, ArrayRef<uint8_t>(Input).take_front(HoleAt), uint64_t(0)});
    P.Pieces.push_back({HoleEnd, ArrayRef<uint8_t>(Input).drop_front(HoleEnd),
                        uint64_t(HoleEnd)});
    P.Pieces.push_back({From, Patch, std::nullopt});
    std::vector<uint8_t> Out(Size + 8);
    P.applyTo(Out);
    for (uint64_t Gap : {uint64_t(0), uint64_t(5)}) {
      std::vector<ByteRange> Want;
      for (size_t I = 0; I < Size;) {
        if (Out[I] == Input[I]) {
          ++I;
          continue;
        }
        size_t J = I;
        while (J < Size && Out[J] != Input[J])
          ++J;
        if (!Want.empty() && I - Want.back().end() < Gap)
          Want.back().Size = J - Want.back().Offset;
        else
          Want.push_back({I, J - I});
        I = J;
      }
      EXPECT_EQ(editedRanges(P, Input, Size, Gap), Want)
          << "round " << Round << ", gap " << Gap;
    }
  }
}

/// An original of 64 bytes whose [16, 32) the file holds as zeros (a hole),
/// [8, 12) edited in place; what restores [16, 32) lies after the original,
/// at [64, 80), reversed (a stand-in for a bundle that restore lays out
/// again). Then the record.
struct WithRebuilt {
  std::vector<uint8_t> Original, File;
  uint64_t RecordAt = 0;

  explicit WithRebuilt(bool Overlap = false) {
    for (unsigned I = 0; I != 64; ++I)
      Original.push_back(uint8_t(I * 5 + 3));
    File = Original;
    for (unsigned I = 8; I != 12; ++I)
      File[I] ^= 0xff;
    std::fill(File.begin() + 16, File.begin() + 32, 0);
    File.insert(File.end(), Original.rbegin() + 32, Original.rbegin() + 48);

    ProvenanceContents C;
    C.OriginalSize = Original.size();
    C.OriginalSHA256 = SHA256::hash(Original);
    C.Runs.push_back({"1.0", "synth-trampolines", 64});
    C.Ranges.push_back({8, Overlap ? 12u : 4u, {{8, Overlap ? 12u : 4u}}});
    C.Rebuilt.push_back({16, 16, 64, 16});
    Expected<ProvenanceNote> N = encodeProvenance(C);
    EXPECT_TRUE(bool(N)) << toString(N.takeError());
    finishProvenance(
        *N, SHA256::hash(ArrayRef<uint8_t>(File).slice(8, Overlap ? 12 : 4)));
    RecordAt = File.size();
    File.resize(RecordAt + N->Size);
    std::vector<uint8_t> Section(N->Size);
    N->pieces(Original).applyTo(Section);
    std::copy(Section.begin(), Section.end(), File.begin() + RecordAt);
  }

  ArrayRef<uint8_t> section() const {
    return ArrayRef<uint8_t>(File).drop_front(RecordAt);
  }

  /// The source of \p G reversed, as one owned piece.
  RebuildFn rebuilder(uint8_t Flip = 0) const {
    return [this, Flip](const RebuiltRange &G) -> Expected<OutputPieces> {
      OutputPieces P;
      std::vector<uint8_t> &B = P.Owned.emplace_back(
          File.rbegin() + (File.size() - G.SourceOffset - G.SourceSize),
          File.rbegin() + (File.size() - G.SourceOffset));
      B[0] ^= Flip;
      P.Pieces.push_back({0, B, std::nullopt});
      return std::move(P);
    };
  }
};

TEST(ProvenanceRecordTest, RebuiltRanges) {
  WithRebuilt W;
  // Version 2 (the descriptor's first field, after the note's header and
  // owner), only because there is a rebuilt range.
  EXPECT_EQ(support::endian::read32le(W.section().data() + 20), 2u);
  Expected<ProvenanceRecord> R = parseProvenanceNote(W.section());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_EQ(R->Rebuilt.size(), 1u);
  EXPECT_EQ(R->Rebuilt[0], (RebuiltRange{16, 16, 64, 16}));
  EXPECT_EQ(R->editedBytes(), 4u);

  // Without a way to rebuild it, nothing leads back.
  Error E = checkProvenance(*R, W.File);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("rebuilds 1 ranges from bundles"),
            std::string::npos);

  Expected<OutputPieces> P = checkedOriginal(*R, W.File, W.rebuilder());
  ASSERT_TRUE(bool(P)) << toString(P.takeError());
  std::vector<uint8_t> Back(R->OriginalSize);
  P->applyTo(Back);
  EXPECT_EQ(Back, W.Original);
  EXPECT_FALSE(bool(checkProvenance(*R, W.File, W.rebuilder())));

  // A rebuild that is other bytes, or fails, or a source past the end.
  E = checkProvenance(*R, W.File, W.rebuilder(1));
  EXPECT_NE(toString(std::move(E)).find("does not have the recorded SHA-256"),
            std::string::npos);
  E = checkProvenance(*R, W.File, [](const RebuiltRange &) {
    return Expected<OutputPieces>(makeError("no bundle there"));
  });
  EXPECT_EQ(toString(std::move(E)),
            "the bundle at 0x40 does not rebuild the one at 0x10: no bundle "
            "there");
  ProvenanceRecord Short = *R;
  Short.Rebuilt[0].SourceSize = W.File.size();
  E = checkProvenance(Short, W.File, W.rebuilder());
  EXPECT_NE(toString(std::move(E)).find("extends past its end"),
            std::string::npos);
}

/// The bytes of \p File handed to a release, as a map of which were.
struct Released {
  ArrayRef<uint8_t> File;
  std::vector<bool> Seen;
  unsigned Calls = 0;
  explicit Released(ArrayRef<uint8_t> File)
      : File(File), Seen(File.size(), false) {}
  ReleaseFn fn() {
    return [this](ArrayRef<uint8_t> B) {
      ++Calls;
      EXPECT_GE(B.data(), File.data());
      EXPECT_LE(B.end(), File.end());
      for (const uint8_t *P = B.data(); P != B.end(); ++P)
        Seen[P - File.data()] = true;
    };
  }
  bool all(uint64_t From, uint64_t To) const {
    return std::all_of(Seen.begin() + From, Seen.begin() + To,
                       [](bool B) { return B; });
  }
};

// Checking a record reads the whole original (a gigabyte for a library):
// what it read is handed back, so that none of it stays resident.
TEST(ProvenanceRecordTest, CheckingHandsBackWhatItRead) {
  Rewritten W;
  Expected<ProvenanceRecord> R = parseProvenanceNote(W.section());
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  Released Rel(W.File);
  EXPECT_FALSE(bool(checkProvenance(*R, W.File, {}, Rel.fn())));
  EXPECT_TRUE(Rel.all(0, W.Original.size()));
  EXPECT_EQ(Rel.Calls, 1u); // (one run: the spans are gathered)

  WithRebuilt B;
  Expected<ProvenanceRecord> RB = parseProvenanceNote(B.section());
  ASSERT_TRUE(bool(RB)) << toString(RB.takeError());
  Released RelB(B.File);
  Expected<OutputPieces> P =
      checkedOriginal(*RB, B.File, B.rebuilder(), RelB.fn());
  ASSERT_TRUE(bool(P)) << toString(P.takeError());
  // The original's bytes the file holds, and the rebuilt range's source;
  // the rebuilt bytes (another buffer) are never handed on.
  const RebuiltRange &G = RB->Rebuilt[0];
  EXPECT_TRUE(RelB.all(0, RB->OriginalSize));
  EXPECT_TRUE(RelB.all(G.SourceOffset, G.SourceOffset + G.SourceSize));
}

TEST(ReleaseBatchTest, GathersSpansIntoFewReleases) {
  std::vector<uint8_t> Buf(1000);
  std::vector<std::pair<size_t, size_t>> Calls;
  {
    ReleaseBatch B(
        [&](ArrayRef<uint8_t> R) {
          Calls.push_back({size_t(R.data() - Buf.data()), R.size()});
        },
        /*Batch=*/100);
    // Alternating spans inside one window: gathered, in either order.
    for (int I = 0; I < 10; ++I) {
      B.add(ArrayRef<uint8_t>(Buf).slice(I % 2 ? 60 : 10, 5));
      EXPECT_TRUE(Calls.empty());
    }
    // One that would make the window larger than a batch: the window goes.
    B.add(ArrayRef<uint8_t>(Buf).slice(500, 10));
    ASSERT_EQ(Calls.size(), 1u);
    EXPECT_EQ(Calls[0], (std::pair<size_t, size_t>(10, 55)));
    B.add(ArrayRef<uint8_t>(Buf).slice(520, 30));
    B.add({});
  } // (the rest when it ends)
  ASSERT_EQ(Calls.size(), 2u);
  EXPECT_EQ(Calls[1], (std::pair<size_t, size_t>(500, 50)));

  ReleaseBatch None({}); // (no release: nothing to do)
  None.add(ArrayRef<uint8_t>(Buf).slice(0, 10));
  None.flush();
}

TEST(ProvenanceRecordTest, RebuiltRangesAreApartFromHeldOnes) {
  WithRebuilt W(/*Overlap=*/true);
  Expected<ProvenanceRecord> R = parseProvenanceNote(W.section());
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(toString(R.takeError()),
            "provenance record: rebuilt range 0 at 0x10 overlaps the range at "
            "0x8");
}

TEST(ProvenanceRecordTest, WithoutRebuiltRangesTheFormatIsVersion1) {
  Rewritten W;
  EXPECT_EQ(support::endian::read32le(W.section().data() + 20), 1u);
}

} // namespace
