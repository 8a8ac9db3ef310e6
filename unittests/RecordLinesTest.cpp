//===- unittests/RecordLinesTest.cpp - The record family's JSON lines -----===//
//
// Record lines as notes of the record family (RecordLines.h, RecordNotes.h):
// the bytes written, field by field, against LLVM's SHA-256; lines appended
// after earlier ones; sections of the version before the family read and
// turned into the note; every way a record can be wrong refused with its
// own message; the provenance record's header is the family's.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/RecordLines.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Passes/ProvenanceRecord.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/SHA256.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::unittest;

namespace {

constexpr RecordKind Kind{".test.records", RecordNoteType::Clones,
                          "test records"};

struct RecordLinesTest : testing::Test {
  std::vector<uint8_t> Bytes = textOnlyObject(64);
  std::unique_ptr<Object> Obj;

  void SetUp() override {
    Expected<std::unique_ptr<Object>> O =
        readObject(MemoryBufferRef(toStringRef(Bytes), "test.co"));
    ASSERT_TRUE(isOk(O));
    Obj = std::move(*O);
  }

  Error append(std::vector<json::Object> Lines) {
    return appendRecordLines(*Obj, Kind, Lines);
  }
  std::vector<std::string> keys() {
    std::vector<std::string> Out;
    Expected<std::vector<json::Object>> L = readRecordLines(*Obj, Kind);
    EXPECT_TRUE(isOk(L));
    if (L)
      for (const json::Object &O : *L)
        Out.push_back(O.begin()->first.str());
    return Out;
  }
  /// The section's bytes, one byte changed at \p At (XOR \p Mask).
  void flip(size_t At, uint8_t Mask = 0x01) {
    Section *S = Obj->findSection(Kind.Section);
    std::vector<uint8_t> B(S->contents().begin(), S->contents().end());
    B[At] ^= Mask;
    S->setContents(std::move(B));
  }
  /// Seals the section's digest again over what it holds now.
  void seal() {
    Section *S = Obj->findSection(Kind.Section);
    std::vector<uint8_t> B(S->contents().begin(), S->contents().end());
    uint32_t DescSize = read32(B, 4);
    auto Sum = SHA256::hash(ArrayRef<uint8_t>(B).slice(20, DescSize - 32));
    std::copy(Sum.begin(), Sum.end(), B.begin() + 20 + DescSize - 32);
    S->setContents(std::move(B));
  }
};

TEST_F(RecordLinesTest, TheNoteHoldsAVersionTheLinesAndTheirSHA256) {
  ASSERT_FALSE(bool(append({json::Object{{"a", "0x1"}}})));
  const Section *S = Obj->findSection(Kind.Section);
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(S->Type, ELF::SHT_NOTE);
  EXPECT_EQ(S->AddrAlign, 4u);
  EXPECT_FALSE(S->isAlloc());
  ArrayRef<uint8_t> B = S->contents();
  const std::string Text = "{\"a\":\"0x1\"}\n";
  const uint32_t DescSize = 4 + Text.size() + 32;
  ASSERT_EQ(B.size(), alignTo(20 + DescSize, 4));
  EXPECT_EQ(read32(B, 0), 8u);       // namesz
  EXPECT_EQ(read32(B, 4), DescSize); // descsz
  EXPECT_EQ(read32(B, 8), 3u);       // type: Clones
  EXPECT_EQ(toStringRef(B.slice(12, 8)), StringRef("HOTSWAP\0", 8));
  EXPECT_EQ(read32(B, 20), 1u); // version
  EXPECT_EQ(toStringRef(B.slice(24, Text.size())), Text);
  auto Sum = SHA256::hash(B.slice(20, 4 + Text.size()));
  EXPECT_EQ(B.slice(24 + Text.size(), 32), ArrayRef<uint8_t>(Sum));
  for (uint8_t Pad : B.drop_front(20 + DescSize))
    EXPECT_EQ(Pad, 0);
  EXPECT_EQ(keys(), std::vector<std::string>{"a"});
}

TEST_F(RecordLinesTest, LinesAreAppendedAfterTheOnesBefore) {
  ASSERT_FALSE(bool(append({json::Object{{"a", 1}}})));
  ASSERT_FALSE(bool(append({json::Object{{"b", 2}}, json::Object{{"c", 3}}})));
  EXPECT_EQ(keys(), (std::vector<std::string>{"a", "b", "c"}));
  Expected<StringRef> T = recordLinesText(*Obj, Kind);
  ASSERT_TRUE(isOk(T));
  EXPECT_EQ(*T, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
}

TEST_F(RecordLinesTest, LinesOfTheVersionBeforeAreReadAndKeptWhenAppending) {
  auto Old = std::make_unique<Section>();
  Old->Name = Kind.Section.str();
  Old->Type = ELF::SHT_PROGBITS;
  Old->AddrAlign = 1;
  std::string Text = "{\"old\":1}\n{\"older\":2}"; // no last newline
  Old->setContents(std::vector<uint8_t>(Text.begin(), Text.end()));
  Obj->addSection(std::move(Old));
  EXPECT_EQ(keys(), (std::vector<std::string>{"old", "older"}));
  ASSERT_FALSE(bool(append({json::Object{{"new", 3}}})));
  const Section *S = Obj->findSection(Kind.Section);
  EXPECT_EQ(S->Type, ELF::SHT_NOTE);
  Expected<StringRef> T = recordLinesText(*Obj, Kind);
  ASSERT_TRUE(isOk(T));
  EXPECT_EQ(*T, "{\"old\":1}\n{\"older\":2}\n{\"new\":3}\n");
}

TEST_F(RecordLinesTest, AChangedRecordIsRefusedWithWhatIsWrong) {
  ASSERT_FALSE(bool(append({json::Object{{"a", 1}}})));
  const std::string Where = "section '.test.records': ";
  flip(27); // the line's key's closing quote
  EXPECT_EQ(errorOf(readRecordLines(*Obj, Kind)),
            Where + "the record's SHA-256 does not match its contents: it "
                    "was changed after it was written");
  // The same byte, sealed: the line is read, and is no JSON.
  seal();
  EXPECT_EQ(errorOf(readRecordLines(*Obj, Kind)),
            Where + "line 1: [1:7, byte=7]: Unterminated string");
  flip(27);
  seal();
  EXPECT_EQ(keys(), std::vector<std::string>{"a"});
  // A byte of the digest.
  flip(20 + 4 + 8 + 5);
  EXPECT_NE(errorOf(readRecordLines(*Obj, Kind)).find("SHA-256"),
            std::string::npos);
  flip(20 + 4 + 8 + 5);
  // Another version, sealed; another type; another owner.
  flip(20, 0x03);
  seal();
  EXPECT_EQ(errorOf(readRecordLines(*Obj, Kind)),
            Where + "the record's format version is 2; this tool reads "
                    "version 1");
  flip(20, 0x03);
  seal();
  flip(8, 0x07);
  EXPECT_EQ(errorOf(readRecordLines(*Obj, Kind)),
            Where + "the note is not a 'HOTSWAP' note of type 3");
  flip(8, 0x07);
  flip(12, 0x20); // "hOTSWAP"
  EXPECT_EQ(errorOf(readRecordLines(*Obj, Kind)),
            Where + "the note is not a 'HOTSWAP' note of type 3");
  flip(12, 0x20);
  EXPECT_EQ(keys(), std::vector<std::string>{"a"});
  // Appending to a broken record fails the same way, changing nothing.
  flip(27);
  std::vector<uint8_t> Before(
      Obj->findSection(Kind.Section)->contents().begin(),
      Obj->findSection(Kind.Section)->contents().end());
  EXPECT_NE(
      errorOf(Expected<int>(append({json::Object{{"b", 1}}}))).find("SHA-256"),
      std::string::npos);
  EXPECT_EQ(Obj->findSection(Kind.Section)->contents(),
            ArrayRef<uint8_t>(Before));
}

TEST_F(RecordLinesTest, ADescriptorTooShortOrASectionOfAnotherTypeIsRefused) {
  auto S = std::make_unique<Section>();
  S->Name = Kind.Section.str();
  S->Type = ELF::SHT_NOTE;
  std::vector<uint8_t> B;
  putRecordNoteHead(B, Kind.Type, 8);
  B.resize(B.size() + 8, 0);
  S->setContents(B);
  Section &Added = Obj->addSection(std::move(S));
  EXPECT_EQ(errorOf(readRecordLines(*Obj, Kind)),
            "section '.test.records': the record is 8 bytes, too short for "
            "a version and a digest (36)");
  Added.Type = ELF::SHT_SYMTAB;
  EXPECT_EQ(errorOf(readRecordLines(*Obj, Kind)),
            "section '.test.records': neither a note nor lines of an "
            "earlier version: it cannot hold the records of test records");
}

TEST(RecordNotesTest, TheProvenanceRecordHasTheFamilysHead) {
  ProvenanceContents C;
  C.OriginalSize = 0;
  Expected<ProvenanceNote> N = encodeProvenance(C);
  ASSERT_TRUE(isOk(N));
  std::vector<uint8_t> Head;
  putRecordNoteHead(Head, RecordNoteType::Provenance, read32(N->Head, 4));
  ASSERT_EQ(Head.size(), RecordNoteDescAt);
  EXPECT_EQ(ArrayRef<uint8_t>(N->Head).take_front(RecordNoteDescAt),
            ArrayRef<uint8_t>(Head));
  EXPECT_EQ(read32(Head, 8), ProvenanceNoteType);
}

} // namespace
