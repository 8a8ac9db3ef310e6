//===- unittests/MetadataTest.cpp - Reading AMDGPU metadata notes ---------===//
//
// Parsing and validation of the NT_AMDGPU_METADATA notes of a note section:
// LLVM-shaped and real notes, every validation message, the msgpack rules
// (the reader accepts exactly what msgpack::Document accepts), and sections
// with one metadata note per LTO partition. Editing is tested in
// MetadataRewriteTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "MetadataTestUtil.h"

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/Notes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/BinaryFormat/MsgPackReader.h"
#include "gtest/gtest.h"

using namespace llvm;
using namespace hotswap::amdgpu;
using namespace hotswap::amdgpu::testutil;

namespace {

TEST(MetadataTest, ParsesLLVMShapedMetadata) {
  auto Section = noteSection(metadataBlob({{"a", 12, 7}, {"b", 100, 300}},
                                          "amdgcn-amd-amdhsa--gfx90a"));
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  EXPECT_TRUE(MD->hasMetadata());
  ASSERT_EQ(MD->notes().size(), 1u);
  EXPECT_EQ(MD->notes()[0].Offset, 0u);
  ASSERT_TRUE(MD->version().has_value());
  EXPECT_EQ(MD->version()->Major, 1u);
  EXPECT_EQ(MD->version()->Minor, 2u);
  EXPECT_EQ(MD->target(), "amdgcn-amd-amdhsa--gfx90a");
  ASSERT_EQ(MD->kernels().size(), 2u);
  const KernelMD *B = MD->findBySymbol("b.kd");
  ASSERT_NE(B, nullptr);
  EXPECT_EQ(B->Name, "b");
  EXPECT_EQ(B->Note, 0u);
  EXPECT_EQ(B->Index, 1u);
  EXPECT_EQ(B->SGPRCount, 100u);
  EXPECT_EQ(B->VGPRCount, 300u);
  EXPECT_EQ(B->AGPRCount, 0u);
  EXPECT_EQ(B->WavefrontSize, 64u);
  EXPECT_EQ(B->MaxFlatWorkgroupSize, 256u);
  EXPECT_EQ(B->KernargSegmentSize, 0u);
  EXPECT_EQ(B->UsesDynamicStack, false);
  EXPECT_EQ(B->get(KernelField::VGPRCount), 300u);
  EXPECT_EQ(B->get(KernelField::UsesDynamicStack), 0u);
  EXPECT_EQ(MD->findBySymbol("b"), nullptr);
  EXPECT_EQ(MD->findBySymbol("a.kd")->SGPRCount, 12u);
  EXPECT_EQ(kernelFieldKey(KernelField::KernargSegmentSize),
            ".kernarg_segment_size");
}

TEST(MetadataTest, NoMetadataNote) {
  std::vector<uint8_t> S;
  appendNote(S, "GNU", 3, {});
  appendNote(S, "AMDGPU", 33, {});
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  EXPECT_FALSE(MD->hasMetadata());
  EXPECT_TRUE(MD->notes().empty());
  EXPECT_TRUE(MD->kernels().empty());
  EXPECT_FALSE(MD->version().has_value());
  EXPECT_EQ(MD->target(), "");
  EXPECT_EQ(toString(MD->setSGPRCount("k.kd", 1)),
            "metadata: no AMDGPU metadata note");
  Expected<NoteRewrite> R = MD->rewrite();
  ASSERT_OK(R);
  EXPECT_EQ(R->How, NoteRewrite::Method::Unchanged);
  EXPECT_EQ(R->Bytes, S);
}

TEST(MetadataTest, OptionalVersionAndTarget) {
  Expected<CodeObjectMetadata> MD =
      CodeObjectMetadata::parse(noteSection(metadataBlob({{"k"}}, "", 0)));
  ASSERT_OK(MD);
  EXPECT_FALSE(MD->version().has_value());
  EXPECT_FALSE(MD->notes()[0].Version.has_value());
  EXPECT_FALSE(MD->notes()[0].Target.has_value());
  EXPECT_EQ(MD->target(), "");
  EXPECT_EQ(MD->kernels().size(), 1u);
}

TEST(MetadataTest, ManyKernelsLookup) {
  std::vector<KSpec> Ks;
  for (unsigned I = 0; I != 2000; ++I)
    Ks.push_back({"kernel_" + std::to_string(I), I % 200, 1});
  auto Section = noteSection(metadataBlob(Ks, "amdgcn-amd-amdhsa--gfx942"));
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(Section);
  ASSERT_OK(MD);
  ASSERT_EQ(MD->kernels().size(), 2000u);
  for (unsigned I = 0; I < 2000; I += 97) {
    const KernelMD *K = MD->findBySymbol("kernel_" + std::to_string(I) + ".kd");
    ASSERT_NE(K, nullptr) << I;
    EXPECT_EQ(K->SGPRCount, I % 200);
  }
}

TEST(MetadataTest, ParsingHandsBackWhatItRead) {
  // 40 MB of metadata (long names, as Tensile's): the section's bytes come
  // back in order, each stretch but the last DoneWithStep or more, and
  // together every byte once.
  std::vector<KSpec> Ks;
  const std::string Long(1600, 'x');
  for (unsigned I = 0; I != 12000; ++I)
    Ks.push_back({Long + std::to_string(I), I % 100, 1});
  auto Section = noteSection(metadataBlob(Ks, "amdgcn-amd-amdhsa--gfx942"));
  ASSERT_GT(Section.size(), 2 * CodeObjectMetadata::DoneWithStep);
  std::vector<ArrayRef<uint8_t>> Done;
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(
      Section, 0, /*Borrow=*/true,
      [&](ArrayRef<uint8_t> B) { Done.push_back(B); });
  ASSERT_OK(MD);
  ASSERT_EQ(MD->kernels().size(), 12000u);
  ASSERT_GE(Done.size(), 3u);
  const uint8_t *At = Section.data();
  for (size_t I = 0; I != Done.size(); ++I) {
    SCOPED_TRACE(I);
    EXPECT_EQ(Done[I].data(), At);
    if (I + 1 != Done.size())
      EXPECT_GE(Done[I].size(), CodeObjectMetadata::DoneWithStep);
    At = Done[I].end();
  }
  EXPECT_EQ(At, Section.data() + Section.size());
  // What was kept needs none of it (a released page reads again anyway).
  EXPECT_EQ(MD->findBySymbol(Long + "11999.kd")->SGPRCount, 99u);
}

//===-- errors ------------------------------------------------------------===//

TEST(MetadataTest, NoteErrorsPropagate) {
  std::vector<uint8_t> S(8, 0);
  EXPECT_EQ(parseError(S),
            "note at offset 0x0: truncated header (0x8 bytes left, need 0xc)");
  std::vector<uint8_t> T = noteSection("\x80");
  T[0] = 0x40; // namesz
  EXPECT_EQ(parseError(T), "note at offset 0x0: name size 0x40 extends past "
                           "end of section (size 0x18)");
  std::vector<uint8_t> U = noteSection("\x80");
  U[4] = 0x40; // descsz
  EXPECT_EQ(parseError(U), "note at offset 0x0: descriptor size 0x40 extends "
                           "past end of section (size 0x18)");
}

TEST(MetadataTest, MsgpackGarbage) {
  EXPECT_EQ(parseBlobError(rawBlob({0xc1, 0x00})),
            "metadata: note at offset 0x0: malformed msgpack payload");
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xa1, 'a'})),
            "metadata: note at offset 0x0: malformed msgpack payload");
  EXPECT_EQ(parseBlobError(""),
            "metadata: note at offset 0x0: malformed msgpack payload");
  // A duplicate key is rejected by the msgpack reader.
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02})),
            "metadata: note at offset 0x0: malformed msgpack payload");
}

