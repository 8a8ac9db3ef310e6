//===- lib/Passes/CountersPrinter.cpp - print<counters> -------------------===//

#include "hotswap/Passes/CountersPrinter.h"

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/EdgeCounts.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/CloneRecord.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/CounterRecord.h"
#include "hotswap/Passes/SourceLines.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <optional>

using namespace llvm;
using namespace hotswap;

namespace {
/// One edge of a kernel's graph, as print<counters> shows it.
struct EdgeLine {
  uint64_t From = 0, To = 0; // block offsets in the original code
  StringRef Kind;            // fallthrough, taken, jump, indirect
  const CounterEntry *Counter = nullptr;
  std::optional<int64_t> Count;
};

/// One kernel's counters, in block order.
struct KernelCounts {
  StringRef Name;
  std::vector<const CounterEntry *> Blocks;
  /// Edge counters (counters=edge), and every edge of the kernel's graph
  /// when edges are shown.
  std::vector<const CounterEntry *> EdgeCounters;
  std::vector<EdgeLine> Edges;
  /// Why the edges cannot be shown (empty: they can).
  std::string NoEdges;
};

/// Text for XML: the five characters XML gives meaning escaped.
std::string xml(StringRef S) {
  std::string Out;
  for (char C : S)
    switch (C) {
    case '&':
      Out += "&amp;";
      break;
    case '<':
      Out += "&lt;";
      break;
    case '>':
      Out += "&gt;";
      break;
    case '"':
      Out += "&quot;";
      break;
    case '\'':
      Out += "&apos;";
      break;
    default:
      Out += C;
    }
  return Out;
}

/// A heat map of \p Counts: a row per kernel, a cell per block in the
/// order of its code, coloured on a log scale from the coolest count to
/// the hottest (grey: never ran); each cell's tooltip says which block and
/// how often.
void drawHeatMap(raw_ostream &OS, ArrayRef<KernelCounts> Kernels,
                 ArrayRef<uint64_t> Counts) {
  constexpr unsigned Cell = 12, Row = 18, Label = 420, Top = 40;
  uint64_t Max = 0;
  size_t Widest = 0;
  for (const KernelCounts &K : Kernels) {
    Widest = std::max(Widest, K.Blocks.size());
    for (const CounterEntry *E : K.Blocks)
      Max = std::max(Max, Counts[E->Index]);
  }
  const double LogMax = std::log1p(double(Max));
  const unsigned W = Label + Widest * Cell + 20;
  const unsigned H = Top + Kernels.size() * Row + 20;
  OS << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W
     << "\" height=\"" << H << "\" font-family=\"monospace\" "
     << "font-size=\"11\">\n";
  OS << "<text x=\"4\" y=\"16\" font-size=\"13\">block counts per "
        "kernel (log scale; grey: never ran; hottest "
     << Max << ")</text>\n";
  for (size_t R = 0; R < Kernels.size(); ++R) {
    const KernelCounts &K = Kernels[R];
    const unsigned Y = Top + R * Row;
    std::string Name = K.Name.str();
    if (Name.size() > 60)
      Name = Name.substr(0, 57) + "...";
    OS << "<text x=\"4\" y=\"" << Y + Cell - 2 << "\">" << xml(Name)
       << "</text>\n";
    for (size_t C = 0; C < K.Blocks.size(); ++C) {
      const CounterEntry &E = *K.Blocks[C];
      const uint64_t N = Counts[E.Index];
      std::string Fill = "#d0d0d0";
      if (N) {
        // Blue (cool) to red (hot).
        double T = LogMax > 0 ? std::log1p(double(N)) / LogMax : 1;
        Fill = formatv("rgb({0},{1},{2})", unsigned(40 + 215 * T),
                       unsigned(60 + 80 * (1 - std::abs(2 * T - 1))),
                       unsigned(255 - 215 * T))
                   .str();
      }
      OS << "<rect x=\"" << Label + C * Cell << "\" y=\"" << Y << "\" width=\""
         << Cell - 1 << "\" height=\"" << Cell << "\" fill=\"" << Fill
         << "\"><title>" << xml(K.Name) << " +" << hex(E.Offset) << " ("
         << E.Kind << "): " << N << "</title></rect>\n";
    }
  }
  OS << "</svg>\n";
}
} // namespace

