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

Expected<std::vector<json::Object>> hotswap::readRecordLines(const Object &Obj,
                                                             StringRef Name) {
  std::vector<json::Object> Out;
  const Section *S = Obj.findSection(Name);
  if (!S || S->isNoBits())
    return Out;
  SmallVector<StringRef, 8> Lines;
  toStringRef(S->contents()).split(Lines, '\n', -1, /*KeepEmpty=*/false);
  for (size_t I = 0; I != Lines.size(); ++I) {
    auto Bad = [&](Error E) {
      return prefixError("section '" + Name + "': line " + Twine(I + 1),
                         std::move(E));
    };
    Expected<json::Value> V = json::parse(Lines[I]);
    if (!V)
      return Bad(V.takeError());
    json::Object *O = V->getAsObject();
    if (!O)
      return Bad(makeError("not a JSON object"));
    Out.push_back(std::move(*O));
  }
  return Out;
}

Error hotswap::appendRecordLines(Object &Obj, StringRef Name,
                                 ArrayRef<json::Object> Lines, StringRef What) {
  if (Lines.empty())
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
  std::vector<uint8_t> Bytes(S->contents().begin(), S->contents().end());
  if (!Bytes.empty() && Bytes.back() != '\n')
    Bytes.push_back('\n');
  for (const json::Object &O : Lines) {
    std::string Line;
    raw_string_ostream OS(Line);
    OS << json::Value(json::Object(O));
    Bytes.insert(Bytes.end(), Line.begin(), Line.end());
    Bytes.push_back('\n');
  }
  S->setContents(std::move(Bytes));
  return Error::success();
}