TEST(MetadataTest, StructureErrors) {
  EXPECT_EQ(parseBlobError(rawBlob({0x92, 0x01, 0x02})),
            "metadata: root is not a map");
  // {"amdhsa.kernels": 1}
  std::string NotArray = "\x81\xae"
                         "amdhsa.kernels"
                         "\x01";
  EXPECT_EQ(parseBlobError(NotArray),
            "metadata: 'amdhsa.kernels' is not an array");
  // {"amdhsa.kernels": [1]}
  std::string NotMap = "\x81\xae"
                       "amdhsa.kernels"
                       "\x91\x01";
  EXPECT_EQ(parseBlobError(NotMap), "metadata: kernel 0 is not a map");
  // {"amdhsa.target": 1}
  std::string BadTarget = "\x81\xad"
                          "amdhsa.target"
                          "\x01";
  EXPECT_EQ(parseBlobError(BadTarget),
            "metadata: 'amdhsa.target' is not a string");
  // {"amdhsa.version": [1]}
  std::string BadVersion = "\x81\xae"
                           "amdhsa.version"
                           "\x91\x01";
  EXPECT_EQ(parseBlobError(BadVersion), "metadata: 'amdhsa.version' is not "
                                        "an array of two unsigned integers");
}

/// Builds a 4-kernel document and lets \p Edit break kernel 3.
std::string brokenKernelBlob(
    std::function<void(msgpack::Document &, msgpack::MapDocNode &)> Edit) {
  msgpack::Document D;
  msgpack::MapDocNode Root = D.getRoot().getMap(/*Convert=*/true);
  msgpack::ArrayDocNode KA = D.getArrayNode();
  for (unsigned I = 0; I != 4; ++I) {
    msgpack::MapDocNode M = kernelNode(D, {"k" + std::to_string(I)});
    if (I == 3)
      Edit(D, M);
    KA.push_back(M);
  }
  Root["amdhsa.kernels"] = KA;
  std::string Blob;
  D.writeToBlob(Blob);
  return Blob;
}

