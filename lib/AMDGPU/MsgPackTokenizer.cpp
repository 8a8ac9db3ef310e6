//===- lib/AMDGPU/MsgPackTokenizer.cpp - Offset-aware msgpack -------------===//
//
// llvm::msgpack::Reader does not say where it is, so the tokenizer follows
// it: a token starts where the previous one ended, and its size follows from
// its tag byte (and, for a string or a binary, from where the payload the
// Reader returned ends). The Reader has already checked that those bytes
// exist.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/MsgPackTokenizer.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>

using namespace llvm;
using msgpack::Type;

namespace hotswap {
namespace amdgpu {

namespace {

/// Bytes of the encoding that starts with each tag byte, for every type
/// without a payload of its own (integers, nil, booleans, floats, container
/// headers): 1 but for the tags below.
constexpr std::array<uint8_t, 256> FixedSizes = [] {
  std::array<uint8_t, 256> S{};
  for (uint8_t &Size : S)
    Size = 1;            // fixint, fixmap, fixarray, nil, false, true
  S[0xcc] = S[0xd0] = 2; // uint 8, int 8
  S[0xcd] = S[0xd1] = S[0xdc] = S[0xde] = 3;           // 16-bit forms
  S[0xca] = S[0xce] = S[0xd2] = S[0xdd] = S[0xdf] = 5; // 32-bit forms
  S[0xcb] = S[0xcf] = S[0xd3] = 9;                     // 64-bit forms
  return S;
}();

/// Map keys are ordered as msgpack::DocNode orders them: by type, then by
/// value; all nils are equal.
bool keyLess(const msgpack::Object &A, const msgpack::Object &B) {
  if (A.Kind != B.Kind)
    return unsigned(A.Kind) < unsigned(B.Kind);
  switch (A.Kind) {
  case Type::Int:
    return A.Int < B.Int;
  case Type::UInt:
    return A.UInt < B.UInt;
  case Type::Boolean:
    return A.Bool < B.Bool;
  case Type::Float:
    return A.Float < B.Float;
  case Type::String:
  case Type::Binary:
    return A.Raw < B.Raw;
  default:
    return false;
  }
}

} // namespace

std::optional<uint64_t> MsgPackToken::asUnsigned() const {
  if (Obj.Kind == Type::UInt)
    return Obj.UInt;
  if (Obj.Kind == Type::Int && Obj.Int >= 0)
    return uint64_t(Obj.Int);
  return std::nullopt;
}

MsgPackTokenizer::MsgPackTokenizer(StringRef Blob) : Blob(Blob), R(Blob) {}

bool MsgPackTokenizer::fail(bool IsContainerKey) {
  Failed = true;
  ContainerKey = IsContainerKey;
  return false;
}

Error MsgPackTokenizer::error() const {
  if (!Failed)
    return Error::success();
  return makeError(ContainerKey ? "malformed msgpack payload: a map key is an "
                                  "array or a map"
                                : "malformed msgpack payload");
}

bool MsgPackTokenizer::next(MsgPackToken &T) {
  if (LLVM_UNLIKELY(Failed) || (Started && Stack.empty()))
    return false;
  Started = true;
  T.Offset = Pos;
  T.Depth = Stack.size();
  Expected<bool> Got = R.read(T.Obj);
  if (LLVM_UNLIKELY(!Got)) {
    // The reader's own message adds nothing a user can act on: error()
    // reports the payload as malformed, with the note's offset added by
    // the caller.
    consumeError(Got.takeError());
    return fail();
  }
  const Type Kind = T.Obj.Kind;
  if (LLVM_UNLIKELY(!*Got || Kind == Type::Extension))
    return fail();
  if (Kind == Type::String || Kind == Type::Binary)
    T.Size = uint64_t(T.Obj.Raw.bytes_end() - Blob.bytes_begin()) - Pos;
  else
    T.Size = FixedSizes[uint8_t(Blob[Pos])];
  assert(T.Size <= Blob.size() - Pos && "the reader read past the blob");
  Pos += T.Size;
  const bool IsContainer = Kind == Type::Map || Kind == Type::Array;

  if (LLVM_LIKELY(!Stack.empty())) {
    Level &L = Stack.back();
    if (L.IsMap && L.Left % 2 == 0) {
      if (IsContainer)
        return fail(/*IsContainerKey=*/true);
      // LLVM writes keys in ascending order: while they ascend strictly,
      // each key is checked with one comparison and the map needs no
      // sorting when it ends.
      if (L.Ascending && Keys.size() != L.FirstKey) {
        const msgpack::Object &Prev = Keys.back();
        L.Ascending = Kind == Type::String && Prev.Kind == Type::String
                          ? Prev.Raw < T.Obj.Raw
                          : keyLess(Prev, T.Obj);
      }
      Keys.push_back(T.Obj);
    }
    --L.Left;
  }
  if (IsContainer) {
    // A count beyond the bytes left is found out when they run out (not
    // earlier, so that an earlier container key is reported as such).
    const bool IsMap = Kind == Type::Map;
    Stack.push_back(
        {(IsMap ? 2 : 1) * uint64_t(T.Obj.Length), IsMap, true, Keys.size()});
  }
  // Close every container this token completed.
  while (!Stack.empty() && Stack.back().Left == 0) {
    const Level L = Stack.pop_back_val();
    if (L.IsMap && !L.Ascending && !keysUnique(L.FirstKey))
      return fail();
    if (L.IsMap)
      Keys.resize(L.FirstKey);
  }
  return true;
}

bool MsgPackTokenizer::skip(const MsgPackToken &T) {
  MsgPackToken E;
  while (Stack.size() > T.Depth)
    if (!next(E))
      return false;
  return true;
}

LLVM_ATTRIBUTE_NOINLINE bool MsgPackTokenizer::keysUnique(size_t First) {
  auto Begin = Keys.begin() + First;
  // DocNode orders floats with '<', under which NaN equals every float: a
  // NaN key and any other float key collide. Without NaN (or with a single
  // float key) '<' is a strict weak order and sorting works.
  unsigned Floats = 0;
  bool NaN = false;
  for (auto I = Begin; I != Keys.end(); ++I)
    if (I->Kind == Type::Float) {
      ++Floats;
      NaN |= std::isnan(I->Float);
    }
  if (NaN && Floats > 1)
    return false;
  std::sort(Begin, Keys.end(), keyLess);
  return std::adjacent_find(
             Begin, Keys.end(),
             [](const msgpack::Object &A, const msgpack::Object &B) {
               return !keyLess(A, B);
             }) == Keys.end();
}

} // namespace amdgpu
} // namespace hotswap
