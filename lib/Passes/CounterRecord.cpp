//===- lib/Passes/CounterRecord.cpp - The .hotswap.counters.map section ---===//

#include "hotswap/Passes/CounterRecord.h"

#include "hotswap/Passes/RecordLines.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

using namespace llvm;
using namespace hotswap;

static Expected<CounterEntry> parseEntry(const json::Object &O) {
  CounterEntry E;
  std::optional<int64_t> Index = O.getInteger("index");
  if (!Index || *Index < 0)
    return makeError("no counter index");
  E.Index = *Index;
  Expected<std::string> Kernel = stringMember(O, "kernel");
  if (!Kernel)
    return Kernel.takeError();
  E.Kernel = std::move(*Kernel);
  Expected<std::string> Kind = stringMember(O, "kind");
  if (!Kind)
    return Kind.takeError();
  if (*Kind != "entry" && *Kind != "block" && *Kind != "edge")
    return makeError("kind '" + *Kind + "' is not entry, block or edge");
  E.Kind = std::move(*Kind);
  Expected<std::string> Unit = stringMember(O, "unit");
  if (!Unit)
    return Unit.takeError();
  if (*Unit != "wave" && *Unit != "lane")
    return makeError("unit '" + *Unit + "' is not wave or lane");
  E.Unit = std::move(*Unit);
  Expected<uint64_t> Off = hexMember(O, "offset");
  if (!Off)
    return Off.takeError();
  E.Offset = *Off;
  Expected<uint64_t> Code = hexMember(O, "code");
  if (!Code)
    return Code.takeError();
  E.Code = *Code;
  if (E.Kind == "edge") {
    Expected<uint64_t> To = hexMember(O, "to");
    if (!To)
      return To.takeError();
    E.To = *To;
  }
  return E;
}

Expected<std::vector<CounterEntry>> hotswap::readCounterMap(const Object &Obj) {
  Expected<std::vector<json::Object>> Lines =
      readRecordLines(Obj, CounterMapSectionName);
  if (!Lines)
    return Lines.takeError();
  std::vector<CounterEntry> Out;
  for (size_t I = 0; I != Lines->size(); ++I) {
    Expected<CounterEntry> E = parseEntry((*Lines)[I]);
    if (E && E->Index != I)
      E = makeError("counter index " + Twine(E->Index) + " where " + Twine(I) +
                    " was expected");
    if (!E)
      return prefixError("section '" + CounterMapSectionName + "': line " +
                             Twine(I + 1),
                         E.takeError());
    Out.push_back(std::move(*E));
  }
  return Out;
}

Error hotswap::appendCounterMap(Object &Obj, ArrayRef<CounterEntry> Entries) {
  std::vector<json::Object> Lines;
  for (const CounterEntry &E : Entries) {
    Lines.push_back(json::Object{{"index", int64_t(E.Index)},
                                 {"kernel", E.Kernel},
                                 {"kind", E.Kind},
                                 {"unit", E.Unit},
                                 {"offset", hex(E.Offset)},
                                 {"code", hex(E.Code)}});
    if (E.To)
      Lines.back()["to"] = hex(*E.To);
  }
  return appendRecordLines(Obj, CounterMapSectionName, Lines, "counters");
}
