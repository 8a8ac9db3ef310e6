//===- unittests/MsgPackTokenizerTest.cpp - Offset-aware msgpack tests ----===//
//
// Where each token lies (offset, size, depth) for every msgpack encoding,
// skipping containers, and the rules that make a payload malformed. That the
// tokenizer accepts exactly what msgpack::Document accepts is tested through
// the metadata reader (MetadataTest.AcceptsWhatDocumentAccepts).
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/MsgPackTokenizer.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace llvm;
using namespace hotswap::amdgpu;
using msgpack::Type;

namespace {

std::string bytes(std::initializer_list<uint8_t> B) {
  return std::string(B.begin(), B.end());
}

struct Seen {
  Type Kind;
  uint64_t Offset, Size;
  unsigned Depth;
};

/// Every token of \p Blob; the error message (or "") in \p Err.
std::vector<Seen> tokens(StringRef Blob, std::string &Err,
                         uint64_t *End = nullptr) {
  MsgPackTokenizer TS(Blob);
  std::vector<Seen> Out;
  MsgPackToken T;
  while (TS.next(T))
    Out.push_back({T.Obj.Kind, T.Offset, T.Size, T.Depth});
  Error E = TS.error();
  Err = E ? toString(std::move(E)) : "";
  if (End)
    *End = TS.offset();
  return Out;
}

std::string errorOf(StringRef Blob) {
  std::string Err;
  tokens(Blob, Err);
  return Err;
}

TEST(MsgPackTokenizerTest, EveryEncoding) {
  // clang-format off
  std::string Blob = bytes({
      0xdc, 0x00, 0x0d,             // array16 of 13            @0x00
      0x05,                         // fixint 5                 @0x03
      0xe0,                         // negative fixint -32      @0x04
      0xc0,                         // nil                      @0x05
      0xc3,                         // true                     @0x06
      0xcc, 0xff,                   // uint8 255                @0x07
      0xd1, 0xff, 0xfe,             // int16 -2                 @0x09
      0xca, 0x3f, 0x80, 0x00, 0x00, // float32 1.0              @0x0c
      0xcf, 0, 0, 0, 0, 0, 0, 1, 0, // uint64 256               @0x11
      0xa3, 'a', 'b', 'c',          // fixstr "abc"             @0x1a
      0xd9, 0x02, 'x', 'y',         // str8 "xy"                @0x1e
      0xc4, 0x01, 0x07,             // bin8 [7]                 @0x22
      0xa0,                         // fixstr ""                @0x25
      0x81, 0xa1, 'k', 0x90,        // {"k": []}                @0x26
      0xc1, 0xc1                    // ignored: after the root  @0x2a
  });
  // clang-format on
  std::string Err;
  uint64_t End = 0;
  std::vector<Seen> T = tokens(Blob, Err, &End);
  EXPECT_EQ(Err, "");
  EXPECT_EQ(End, 0x2au);
  const Seen Want[] = {
      {Type::Array, 0x00, 3, 0},   {Type::UInt, 0x03, 1, 1},
      {Type::Int, 0x04, 1, 1},     {Type::Nil, 0x05, 1, 1},
      {Type::Boolean, 0x06, 1, 1}, {Type::UInt, 0x07, 2, 1},
      {Type::Int, 0x09, 3, 1},     {Type::Float, 0x0c, 5, 1},
      {Type::UInt, 0x11, 9, 1},    {Type::String, 0x1a, 4, 1},
      {Type::String, 0x1e, 4, 1},  {Type::Binary, 0x22, 3, 1},
      {Type::String, 0x25, 1, 1},  {Type::Map, 0x26, 1, 1},
      {Type::String, 0x27, 2, 2},  {Type::Array, 0x29, 1, 2},
  };
  ASSERT_EQ(T.size(), std::size(Want));
  for (size_t I = 0; I != T.size(); ++I) {
    SCOPED_TRACE(I);
    EXPECT_EQ(T[I].Kind, Want[I].Kind);
    EXPECT_EQ(T[I].Offset, Want[I].Offset);
    EXPECT_EQ(T[I].Size, Want[I].Size);
    EXPECT_EQ(T[I].Depth, Want[I].Depth);
  }
}

TEST(MsgPackTokenizerTest, WideHeadersAndUnsignedValues) {
  // map32 {uint16 1: int32 7, int8 -1: uint32 2^32-1}
  std::string Blob =
      bytes({0xdf, 0, 0, 0,    2,    0xcd, 0,    1,    0xd2, 0,
             0,    0, 7, 0xd0, 0xff, 0xce, 0xff, 0xff, 0xff, 0xff});
  MsgPackTokenizer TS(Blob);
  MsgPackToken T;
  ASSERT_TRUE(TS.next(T));
  EXPECT_EQ(T.Size, 5u);
  EXPECT_TRUE(T.isContainer());
  EXPECT_EQ(T.Obj.Length, 2u);
  EXPECT_FALSE(T.asUnsigned());
  const std::optional<uint64_t> Values[] = {1, 7, std::nullopt, 0xffffffff};
  const uint64_t Sizes[] = {3, 5, 2, 5};
  for (unsigned I = 0; I != 4; ++I) {
    SCOPED_TRACE(I);
    ASSERT_TRUE(TS.next(T));
    EXPECT_EQ(T.asUnsigned(), Values[I]);
    EXPECT_EQ(T.Size, Sizes[I]);
  }
  EXPECT_FALSE(TS.next(T));
  EXPECT_FALSE(bool(TS.error()));
  EXPECT_EQ(TS.offset(), Blob.size());
}

TEST(MsgPackTokenizerTest, SkipReadsTheWholeValue) {
  // {"a": [1, {"b": [2, 3]}], "c": 4}
  std::string Blob = bytes({0x82, 0xa1, 'a', 0x92, 0x01, 0x81, 0xa1, 'b', 0x92,
                            0x02, 0x03, 0xa1, 'c', 0x04});
  MsgPackTokenizer TS(Blob);
  MsgPackToken Root, K, V;
  ASSERT_TRUE(TS.next(Root));
  ASSERT_TRUE(TS.next(K));
  ASSERT_TRUE(TS.next(V));
  EXPECT_EQ(V.Depth, 1u);
  ASSERT_TRUE(TS.skip(V));
  ASSERT_TRUE(TS.next(K));
  EXPECT_EQ(K.Obj.Raw, "c");
  EXPECT_EQ(K.Offset, 11u);
  // Skipping a scalar reads nothing.
  ASSERT_TRUE(TS.next(V));
  ASSERT_TRUE(TS.skip(V));
  EXPECT_EQ(TS.offset(), Blob.size());
  EXPECT_FALSE(TS.next(V));
  EXPECT_FALSE(bool(TS.error()));
}

TEST(MsgPackTokenizerTest, Malformed) {
  const std::string Malformed = "malformed msgpack payload";
  EXPECT_EQ(errorOf(""), Malformed);
  EXPECT_EQ(errorOf(bytes({0xc1})), Malformed);             // never used
  EXPECT_EQ(errorOf(bytes({0x92, 0x01})), Malformed);       // array ends early
  EXPECT_EQ(errorOf(bytes({0xa3, 'a'})), Malformed);        // string too
  EXPECT_EQ(errorOf(bytes({0xd4, 0x01, 0x02})), Malformed); // extension
  // An element count beyond the bytes left; a container key found first is
  // named.
  EXPECT_EQ(errorOf(bytes({0xdd, 0xff, 0xff, 0xff, 0xff, 0x01})), Malformed);
  EXPECT_EQ(errorOf(bytes({0xdf, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x90})),
            Malformed + ": a map key is an array or a map");
  // Two equal keys, at any depth, in any order.
  EXPECT_EQ(errorOf(bytes({0x82, 0x01, 0xc0, 0x01, 0xc0})), Malformed);
  EXPECT_EQ(errorOf(bytes({0x91, 0x83, 0xa1, 'b', 0xc0, 0xa1, 'a', 0xc0, 0xa1,
                           'b', 0xc0})),
            Malformed);
  EXPECT_EQ(errorOf(bytes({0x82, 0xa1, 'b', 0xc0, 0xa1, 'a', 0xc0})), "");
  EXPECT_EQ(errorOf(bytes({0x81, 0x90, 0x01})),
            Malformed + ": a map key is an array or a map");
  // After a failure, nothing more is read.
  const std::string Bad = bytes({0x92, 0xc1, 0x01});
  MsgPackTokenizer TS(Bad);
  MsgPackToken T;
  EXPECT_TRUE(TS.next(T));
  EXPECT_FALSE(TS.next(T));
  EXPECT_FALSE(TS.next(T));
  EXPECT_EQ(toString(TS.error()), Malformed);
}

} // namespace