TEST(MetadataTest, KernelFieldErrors) {
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &, msgpack::MapDocNode &M) {
                  M.erase(M.find(".symbol"));
                })),
            "metadata: kernel 3: missing '.symbol'");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".name"] = D.getNode(uint64_t(1));
                })),
            "metadata: kernel 3: '.name' is not a string");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".sgpr_count"] = D.getNode("ten");
                })),
            "metadata: kernel 3: '.sgpr_count' is not an unsigned integer");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".vgpr_count"] = D.getNode(int64_t(-1));
                })),
            "metadata: kernel 3: '.vgpr_count' is not an unsigned integer");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".uses_dynamic_stack"] = D.getNode(uint64_t(0));
                })),
            "metadata: kernel 3: '.uses_dynamic_stack' is not a boolean");
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".symbol"] = D.getNode("k1.kd");
                })),
            "metadata: kernels 1 and 3 have the same symbol 'k1.kd'");
}

//===-- a real note -------------------------------------------------------===//

TEST(MetadataTest, RealNoteParses) {
  ASSERT_EQ(sizeof(RealNote), 0x1bcu);
  auto MD = CodeObjectMetadata::parse(RealNote);
  ASSERT_OK(MD);
  EXPECT_EQ(MD->target(), "amdgcn-amd-amdhsa--gfx90a");
  EXPECT_EQ(MD->version()->Major, 1u);
  EXPECT_EQ(MD->version()->Minor, 2u);
  ASSERT_EQ(MD->kernels().size(), 1u);
  const KernelMD *K = MD->findBySymbol("nop.kd");
  ASSERT_NE(K, nullptr);
  EXPECT_EQ(K->Name, "nop");
  EXPECT_EQ(K->SGPRCount, 4u);
  EXPECT_EQ(K->VGPRCount, 0u);
  EXPECT_EQ(K->AGPRCount, 0u);
  EXPECT_EQ(K->KernargSegmentSize, 0u);
  EXPECT_EQ(K->GroupSegmentFixedSize, 0u);
  EXPECT_EQ(K->PrivateSegmentFixedSize, 0u);
  EXPECT_EQ(K->MaxFlatWorkgroupSize, 256u);
  EXPECT_EQ(K->WavefrontSize, 64u);
  EXPECT_EQ(K->SGPRSpillCount, 0u);
  EXPECT_EQ(K->VGPRSpillCount, 0u);
  EXPECT_EQ(K->UsesDynamicStack, false);
}

