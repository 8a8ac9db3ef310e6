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
  std::vector<CounterEntry> Out;
  if (Error Err = forEachRecordLine(
          Obj, CounterMapRecords, [&](json::Object &&O, size_t I) -> Error {
            Expected<CounterEntry> E = parseEntry(O);
            if (!E)
              return E.takeError();
            if (E->Index != I)
              return makeError("counter index " + Twine(E->Index) + " where " +
                               Twine(I) + " was expected");
            Out.push_back(std::move(*E));
            return Error::success();
          }))
    return std::move(Err);
  return Out;
}

/// \p E as the map's line holds it.
static json::Object counterEntryJSON(const CounterEntry &E) {
  json::Object O{{"code", hex(E.Code)},     {"index", int64_t(E.Index)},
                 {"kernel", E.Kernel},      {"kind", E.Kind},
                 {"offset", hex(E.Offset)}, {"unit", E.Unit}};
  if (E.To)
    O["to"] = hex(*E.To);
  return O;
}

Error hotswap::appendCounterMap(Object &Obj, ArrayRef<CounterEntry> Entries) {
  // One line at a time: a parsed object per block of a large library takes
  // hundreds of MB. The line is the one json::Object prints (keys sorted,
  // no spaces), written directly: a kernel's entries follow each other, so
  // its name is quoted once (JSON's quoting of long mangled names was most
  // of the writing); the other values need no quoting.
  const std::string *Kernel = nullptr;
  std::string Quoted;
  auto Plain = [](StringRef S) {
    return llvm::all_of(S, [](char C) {
      return C >= 0x20 && C < 0x7f && C != '"' && C != '\\';
    });
  };
  return appendRecordLines(
      Obj, CounterMapRecords, Entries.size(), [&](json::OStream &J, size_t I) {
        const CounterEntry &E = Entries[I];
        if (!Kernel || *Kernel != E.Kernel) {
          Kernel = &E.Kernel;
          Quoted.clear();
          raw_string_ostream(Quoted) << json::Value(E.Kernel);
        }
        if (!Plain(E.Kind) || !Plain(E.Unit)) {
          J.value(counterEntryJSON(E));
          return;
        }
        J.rawValue([&](raw_ostream &OS) {
          OS << "{\"code\":\"" << hex(E.Code) << "\",\"index\":" << E.Index
             << ",\"kernel\":" << Quoted << ",\"kind\":\"" << E.Kind
             << "\",\"offset\":\"" << hex(E.Offset) << '"';
          if (E.To)
            OS << ",\"to\":\"" << hex(*E.To) << '"';
          OS << ",\"unit\":\"" << E.Unit << "\"}";
        });
      });
}
