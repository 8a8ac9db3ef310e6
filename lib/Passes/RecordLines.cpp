//===- lib/Passes/RecordLines.cpp - Records as JSON lines -----------------===//

#include "hotswap/Passes/RecordLines.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Sha256.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;
using namespace hotswap;

namespace {
constexpr uint64_t VersionSize = 4, DigestSize = 32;

Error inSection(const RecordKind &K, Error E) {
  return prefixError("section '" + K.Section + "'", std::move(E));
}

/// The lines of a record note's descriptor, checked.
Expected<StringRef> linesOfNote(ArrayRef<uint8_t> Bytes, RecordKind K) {
  Expected<ArrayRef<uint8_t>> Desc = recordNoteDesc(Bytes, K.Type);
  if (!Desc)
    return Desc.takeError();
  if (Desc->size() < VersionSize + DigestSize)
    return makeError("the record is " + Twine(Desc->size()) +
                     " bytes, too short for a version and a digest (" +
                     Twine(VersionSize + DigestSize) + ")");
  uint32_t Version = support::endian::read32le(Desc->data());
  if (Version != RecordLinesVersion)
    return makeError("the record's format version is " + Twine(Version) +
                     "; this tool reads version " + Twine(RecordLinesVersion));
  const size_t Body = Desc->size() - DigestSize;
  Sha256::Digest Sum = Sha256::hash(Desc->take_front(Body));
  if (std::memcmp(Sum.data(), Desc->data() + Body, DigestSize) != 0)
    return makeError("the record's SHA-256 does not match its contents: it "
                     "was changed after it was written");
  return toStringRef(Desc->slice(VersionSize, Body - VersionSize));
}
} // namespace

Expected<uint64_t> hotswap::hexMember(const json::Object &O, StringRef Key) {
  std::optional<StringRef> S = O.getString(Key);
  uint64_t V = 0;
  if (!S || !S->starts_with("0x") || S->drop_front(2).getAsInteger(16, V))
    return makeError("'" + Key + "' is not a hexadecimal string (\"0x...\")");
  return V;
}

Expected<std::string> hotswap::stringMember(const json::Object &O,
                                            StringRef Key) {
  std::optional<StringRef> S = O.getString(Key);
  if (!S)
    return makeError("'" + Key + "' is not a string");
  return S->str();
}

Expected<StringRef> hotswap::recordLinesText(const Object &Obj,
                                             const RecordKind &K) {
  const Section *S = Obj.findSection(K.Section);
  if (!S || S->isNoBits())
    return StringRef();
  if (S->Type == ELF::SHT_PROGBITS) // an earlier version's lines
    return toStringRef(S->contents());
  if (S->Type != ELF::SHT_NOTE)
    return inSection(K, makeError("neither a note nor lines of an earlier "
                                  "version: it cannot hold the records of " +
                                  K.What));
  Expected<StringRef> Text = linesOfNote(S->contents(), K);
  if (!Text)
    return inSection(K, Text.takeError());
  return *Text;
}

Error hotswap::forEachRecordLine(
    const Object &Obj, const RecordKind &K,
    function_ref<Error(json::Object &&, size_t)> Each) {
  Expected<StringRef> Text = recordLinesText(Obj, K);
  if (!Text)
    return Text.takeError();
  StringRef Rest = *Text;
  for (size_t I = 0, N = 0; !Rest.empty(); ++N) {
    auto [Line, Next] = Rest.split('\n');
    Rest = Next;
    if (Line.empty())
      continue;
    auto Bad = [&](Error E) {
      return inSection(K, prefixError("line " + Twine(N + 1), std::move(E)));
    };
    Expected<json::Value> V = json::parse(Line);
    if (!V)
      return Bad(V.takeError());
    json::Object *O = V->getAsObject();
    if (!O)
      return Bad(makeError("not a JSON object"));
    if (Error E = Each(std::move(*O), I++))
      return Bad(std::move(E));
  }
  return Error::success();
}

Expected<std::vector<json::Object>>
hotswap::readRecordLines(const Object &Obj, const RecordKind &K) {
  std::vector<json::Object> Out;
  if (Error E =
          forEachRecordLine(Obj, K, [&](json::Object &&O, size_t) -> Error {
            Out.push_back(std::move(O));
            return Error::success();
          }))
    return std::move(E);
  return Out;
}

Expected<std::vector<uint8_t>> hotswap::encodeRecordLines(const RecordKind &K,
                                                          StringRef Text) {
  const uint64_t DescSize = VersionSize + Text.size() + DigestSize;
  if (DescSize > UINT32_MAX)
    return makeError("the records of " + K.What + " would take " +
                     Twine(DescSize) +
                     " bytes, more than a note holds (4 GiB)");
  std::vector<uint8_t> Out;
  Out.reserve(RecordNoteDescAt + alignTo(DescSize, 4));
  putRecordNoteHead(Out, K.Type, static_cast<uint32_t>(DescSize));
  uint8_t V[VersionSize];
  support::endian::write32le(V, RecordLinesVersion);
  Out.insert(Out.end(), V, V + VersionSize);
  Out.insert(Out.end(), Text.bytes_begin(), Text.bytes_end());
  Sha256::Digest Sum = Sha256::hash(
      ArrayRef<uint8_t>(Out).drop_front(static_cast<size_t>(RecordNoteDescAt)));
  Out.insert(Out.end(), Sum.begin(), Sum.end());
  Out.resize(alignTo(Out.size(), 4), 0);
  return Out;
}

Error hotswap::appendRecordLines(Object &Obj, const RecordKind &K,
                                 ArrayRef<json::Object> Lines) {
  return appendRecordLines(Obj, K, Lines.size(),
                           [&](size_t I) { return json::Object(Lines[I]); });
}

Error hotswap::appendRecordLines(Object &Obj, const RecordKind &K, size_t Count,
                                 function_ref<json::Object(size_t)> Line) {
  return appendRecordLines(Obj, K, Count, [&](json::OStream &J, size_t I) {
    J.value(json::Value(Line(I)));
  });
}

Error hotswap::appendRecordLines(
    Object &Obj, const RecordKind &K, size_t Count,
    function_ref<void(json::OStream &, size_t)> Write) {
  if (!Count)
    return Error::success();
  Section *S = Obj.findSection(K.Section);
  if (S && (S->isAlloc() || S->isNoBits()))
    return makeError("section '" + K.Section +
                     "' is loaded or has no contents: it cannot hold the "
                     "records of " +
                     K.What);
  Expected<StringRef> Old = recordLinesText(Obj, K);
  if (!Old)
    return Old.takeError();
  std::string Text(*Old);
  if (!Text.empty() && Text.back() != '\n')
    Text.push_back('\n');
  raw_string_ostream OS(Text);
  for (size_t I = 0; I != Count; ++I) {
    {
      json::OStream J(OS);
      Write(J, I);
    }
    OS << '\n';
  }
  OS.flush();
  Expected<std::vector<uint8_t>> Bytes = encodeRecordLines(K, Text);
  if (!Bytes)
    return Bytes.takeError();
  if (!S) {
    auto New = std::make_unique<Section>();
    New->Name = K.Section.str();
    S = &Obj.addSection(std::move(New));
  }
  S->Type = ELF::SHT_NOTE;
  S->AddrAlign = 4;
  S->setContents(std::move(*Bytes));
  return Error::success();
}