//===-- the msgpack rules -------------------------------------------------===//

/// Whether Document::readFromBlob would meet a map or an array as a map key.
/// It does not descend into such a key and crashes comparing two of them,
/// so these inputs cannot be given to it.
bool documentMeetsContainerKey(StringRef B) {
  msgpack::Reader R(B);
  struct Level {
    bool IsMap;
    uint64_t Left; // tokens left, keys included
  };
  SmallVector<Level, 8> Stack;
  do {
    msgpack::Object O;
    Expected<bool> Got = R.read(O);
    if (!Got) {
      consumeError(Got.takeError());
      return false;
    }
    if (!*Got)
      return false;
    const bool Container =
        O.Kind == msgpack::Type::Map || O.Kind == msgpack::Type::Array;
    const bool IsKey =
        !Stack.empty() && Stack.back().IsMap && Stack.back().Left % 2 == 0;
    if (!Stack.empty())
      --Stack.back().Left;
    if (IsKey && Container)
      return true;
    if (Container)
      Stack.push_back(
          {O.Kind == msgpack::Type::Map,
           (O.Kind == msgpack::Type::Map ? 2 : 1) * uint64_t(O.Length)});
    while (!Stack.empty() && Stack.back().Left == 0)
      Stack.pop_back();
  } while (!Stack.empty());
  return false;
}

bool isMalformed(const std::string &Msg) {
  return StringRef(Msg).ends_with("malformed msgpack payload") ||
         StringRef(Msg).ends_with(
             "malformed msgpack payload: a map key is an array or a map");
}

TEST(MetadataTest, AcceptsWhatDocumentAccepts) {
  // The reader accepts exactly the payloads msgpack::Document accepts. Every
  // byte of a two-kernel blob (with arguments: nested maps in arrays) is
  // replaced by values that turn it into other types, lengths and
  // containers; bytes are also cut off the end.
  msgpack::Document D;
  msgpack::MapDocNode Root = D.getRoot().getMap(/*Convert=*/true);
  msgpack::ArrayDocNode KA = D.getArrayNode();
  for (unsigned I = 0; I != 2; ++I) {
    msgpack::MapDocNode K = kernelNode(D, {"k" + std::to_string(I)});
    msgpack::MapDocNode Arg = D.getMapNode();
    Arg[".offset"] = D.getNode(uint64_t(0));
    Arg[".size"] = D.getNode(uint64_t(8));
    Arg[".value_kind"] = D.getNode("global_buffer");
    K[".args"].getArray(/*Convert=*/true).push_back(Arg);
    KA.push_back(K);
  }
  Root["amdhsa.kernels"] = KA;
  std::string Blob;
  D.writeToBlob(Blob);

  unsigned Checked = 0, Accepted = 0, ContainerKeys = 0;
  auto Check = [&](const std::string &B) {
    std::string Err = parseBlobError(B);
    ++Checked;
    if (documentMeetsContainerKey(B)) {
      ++ContainerKeys;
      EXPECT_TRUE(isMalformed(Err)) << toHex(B) << ": " << Err;
      return;
    }
    msgpack::Document Ref;
    bool RefOK = !B.empty() && Ref.readFromBlob(B, /*Multi=*/false);
    Accepted += !isMalformed(Err);
    EXPECT_EQ(RefOK, !isMalformed(Err)) << toHex(B) << ": " << Err;
  };
  for (size_t I = 0; I != Blob.size(); ++I) {
    for (uint8_t V : {0x00, 0x01, 0x7f, 0xa1, 0xc0, 0xc1, 0xc3, 0xca, 0xcc,
                      0xcf, 0xd0, 0xd4, 0xd9, 0xdc, 0xff}) {
      std::string B = Blob;
      B[I] = char(V);
      Check(B);
    }
    Check(Blob.substr(0, I));
  }
  EXPECT_GT(Accepted, 100u);
  EXPECT_GT(Checked - Accepted, 100u);
  EXPECT_GT(ContainerKeys, 0u);
}