/// Every edge of each kernel of \p Kernels, from the graph of its original
/// code (the clone record says where it is), with its counter and, with
/// \p Counts (a dump), its count, counted or derived (EdgeCounts.h).
static Error edgesOf(Object &Obj, AnalysisManager &AM,
                     std::vector<KernelCounts> &Kernels,
                     ArrayRef<uint64_t> Counts) {
  Expected<std::vector<CloneRecord>> Recs = readCloneRecords(Obj);
  if (!Recs)
    return Recs.takeError();
  auto CA = AM.getResult<CodeAnalysis>(Obj);
  if (!CA)
    return CA.takeError();
  for (KernelCounts &K : Kernels) {
    const CloneRecord *Rec = nullptr;
    for (const CloneRecord &R : *Recs)
      if (R.Kernel == K.Name)
        Rec = &R;
    std::optional<ArrayRef<uint8_t>> Bytes =
        Rec ? Obj.bytesIfAt(Rec->Code, Rec->Size) : std::nullopt;
    if (!Bytes) {
      K.NoEdges = "no clone record names the kernel's original code";
      continue;
    }
    if (llvm::any_of(K.Blocks,
                     [](const CounterEntry *E) { return E->Unit != "wave"; })) {
      K.NoEdges = "lane counts do not give edge counts";
      continue;
    }
    code::CodeFunction F;
    F.Name = K.Name.str();
    F.Kind = code::FunctionKind::Kernel;
    F.Begin = Rec->Code;
    F.End = Rec->Code + Rec->Size;
    code::FunctionCFG G = code::buildCFG(CA->mc(), F, *Bytes, CA->functions());
    const std::vector<code::EdgeRef> All = code::graphEdges(G);
    auto BlockAt = [&](uint64_t Off) -> std::optional<uint32_t> {
      std::optional<uint32_t> I = G.insnAt(F.Begin + Off);
      if (!I || G.Blocks[G.blockOf(*I)].First != *I)
        return std::nullopt;
      return G.blockOf(*I);
    };
    auto OffsetOf = [&](uint32_t B) {
      return G.Insns[G.Blocks[B].First].Addr - F.Begin;
    };
    // The counts the map and the dump give (without a dump: 0, for what
    // can be known).
    std::vector<std::optional<uint64_t>> BlockCounts(G.Blocks.size()),
        EdgeCounts(All.size());
    std::vector<const CounterEntry *> CounterOf(All.size());
    for (const CounterEntry *E : K.Blocks)
      if (std::optional<uint32_t> B = BlockAt(E->Offset))
        BlockCounts[*B] = Counts.empty() ? 0 : Counts[E->Index];
    for (const CounterEntry *E : K.EdgeCounters) {
      std::optional<uint32_t> From = BlockAt(E->Offset),
                              To = E->To ? BlockAt(*E->To) : std::nullopt;
      size_t X = 0;
      for (; From && To && X < All.size(); ++X) {
        const code::Edge &Ed = G.Blocks[All[X].From].Succs[All[X].Succ];
        if (All[X].From == *From && Ed.To == *To &&
            Ed.Kind == code::EdgeKind::FallThrough)
          break;
      }
      if (!From || !To || X == All.size())
        return makeError("the counter map's edge counter " + Twine(E->Index) +
                         " of kernel '" + K.Name + "' (+" + hex(E->Offset) +
                         " -> +" + hex(E->To.value_or(0)) +
                         ") is no fall-through edge of its code");
      CounterOf[X] = E;
      EdgeCounts[X] = Counts.empty() ? 0 : Counts[E->Index];
    }
    std::vector<std::optional<int64_t>> Derived =
        code::deriveEdgeCounts(G, All, BlockCounts, EdgeCounts);
    for (size_t X = 0; X < All.size(); ++X) {
      const code::Edge &Ed = G.Blocks[All[X].From].Succs[All[X].Succ];
      K.Edges.push_back({OffsetOf(All[X].From), OffsetOf(Ed.To),
                         code::edgeKindName(Ed.Kind), CounterOf[X],
                         Derived[X]});
    }
  }
  return Error::success();
}

