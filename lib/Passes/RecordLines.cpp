//===- lib/Passes/RecordLines.cpp - Records as JSON lines
//-------------------===//

#include "hotswap/Passes/RecordLines.h"

#include "hotswap/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace hotswap;

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

Error hotswap::forEachRecordLine(
    const Object &Obj, StringRef Name,
    function_ref<Error(json::Object &&, size_t)> Each) {
  const Section *S = Obj.findSection(Name);
  if (!S || S->isNoBits())
    return Error::success();
  StringRef Rest = toStringRef(S->contents());
  for (size_t I = 0, N = 0; !Rest.empty(); ++N) {
    auto [Line, Next] = Rest.split('\n');
    Rest = Next;
    if (Line.empty())
      continue;
    auto Bad = [&](Error E) {
      return prefixError("section '" + Name + "': line " + Twine(N + 1),
                         std::move(E));
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

Expected<std::vector<json::Object>> hotswap::readRecordLines(const Object &Obj,
                                                             StringRef Name) {
  std::vector<json::Object> Out;
  if (Error E =
          forEachRecordLine(Obj, Name, [&](json::Object &&O, size_t) -> Error {
            Out.push_back(std::move(O));
            return Error::success();
          }))
    return std::move(E);
  return Out;
}

Error hotswap::appendRecordLines(Object &Obj, StringRef Name,
                                 ArrayRef<json::Object> Lines, StringRef What) {
  return appendRecordLines(
      Obj, Name, Lines.size(), [&](size_t I) { return json::Object(Lines[I]); },
      What);
}

Error hotswap::appendRecordLines(Object &Obj, StringRef Name, size_t Count,
                                 function_ref<json::Object(size_t)> Line,
                                 StringRef What) {
  if (!Count)
    return Error::success();
  Section *S = Obj.findSection(Name);
  if (S && (S->isAlloc() || S->isNoBits()))
    return makeError("section '" + Name +
                     "' is loaded or has no contents: it cannot hold the "
                     "records of " +
                     What);
  if (!S) {
    auto New = std::make_unique<Section>();
    New->Name = Name.str();
    New->Type = ELF::SHT_PROGBITS;
    New->AddrAlign = 1;
    S = &Obj.addSection(std::move(New));
  }
  std::string Bytes(toStringRef(S->contents()));
  if (!Bytes.empty() && Bytes.back() != '\n')
    Bytes.push_back('\n');
  raw_string_ostream OS(Bytes);
  for (size_t I = 0; I != Count; ++I)
    OS << json::Value(Line(I)) << '\n';
  OS.flush();
  S->setContents(std::vector<uint8_t>(Bytes.begin(), Bytes.end()));
  return Error::success();
}