TEST(MetadataTest, ContainerKeyIsRejected) {
  // Document reads [] as a key without its elements and cannot order two
  // container keys; the reader rejects them as malformed, and says why.
  EXPECT_EQ(parseBlobError(rawBlob({0x81, 0x90, 0x01})),
            "metadata: note at offset 0x0: malformed msgpack payload: a map "
            "key is an array or a map");
  EXPECT_EQ(parseBlobError(rawBlob({0x81, 0xa1, 'a', 0x81, 0x80, 0x01})),
            "metadata: note at offset 0x0: malformed msgpack payload: a map "
            "key is an array or a map");
}

TEST(MetadataTest, DuplicateKeys) {
  auto Malformed = "metadata: note at offset 0x0: malformed msgpack payload";
  // Keys out of order are fine; a repeated one is not, at any depth.
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xa1, 'b', 0x01, 0xa1, 'a', 0x02})),
            "<no error>");
  EXPECT_EQ(parseBlobError(rawBlob(
                {0x83, 0xa1, 'b', 0x01, 0xa1, 'a', 0x02, 0xa1, 'b', 0x03})),
            Malformed);
  EXPECT_EQ(parseBlobError(rawBlob({0x81, 0xa1, 'x', 0x91, 0x82, 0xa1, 'a',
                                    0x01, 0xa1, 'a', 0x02})),
            Malformed);
  // Keys of different types differ: signed 1, unsigned 1, "1", bin "1".
  EXPECT_EQ(parseBlobError(rawBlob({0x84, 0xd0, 0x01, 0xc0, 0x01, 0xc0, 0xa1,
                                    '1', 0xc0, 0xc4, 0x01, '1', 0xc0})),
            "<no error>");
  // Keys equal as DocNode orders them: nil and nil, 0.0 and -0.0.
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xc0, 0x01, 0xc0, 0x02})), Malformed);
  EXPECT_EQ(parseBlobError(rawBlob(
                {0x82, 0xca, 0, 0, 0, 0, 0x01, 0xca, 0x80, 0, 0, 0, 0x02})),
            Malformed);
  // The same key in two different maps is fine.
  EXPECT_EQ(parseBlobError(rawBlob({0x82, 0xa1, 'a', 0x81, 0xa1, 'a', 0x01,
                                    0xa1, 'b', 0x81, 0xa1, 'a', 0x01})),
            "<no error>");
}

TEST(MetadataTest, OtherPayloadRules) {
  auto Malformed = "metadata: note at offset 0x0: malformed msgpack payload";
  // An extension object anywhere.
  EXPECT_EQ(parseBlobError(rawBlob({0x81, 0xa1, 'a', 0xd4, 0x01, 0x02})),
            Malformed);
  // Bytes after the top-level map are ignored, as by Document.
  EXPECT_EQ(parseBlobError(rawBlob({0x80, 0xc1, 0xc1})), "<no error>");
  // Deep nesting of an unknown value needs no deep recursion.
  std::string Deep = "\x81\xa1x" + std::string(200000, '\x91') + "\x90";
  EXPECT_EQ(parseBlobError(Deep), "<no error>");
  // A malformed payload wins over an earlier semantic error.
  std::string BadThenTruncated = "\x82\xad"
                                 "amdhsa.target"
                                 "\x01"
                                 "\xa1x"
                                 "\x92\x01";
  EXPECT_EQ(parseBlobError(BadThenTruncated), Malformed);
}