CountersPrinterPass::CountersPrinterPass(std::string D, std::string O,
                                         std::string S, bool E)
    : Dump(std::move(D)), Only(std::move(O)), SVG(std::move(S)), Edges(E) {}

Expected<std::unique_ptr<Pass>> CountersPrinterPass::create(StringRef Params) {
  std::string Dump, Only, SVG;
  bool Edges = false;
  SmallVector<StringRef, 4> Parts;
  Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts) {
    auto [Key, Value] = P.split('=');
    if (Key == "dump" && !Value.empty()) {
      Dump = Value.str();
    } else if (Key == "svg" && !Value.empty()) {
      SVG = Value.str();
    } else if (Key == "edges" && Value.empty() && !P.contains('=')) {
      Edges = true;
    } else if (Key == "only") {
      if (Error E = regexParam(Key, Value, Only))
        return E;
    } else {
      return makeError("unknown parameter '" + P +
                       "' (known: dump=FILE, svg=FILE, only=REGEX, edges)");
    }
  }
  if (!SVG.empty() && Dump.empty())
    return makeError("svg=FILE draws the counts of a dump: dump=FILE is "
                     "required");
  return std::make_unique<CountersPrinterPass>(std::move(Dump), std::move(Only),
                                               std::move(SVG), Edges);
}

