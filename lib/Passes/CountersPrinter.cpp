//===- lib/Passes/CountersPrinter.cpp - print<counters> -------------------===//

#include "hotswap/Passes/CountersPrinter.h"

#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/CounterRecord.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include <optional>

using namespace llvm;
using namespace hotswap;

CountersPrinterPass::CountersPrinterPass(std::string D, std::string O)
    : Dump(std::move(D)), Only(std::move(O)) {}

Expected<std::unique_ptr<Pass>> CountersPrinterPass::create(StringRef Params) {
  std::string Dump, Only;
  SmallVector<StringRef, 4> Parts;
  Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts) {
    auto [Key, Value] = P.split('=');
    if (Key == "dump" && !Value.empty()) {
      Dump = Value.str();
    } else if (Key == "only") {
      Expected<std::string> RE = regexParam(Key, Value);
      if (!RE)
        return RE.takeError();
      Only = std::move(*RE);
    } else {
      return makeError("unknown parameter '" + P +
                       "' (known: dump=FILE, only=REGEX)");
    }
  }
  return std::make_unique<CountersPrinterPass>(std::move(Dump),
                                               std::move(Only));
}

void CountersPrinterPass::printPipeline(raw_ostream &OS) const {
  OS << "print<counters";
  char Sep = ';';
  if (!Dump.empty())
    OS << Sep << "dump=" << Dump;
  if (!Only.empty())
    OS << Sep << "only=" << Only;
  OS << ">";
}

Expected<PreservedAnalyses>
CountersPrinterPass::run(Object &Obj, AnalysisManager &AM, PassContext &Ctx) {
  Expected<std::vector<CounterEntry>> Map = readCounterMap(Obj);
  if (!Map)
    return Map.takeError();
  if (Map->empty())
    return makeError("the object has no counter map (section '" +
                     CounterMapSectionName + "'): run instrument first");
  // The counts, when a dump is given: exactly one per counter.
  std::vector<uint64_t> Counts;
  if (!Dump.empty()) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> B =
        MemoryBuffer::getFile(Dump, /*IsText=*/false,
                              /*RequiresNullTerminator=*/false);
    if (!B)
      return makeError("'" + Dump + "': " + B.getError().message());
    StringRef Bytes = (*B)->getBuffer();
    const uint64_t Want = Map->size() * CounterBytes;
    if (Bytes.size() != Want)
      return makeError("'" + Dump + "': " + Twine(Bytes.size()) +
                       " bytes, but the counter area holds " +
                       Twine(Map->size()) + " counters (" + Twine(Want) +
                       " bytes)");
    for (size_t I = 0; I < Map->size(); ++I)
      Counts.push_back(support::endian::read64le(Bytes.data() + I * 8));
  }
  std::optional<Regex> OnlyRE;
  if (!Only.empty())
    OnlyRE.emplace(Only);

  // Kernels in the order the map first names them.
  struct KernelCounts {
    StringRef Name;
    std::vector<const CounterEntry *> Blocks;
  };
  std::vector<KernelCounts> Kernels;
  for (const CounterEntry &E : *Map) {
    if (OnlyRE && !OnlyRE->match(E.Kernel))
      continue;
    if (Kernels.empty() || Kernels.back().Name != E.Kernel)
      Kernels.push_back({E.Kernel, {}});
    Kernels.back().Blocks.push_back(&E);
  }
  auto CountOf = [&](const CounterEntry &E) -> std::optional<uint64_t> {
    if (Counts.empty())
      return std::nullopt;
    return Counts[E.Index];
  };

  if (!Ctx.JSON) {
    raw_ostream &OS = *Ctx.Out;
    OS << "counters: " << Map->size() << " in " << Kernels.size() << " kernels";
    if (!Dump.empty())
      OS << ", counts from '" << Dump << "'";
    OS << "\n";
    for (const KernelCounts &K : Kernels) {
      OS << "kernel " << K.Name << ": " << K.Blocks.size() << " blocks";
      if (!Counts.empty()) {
        size_t Never = llvm::count_if(K.Blocks, [&](const CounterEntry *E) {
          return Counts[E->Index] == 0;
        });
        OS << ", " << Never << " never ran";
      }
      OS << "\n";
      for (const CounterEntry *E : K.Blocks) {
        OS << formatv("  +{0,-8} {1,-5} counter {2}", hex(E->Offset), E->Kind,
                      E->Index);
        if (std::optional<uint64_t> C = CountOf(*E))
          OS << ": " << *C;
        OS << "\n";
      }
    }
    return PreservedAnalyses::all();
  }
  json::Array KA;
  for (const KernelCounts &K : Kernels) {
    json::Array Bs;
    for (const CounterEntry *E : K.Blocks) {
      json::Object O{{"offset", int64_t(E->Offset)},
                     {"kind", E->Kind},
                     {"counter", int64_t(E->Index)}};
      if (std::optional<uint64_t> C = CountOf(*E))
        O["count"] = *C;
      Bs.push_back(std::move(O));
    }
    KA.push_back(json::Object{{"name", K.Name}, {"blocks", std::move(Bs)}});
  }
  json::Object Top{{"total", int64_t(Map->size())}, {"kernels", std::move(KA)}};
  if (!Dump.empty())
    Top["dump"] = Dump;
  json::Value V(json::Object{{"counters", std::move(Top)}});
  if (Ctx.JSONOut)
    Ctx.JSONOut->push_back(std::move(V));
  else
    *Ctx.Out << formatv("{0:2}", V) << "\n";
  return PreservedAnalyses::all();
}