TEST(MetadataTest, ErrorOrderIgnoresKeyOrder) {
  // amdhsa.kernels (kernel 0 is not a map) comes before a bad
  // amdhsa.version in the document; the version error is reported first,
  // as before.
  std::string Blob = "\x82\xae"
                     "amdhsa.kernels"
                     "\x91\x01"
                     "\xae"
                     "amdhsa.version"
                     "\x91\x01";
  EXPECT_EQ(parseBlobError(Blob), "metadata: 'amdhsa.version' is not an "
                                  "array of two unsigned integers");
  // Within a kernel, '.name' is checked before '.symbol' and the fields.
  EXPECT_EQ(parseBlobError(brokenKernelBlob(
                [](msgpack::Document &D, msgpack::MapDocNode &M) {
                  M[".agpr_count"] = D.getNode("x");
                  M[".name"] = D.getNode(uint64_t(1));
                })),
            "metadata: kernel 3: '.name' is not a string");
}

//===-- one note per LTO partition ----------------------------------------===//

/// A note section with a metadata note per element of \p Blobs and a GNU
/// note after the first; \p Offsets is set to each metadata note's offset.
std::vector<uint8_t>
partitionedSection(ArrayRef<std::string> Blobs,
                   std::vector<size_t> *Offsets = nullptr) {
  std::vector<uint8_t> S;
  if (Offsets)
    Offsets->clear();
  for (size_t I = 0; I != Blobs.size(); ++I) {
    if (Offsets)
      Offsets->push_back(S.size());
    appendNote(S, "AMDGPU", 32, arrayRefFromStringRef(Blobs[I]));
    if (I == 0)
      appendNote(S, "GNU", 3, {1, 2, 3, 4});
  }
  return S;
}

TEST(MetadataTest, SeveralNotesAreJoined) {
  const std::string Target = "amdgcn-amd-amdhsa--gfx90a";
  std::vector<size_t> Off;
  std::vector<uint8_t> S =
      partitionedSection({metadataBlob({{"a0", 11}, {"a1", 12}}, Target),
                          metadataBlob({{"b0", 13}}, Target)},
                         &Off);
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  ASSERT_EQ(MD->notes().size(), 2u);
  EXPECT_EQ(MD->notes()[0].Offset, Off[0]);
  EXPECT_EQ(MD->notes()[1].Offset, Off[1]);
  EXPECT_EQ(MD->notes()[1].Target, Target);
  EXPECT_EQ(MD->target(), Target);
  EXPECT_EQ(MD->version()->Minor, 2u);
  ASSERT_EQ(MD->kernels().size(), 3u);
  const char *Symbols[] = {"a0.kd", "a1.kd", "b0.kd"};
  const unsigned Notes[] = {0, 0, 1}, Indices[] = {0, 1, 0};
  for (unsigned I = 0; I != 3; ++I) {
    SCOPED_TRACE(I);
    const KernelMD &K = MD->kernels()[I];
    EXPECT_EQ(K.Symbol, Symbols[I]);
    EXPECT_EQ(K.Note, Notes[I]);
    EXPECT_EQ(K.Index, Indices[I]);
    EXPECT_EQ(K.SGPRCount, 11u + I);
    EXPECT_EQ(MD->findBySymbol(Symbols[I]), &K);
  }
}