void CountersPrinterPass::printPipeline(raw_ostream &OS) const {
  OS << "print<counters";
  char Sep = ';';
  if (!Dump.empty())
    OS << Sep << "dump=" << Dump;
  if (!Only.empty())
    OS << Sep << "only=" << Only;
  if (!SVG.empty())
    OS << Sep << "svg=" << SVG;
  if (Edges)
    OS << Sep << "edges";
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
  std::vector<KernelCounts> Kernels;
  for (const CounterEntry &E : *Map) {
    if (OnlyRE && !OnlyRE->match(E.Kernel))
      continue;
    if (Kernels.empty() || Kernels.back().Name != E.Kernel)
      Kernels.push_back({E.Kernel, {}, {}, {}, {}});
    (E.Kind == "edge" ? Kernels.back().EdgeCounters : Kernels.back().Blocks)
        .push_back(&E);
  }
  const bool ShowEdges = Edges || llvm::any_of(*Map, [](const CounterEntry &E) {
                           return E.Kind == "edge";
                         });
  if (ShowEdges)
    if (Error E = edgesOf(Obj, AM, Kernels, Counts))
      return std::move(E);
  // Source lines, where the object has line tables: each block's first
  // instruction in the kernel's original code (the clone record says
  // where that is).
  SourceLines Lines(Obj);
  StringMap<std::pair<uint64_t, uint64_t>> CodeOf; // kernel -> code, size
  if (!Lines.empty()) {
    Expected<std::vector<CloneRecord>> Recs = readCloneRecords(Obj);
    if (!Recs)
      return Recs.takeError();
    for (const CloneRecord &R : *Recs)
      CodeOf[R.Kernel] = {R.Code, R.Size};
  }
  // A block's line: its first code with a line, up to the next block.
  DenseMap<const CounterEntry *, std::string> LineOfBlock;
  for (const KernelCounts &K : Kernels) {
    auto It = CodeOf.find(K.Name);
    if (It == CodeOf.end())
      continue;
    auto [Code, Size] = It->second;
    for (size_t B = 0; B < K.Blocks.size(); ++B) {
      uint64_t End = B + 1 < K.Blocks.size() &&
                             K.Blocks[B + 1]->Offset > K.Blocks[B]->Offset
                         ? K.Blocks[B + 1]->Offset
                         : Size;
      if (std::optional<std::string> L =
              Lines.first(Code + K.Blocks[B]->Offset, Code + End))
        LineOfBlock[K.Blocks[B]] = *L;
    }
  }
  auto LineOf = [&](const CounterEntry &E) -> std::optional<std::string> {
    auto It = LineOfBlock.find(&E);
    if (It == LineOfBlock.end())
      return std::nullopt;
    return It->second;
  };
  auto CountOf = [&](const CounterEntry &E) -> std::optional<uint64_t> {
    if (Counts.empty())
      return std::nullopt;
    return Counts[E.Index];
  };

  if (!SVG.empty()) {
    std::error_code EC;
    raw_fd_ostream OS(SVG, EC);
    if (EC)
      return makeError("'" + SVG + "': " + EC.message());
    drawHeatMap(OS, Kernels, Counts);
    if (OS.has_error())
      return makeError("'" + SVG + "': " + OS.error().message());
  }

  if (!Ctx.JSON) {
    raw_ostream &OS = *Ctx.Out;
    OS << "counters: " << Map->size() << " in " << Kernels.size()
       << " kernels, counting "
       << (Map->front().Unit == "lane" ? "lanes" : "waves");
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
        if (std::optional<std::string> L = LineOf(*E))
          OS << "  " << *L;
        OS << "\n";
      }
      if (!ShowEdges)
        continue;
      if (!K.NoEdges.empty()) {
        OS << "  edges: not shown: " << K.NoEdges << "\n";
        continue;
      }
      size_t Counted = 0, Unknown = 0;
      for (const EdgeLine &L : K.Edges) {
        Counted += L.Counter != nullptr;
        Unknown += !L.Count;
      }
      OS << "  edges: " << K.Edges.size() << ", " << Counted << " counted, "
         << K.Edges.size() - Counted - Unknown << " derived, " << Unknown
         << " unknown\n";
      for (const EdgeLine &L : K.Edges) {
        OS << formatv("  +{0,-8} -> +{1,-8} {2,-11}", hex(L.From), hex(L.To),
                      L.Kind);
        if (L.Count && !Counts.empty())
          OS << " " << *L.Count;
        OS << (L.Counter ? " (counter " + std::to_string(L.Counter->Index) + ")"
               : L.Count ? std::string(" (derived)")
                         : std::string(" (unknown)"))
           << "\n";
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
                     {"unit", E->Unit},
                     {"counter", int64_t(E->Index)}};
      if (std::optional<uint64_t> C = CountOf(*E))
        O["count"] = *C;
      if (std::optional<std::string> L = LineOf(*E))
        O["line"] = *L;
      Bs.push_back(std::move(O));
    }
    json::Object KO{{"name", K.Name}, {"blocks", std::move(Bs)}};
    if (ShowEdges && K.NoEdges.empty()) {
      json::Array Es;
      for (const EdgeLine &L : K.Edges) {
        json::Object O{{"from", int64_t(L.From)},
                       {"to", int64_t(L.To)},
                       {"kind", L.Kind},
                       {"how", L.Counter ? "counted"
                               : L.Count ? "derived"
                                         : "unknown"}};
        if (L.Counter)
          O["counter"] = int64_t(L.Counter->Index);
        if (L.Count && !Counts.empty())
          O["count"] = *L.Count;
        Es.push_back(std::move(O));
      }
      KO["edges"] = std::move(Es);
    } else if (ShowEdges) {
      KO["edges_not_shown"] = K.NoEdges;
    }
    KA.push_back(std::move(KO));
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
