//===- unittests/NotesTest.cpp - ELF note iterator tests ------------------===//
//
// Note sections are written out byte by byte here (not with appendNote) so
// that the iterator and the writer are checked independently.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/Notes.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

#include <algorithm>
#include <iterator>

using namespace llvm;
using namespace hotswap::amdgpu;

namespace {

void put32(std::vector<uint8_t> &B, uint32_t V) {
  for (int I = 0; I != 4; ++I)
    B.push_back(uint8_t(V >> (8 * I)));
}

/// A note with explicit sizes; Name and Desc bytes are written as given
/// (callers add NULs and padding themselves).
void rawNote(std::vector<uint8_t> &B, uint32_t NameSz, uint32_t DescSz,
             uint32_t Type, ArrayRef<uint8_t> NameAndDescBytes) {
  put32(B, NameSz);
  put32(B, DescSz);
  put32(B, Type);
  B.insert(B.end(), NameAndDescBytes.begin(), NameAndDescBytes.end());
}

std::string errorOf(ArrayRef<uint8_t> Bytes) {
  Expected<std::vector<NoteRef>> N = parseNotes(Bytes);
  if (N)
    return "<no error>";
  return toString(N.takeError());
}

TEST(NotesTest, Empty) {
  Expected<std::vector<NoteRef>> N = parseNotes({});
  ASSERT_OK(N);
  EXPECT_TRUE(N->empty());
}

TEST(NotesTest, TwoNotesWithPadding) {
  std::vector<uint8_t> B;
  // "AMDGPU\0" (7, padded to 8), desc of 5 bytes (padded to 8).
  rawNote(B, 7, 5, 32,
          {'A', 'M', 'D', 'G', 'P', 'U', 0, 0, 1, 2, 3, 4, 5, 0, 0, 0});
  // "GNU\0" (4), empty descriptor.
  rawNote(B, 4, 0, 3, {'G', 'N', 'U', 0});
  Expected<std::vector<NoteRef>> N = parseNotes(B);
  ASSERT_OK(N);
  ASSERT_EQ(N->size(), 2u);
  const NoteRef &A = (*N)[0];
  EXPECT_EQ(A.Name, "AMDGPU");
  EXPECT_EQ(A.NameSize, 7u);
  EXPECT_EQ(A.Type, 32u);
  EXPECT_EQ(A.Offset, 0u);
  EXPECT_EQ(A.DescOffset, 20u);
  EXPECT_EQ(A.Size, 28u);
  EXPECT_EQ(A.Desc, ArrayRef<uint8_t>({1, 2, 3, 4, 5}));
  const NoteRef &G = (*N)[1];
  EXPECT_EQ(G.Name, "GNU");
  EXPECT_EQ(G.Type, 3u);
  EXPECT_EQ(G.Offset, 28u);
  EXPECT_EQ(G.DescOffset, 44u);
  EXPECT_EQ(G.Size, 16u);
  EXPECT_TRUE(G.Desc.empty());
}

TEST(NotesTest, EmptyName) {
  std::vector<uint8_t> B;
  rawNote(B, 0, 4, 1, {9, 9, 9, 9});
  Expected<std::vector<NoteRef>> N = parseNotes(B);
  ASSERT_OK(N);
  ASSERT_EQ(N->size(), 1u);
  EXPECT_EQ((*N)[0].Name, "");
  EXPECT_EQ((*N)[0].DescOffset, 12u);
  EXPECT_EQ((*N)[0].Size, 16u);
}

TEST(NotesTest, AppendNoteRoundTrips) {
  std::vector<uint8_t> B;
  const uint8_t Desc[] = {0x81, 0xa1, 'a', 0x01, 0xc0};
  appendNote(B, "AMDGPU", 32, Desc);
  appendNote(B, "X", 7, {});
  std::vector<uint8_t> Expected = {
      7,   0,   0,   0, 5, 0,    0,    0,   32,   0,    0,   0, 'A', 'M', 'D',
      'G', 'P', 'U', 0, 0, 0x81, 0xa1, 'a', 0x01, 0xc0, 0,   0, 0,   2,   0,
      0,   0,   0,   0, 0, 0,    7,    0,   0,    0,    'X', 0, 0,   0};
  EXPECT_EQ(B, Expected);
  auto N = parseNotes(B);
  ASSERT_OK(N);
  ASSERT_EQ(N->size(), 2u);
  EXPECT_EQ((*N)[0].Desc, ArrayRef<uint8_t>(Desc));
  EXPECT_EQ((*N)[1].Name, "X");
}

TEST(NotesTest, TruncatedHeader) {
  std::vector<uint8_t> B(8, 0);
  EXPECT_EQ(errorOf(B),
            "note at offset 0x0: truncated header (0x8 bytes left, need 0xc)");
  // A valid note followed by 4 stray bytes.
  std::vector<uint8_t> C;
  rawNote(C, 0, 0, 1, {});
  put32(C, 0);
  EXPECT_EQ(errorOf(C),
            "note at offset 0xc: truncated header (0x4 bytes left, need 0xc)");
}

TEST(NotesTest, NameSizePastEnd) {
  std::vector<uint8_t> B;
  rawNote(B, 0x20, 0, 32, {'A', 'M', 'D', 'G'});
  EXPECT_EQ(errorOf(B), "note at offset 0x0: name size 0x20 extends past end "
                        "of section (size 0x10)");
}

TEST(NotesTest, NamePaddingPastEnd) {
  std::vector<uint8_t> B;
  rawNote(B, 7, 0, 32, {'A', 'M', 'D', 'G', 'P', 'U', 0});
  EXPECT_EQ(errorOf(B), "note at offset 0x0: name padding extends past end "
                        "of section (size 0x13)");
}

TEST(NotesTest, DescSizePastEnd) {
  // The message from the brief: a 0x10-byte first note, then a note whose
  // descriptor claims 0x1000 bytes in a 0x120-byte section.
  std::vector<uint8_t> B;
  rawNote(B, 4, 0, 1, {'a', 'b', 'c', 0});
  rawNote(B, 7, 0x1000, 32, {'A', 'M', 'D', 'G', 'P', 'U', 0, 0});
  B.resize(0x120, 0);
  EXPECT_EQ(errorOf(B), "note at offset 0x10: descriptor size 0x1000 extends "
                        "past end of section (size 0x120)");
}

TEST(NotesTest, DescPaddingPastEnd) {
  std::vector<uint8_t> B;
  rawNote(B, 0, 3, 1, {1, 2, 3});
  EXPECT_EQ(errorOf(B), "note at offset 0x0: descriptor padding extends past "
                        "end of section (size 0xf)");
}

TEST(NotesTest, HugeSizesDoNotOverflow) {
  std::vector<uint8_t> B;
  rawNote(B, 0xffffffff, 0xffffffff, 1, {});
  EXPECT_EQ(errorOf(B), "note at offset 0x0: name size 0xffffffff extends "
                        "past end of section (size 0xc)");
  std::vector<uint8_t> C;
  rawNote(C, 0, 0xfffffffd, 1, {0, 0, 0, 0});
  EXPECT_EQ(errorOf(C), "note at offset 0x0: descriptor size 0xfffffffd "
                        "extends past end of section (size 0x10)");
}

//===-- replacing a descriptor --------------------------------------------===//

/// "AMDGPU" (desc 1 2 3 4 5, padding 0xee 0xee 0xee as a producer might
/// leave it), then "X" (desc 9).
std::vector<uint8_t> twoNotes() {
  std::vector<uint8_t> B;
  rawNote(
      B, 7, 5, 32,
      {'A', 'M', 'D', 'G', 'P', 'U', 0, 0, 1, 2, 3, 4, 5, 0xee, 0xee, 0xee});
  rawNote(B, 2, 1, 7, {'X', 0, 0, 0, 9, 0, 0, 0});
  return B;
}

TEST(NotesTest, DescriptorCapacity) {
  auto N = parseNotes(twoNotes());
  ASSERT_OK(N);
  EXPECT_EQ(descriptorCapacity((*N)[0]), 8u);
  EXPECT_EQ(descriptorCapacity((*N)[1]), 4u);
}

TEST(NotesTest, ReplaceDescriptorKeepsTheNoteSize) {
  const std::vector<uint8_t> Old = twoNotes();
  auto N = parseNotes(Old);
  ASSERT_OK(N);
  const NoteRef &First = (*N)[0];

  // The same size: only the descriptor changes, the padding is kept.
  const uint8_t Reversed[] = {5, 4, 3, 2, 1};
  std::vector<uint8_t> B = Old;
  ASSERT_FALSE(bool(replaceDescriptor(B, First, Reversed)));
  std::vector<uint8_t> Want = Old;
  std::copy(std::begin(Reversed), std::end(Reversed), Want.begin() + 20);
  EXPECT_EQ(B, Want);

  // Larger, into the padding: n_descsz follows, the rest of the padding
  // is zeroed, the next note is untouched.
  B = Old;
  ASSERT_FALSE(bool(replaceDescriptor(B, First, {1, 2, 3, 4, 5, 6, 7})));
  auto M = parseNotes(B);
  ASSERT_OK(M);
  EXPECT_EQ((*M)[0].Desc, ArrayRef<uint8_t>({1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(B[27], 0);
  EXPECT_EQ(B.size(), Old.size());
  EXPECT_EQ(ArrayRef<uint8_t>(B).drop_front(28),
            ArrayRef<uint8_t>(Old).drop_front(28));

  // Smaller, within the padding.
  std::vector<uint8_t> C = B;
  ASSERT_FALSE(bool(replaceDescriptor(C, (*M)[0], {1, 2, 3, 4, 5})));
  EXPECT_EQ(ArrayRef<uint8_t>(C).slice(20, 8),
            ArrayRef<uint8_t>({1, 2, 3, 4, 5, 0, 0, 0}));
  EXPECT_EQ(C[4], 5);
}

TEST(NotesTest, ReplaceDescriptorKeepsTheNoteSizeOrFails) {
  const std::vector<uint8_t> Old = twoNotes();
  auto N = parseNotes(Old);
  ASSERT_OK(N);
  std::vector<uint8_t> B = Old;
  Error E = replaceDescriptor(B, (*N)[1], {1, 2, 3, 4, 5});
  EXPECT_EQ(toString(std::move(E)),
            "note at offset 0x1c: a descriptor of 0x5 bytes would change the "
            "size of the note (0x4 bytes for the descriptor)");
  E = replaceDescriptor(B, (*N)[0], {1, 2, 3, 4});
  EXPECT_EQ(toString(std::move(E)),
            "note at offset 0x0: a descriptor of 0x4 bytes would change the "
            "size of the note (0x8 bytes for the descriptor)");
  EXPECT_EQ(B, Old);
  // A note that does not belong to the bytes given.
  std::vector<uint8_t> Short(Old.begin(), Old.begin() + 28);
  E = replaceDescriptor(Short, (*N)[1], {1});
  EXPECT_EQ(toString(std::move(E)),
            "note at offset 0x1c: extends past end of section (size 0x1c)");
}

} // namespace