TEST(MetadataTest, SameSymbolInTwoNotes) {
  std::vector<size_t> Off;
  std::vector<uint8_t> S = partitionedSection(
      {metadataBlob({{"a"}, {"k"}}, "t"), metadataBlob({{"b"}, {"k"}}, "t")},
      &Off);
  EXPECT_EQ(parseError(S), "metadata: kernel 'k.kd' is described by the notes "
                           "at offsets 0x0 and " +
                               ("0x" + utohexstr(Off[1], true)));
  // The same note twice, as a copy-and-paste would make it.
  std::string Blob = metadataBlob({{"k"}}, "t");
  S = partitionedSection({Blob, Blob}, &Off);
  EXPECT_NE(parseError(S).find("kernel 'k.kd' is described by the notes"),
            std::string::npos);
  // A note that repeats a symbol is its own problem first, whether or not
  // an earlier note has the symbol too (each note's content is checked
  // before the notes are put together).
  S = partitionedSection(
      {metadataBlob({{"k"}}, "t"), metadataBlob({{"k"}, {"k"}}, "t")}, &Off);
  EXPECT_EQ(parseError(S), "metadata: note at offset " +
                               ("0x" + utohexstr(Off[1], true)) +
                               ": kernels 0 and 1 have the same symbol 'k.kd'");
}

TEST(MetadataTest, NotesAgreeOnVersionAndTarget) {
  std::vector<size_t> Off;
  std::vector<uint8_t> S =
      partitionedSection({metadataBlob({{"a"}}, "amdgcn-amd-amdhsa--gfx90a"),
                          metadataBlob({{"b"}}, "amdgcn-amd-amdhsa--gfx942")},
                         &Off);
  EXPECT_EQ(parseError(S),
            "metadata: notes at offsets 0x0 and " +
                ("0x" + utohexstr(Off[1], true)) +
                " disagree on 'amdhsa.target' ('amdgcn-amd-amdhsa--gfx90a' "
                "and 'amdgcn-amd-amdhsa--gfx942')");
  S = partitionedSection(
      {metadataBlob({{"a"}}, "t", 1), metadataBlob({{"b"}}, "t", 2)}, &Off);
  EXPECT_EQ(parseError(S), "metadata: notes at offsets 0x0 and " +
                               ("0x" + utohexstr(Off[1], true)) +
                               " disagree on 'amdhsa.version' ('1.1' and "
                               "'1.2')");
  // A note without them agrees with every other; the third note is
  // compared with the first one that has them.
  S = partitionedSection({metadataBlob({{"a"}}, "", 0),
                          metadataBlob({{"b"}}, "t", 1),
                          metadataBlob({{"c"}}, "u", 1)},
                         &Off);
  EXPECT_EQ(parseError(S), "metadata: notes at offsets " +
                               ("0x" + utohexstr(Off[1], true)) + " and " +
                               ("0x" + utohexstr(Off[2], true)) +
                               " disagree on 'amdhsa.target' ('t' and 'u')");
  S = partitionedSection(
      {metadataBlob({{"a"}}, "", 0), metadataBlob({{"b"}}, "t", 1)});
  Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(S);
  ASSERT_OK(MD);
  EXPECT_EQ(MD->target(), "t");
  EXPECT_EQ(MD->version()->Minor, 1u);
  EXPECT_FALSE(MD->notes()[0].Target.has_value());
}

TEST(MetadataTest, ContentErrorsNameTheNote) {
  // With one note the messages are the ones above; with several, each names
  // its note.
  std::vector<size_t> Off;
  std::string Broken = "\x81\xae"
                       "amdhsa.kernels"
                       "\x91\x01";
  std::vector<uint8_t> S =
      partitionedSection({metadataBlob({{"a"}}, "t"), Broken}, &Off);
  const std::string Note = "note at offset " + ("0x" + utohexstr(Off[1], true));
  EXPECT_EQ(parseError(S), "metadata: " + Note + ": kernel 0 is not a map");
  S = partitionedSection({metadataBlob({{"a"}}, "t"), rawBlob({0xc1})}, &Off);
  EXPECT_EQ(parseError(S), "metadata: " + Note + ": malformed msgpack payload");
  // The first note's problem comes first.
  S = partitionedSection({rawBlob({0x92, 0x01, 0x02}), rawBlob({0xc1})});
  EXPECT_EQ(parseError(S), "metadata: note at offset 0x0: root is not a map");
}

// interfaceOf: the argument layout and the launch keys of one kernel, read
// from its note; values written out canonically whatever their encoding.
TEST(MetadataTest, InterfaceOf) {
  msgpack::Document D;
  msgpack::MapDocNode Root = D.getRoot().getMap(/*Convert=*/true);
  msgpack::ArrayDocNode KA = D.getArrayNode();
  KA.push_back(kernelNode(D, {"a"}));
  msgpack::MapDocNode B = kernelNode(D, {"b"});
  msgpack::ArrayDocNode Args = D.getArrayNode();
  for (auto [Off, Size, Kind] :
       {std::tuple<uint64_t, uint64_t, const char *>{0, 8, "global_buffer"},
        {8, 4, "by_value"}}) {
    msgpack::MapDocNode A = D.getMapNode();
    A[".offset"] = D.getNode(Off);
    A[".size"] = D.getNode(Size);
    A[".value_kind"] = D.getNode(Kind);
    A[".name"] = D.getNode("x");
    Args.push_back(A);
  }
  B[".args"] = Args;
  msgpack::ArrayDocNode WG = D.getArrayNode();
  for (uint64_t V : {64, 1, 1})
    WG.push_back(D.getNode(V));
  B[".reqd_workgroup_size"] = WG;
  KA.push_back(B);
  Root["amdhsa.kernels"] = KA;
  std::string Blob;
  D.writeToBlob(Blob);
  auto MD = CodeObjectMetadata::parse(noteSection(Blob));
  ASSERT_OK(MD);

  Expected<KernelInterface> IA = MD->interfaceOf("a.kd");
  ASSERT_OK(IA);
  ASSERT_TRUE(IA->Args.has_value());
  EXPECT_TRUE(IA->Args->empty());
  EXPECT_EQ(IA->LaunchKeys, (std::map<std::string, std::string>{
                                {".kernarg_segment_align", "4"},
                                {".uniform_work_group_size", "1"}}));

  Expected<KernelInterface> IB = MD->interfaceOf("b.kd");
  ASSERT_OK(IB);
  ASSERT_EQ(IB->Args->size(), 2u);
  EXPECT_EQ((*IB->Args)[1].Offset, 8u);
  EXPECT_EQ((*IB->Args)[1].Size, 4u);
  EXPECT_EQ((*IB->Args)[1].ValueKind, "by_value");
  EXPECT_EQ((*IB->Args)[0].ValueKind, "global_buffer");
  EXPECT_EQ(IB->LaunchKeys[".reqd_workgroup_size"], "[64, 1, 1]");

  EXPECT_EQ(toString(MD->interfaceOf("c.kd").takeError()),
            "metadata: no kernel with symbol 'c.kd'");
}

TEST(MetadataTest, InterfaceOfRefusesBadArgs) {
  msgpack::Document D;
  msgpack::MapDocNode Root = D.getRoot().getMap(/*Convert=*/true);
  msgpack::ArrayDocNode KA = D.getArrayNode();
  msgpack::MapDocNode K = kernelNode(D, {"k"});
  msgpack::ArrayDocNode Args = D.getArrayNode();
  msgpack::MapDocNode A = D.getMapNode();
  A[".offset"] = D.getNode("zero");
  Args.push_back(A);
  K[".args"] = Args;
  KA.push_back(K);
  Root["amdhsa.kernels"] = KA;
  std::string Blob;
  D.writeToBlob(Blob);
  auto MD = CodeObjectMetadata::parse(noteSection(Blob));
  ASSERT_OK(MD);
  EXPECT_EQ(toString(MD->interfaceOf("k.kd").takeError()),
            "metadata: kernel 'k.kd': .args[0] '.offset' is not an unsigned "
            "integer");
}

} // namespace
