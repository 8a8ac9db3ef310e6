//===- lib/Passes/CodePrinters.cpp - print<cfg>, print<liveness> ----------===//

#include "hotswap/Passes/CodePrinters.h"

#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Pass/PipelineParser.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

static StringRef kindName(FunctionKind K) {
  return K == FunctionKind::Kernel ? "kernel" : "function";
}

/// "1 block", "3 blocks".
static std::string counted(uint64_t N, StringRef Noun) {
  return std::to_string(N) + " " + Noun.str() + (N == 1 ? "" : "s");
}

static std::string range(uint64_t B, uint64_t E) {
  return "[" + hex(B) + ", " + hex(E) + ")";
}

namespace {
enum class What { CFG, Liveness };

class CodePrinter : public Pass {
public:
  CodePrinter(What W, CodePrinterOptions O) : W(W), Opts(std::move(O)) {
    if (!Opts.Only.empty())
      OnlyRE.emplace(Opts.Only);
    Name = W == What::CFG ? "print<cfg>" : "print<liveness>";
  }
  StringRef name() const override { return Name; }
  void printPipeline(raw_ostream &OS) const override {
    OS << "print<" << (W == What::CFG ? "cfg" : "liveness");
    if (!Opts.Only.empty())
      OS << ";only=" << Opts.Only;
    if (Opts.Insns)
      OS << ";insns";
    OS << ">";
  }
  bool isTransform() const override { return false; }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                  PassContext &Ctx) override;

private:
  What W;
  CodePrinterOptions Opts;
  std::optional<Regex> OnlyRE;
  std::string Name;

  bool selected(const CodeFunction &F) const {
    return !OnlyRE || OnlyRE->match(F.Name);
  }
  void printCFG(CodeAnalysis::Result &R, size_t I, raw_ostream &OS) const;
  json::Object cfgJSON(CodeAnalysis::Result &R, size_t I) const;
  void printLiveness(CodeAnalysis::Result &R, size_t I, raw_ostream &OS) const;
  json::Object livenessJSON(CodeAnalysis::Result &R, size_t I) const;
};
} // namespace

static std::string succText(const Block &B) {
  std::string S;
  for (const Edge &E : B.Succs) {
    if (!S.empty())
      S += ", ";
    S += "bb" + std::to_string(E.To) + " " + edgeKindName(E.Kind).str();
  }
  if (B.Exit != BlockExit::None) {
    if (!S.empty())
      S += ", ";
    S += blockExitName(B.Exit).str();
  }
  return S;
}

/// The text of instruction \p I of function \p FI.
static std::string insnText(CodeAnalysis::Result &R, const CodeFunction &F,
                            const Insn &I) {
  std::optional<amdgpu::DecodedInst> D =
      decodeAt(R.mc(), R.bytes(F), F.Begin, I);
  if (!D)
    return "?";
  std::string T = R.mc().printInst(D->Inst, I.Addr);
  StringRef Trimmed = StringRef(T).trim();
  return Trimmed.str();
}

void CodePrinter::printCFG(CodeAnalysis::Result &R, size_t FI,
                           raw_ostream &OS) const {
  const CodeFunction &F = R.functions().Functions[FI];
  const FunctionCFG &G = R.cfg(FI);
  OS << "function '" << F.Name << "' (" << kindName(F.Kind) << ") "
     << range(F.Begin, F.End) << ": " << counted(G.Insns.size(), "instruction")
     << ", " << counted(G.Blocks.size(), "block") << ", " << G.decodedBytes()
     << " of " << F.size() << " bytes decoded"
     << (G.editable() ? "" : ", not editable") << "\n";
  for (uint32_t B = 0; B < G.Blocks.size(); ++B) {
    const Block &Bl = G.Blocks[B];
    OS << "  bb" << B << " "
       << range(G.Insns[Bl.First].Addr, G.Insns[Bl.End - 1].end()) << " "
       << counted(Bl.End - Bl.First, "instruction") << " -> " << succText(Bl)
       << (Bl.Reachable ? ""
           : Bl.Padding ? " (padding)"
                        : " (unreachable)")
       << "\n";
    if (Opts.Insns)
      for (uint32_t I = Bl.First; I < Bl.End; ++I)
        OS << "    " << hex(G.Insns[I].Addr) << ": "
           << insnText(R, F, G.Insns[I]) << "\n";
  }
  for (const CallSite &C : G.Calls) {
    OS << "  call at " << hex(G.Insns[C.Insn].Addr) << " -> ";
    if (!C.Target)
      OS << "unknown";
    else if (const CodeFunction *Callee = R.functions().startingAt(*C.Target))
      OS << "'" << Callee->Name << "' " << hex(*C.Target);
    else
      OS << hex(*C.Target);
    OS << "\n";
  }
  for (auto &[I, T] : G.Indirect)
    if (G.Insns[I].F == Flow::IndirectJump)
      OS << "  indirect jump at " << hex(G.Insns[I].Addr) << " -> " << hex(T)
         << "\n";
  for (const CodeWindow &W : G.Windows)
    OS << "  window " << range(W.Begin, W.End) << " " << windowKindName(W.K)
       << (W.K == CodeWindow::Priority ? "" : " (no code inserted inside)")
       << "\n";
  for (const CodeFinding &Fd : G.Findings)
    OS << "  finding" << (Fd.Blocking ? " (blocking)" : "") << ": "
       << Fd.Message << "\n";
}

json::Object CodePrinter::cfgJSON(CodeAnalysis::Result &R, size_t FI) const {
  const CodeFunction &F = R.functions().Functions[FI];
  const FunctionCFG &G = R.cfg(FI);
  json::Array Blocks;
  for (uint32_t B = 0; B < G.Blocks.size(); ++B) {
    const Block &Bl = G.Blocks[B];
    json::Array Succs;
    for (const Edge &E : Bl.Succs)
      Succs.push_back(
          json::Object{{"to", E.To}, {"kind", edgeKindName(E.Kind)}});
    json::Object O{{"index", B},
                   {"begin", static_cast<int64_t>(G.Insns[Bl.First].Addr)},
                   {"end", static_cast<int64_t>(G.Insns[Bl.End - 1].end())},
                   {"instructions", Bl.End - Bl.First},
                   {"successors", std::move(Succs)},
                   {"exit", blockExitName(Bl.Exit)},
                   {"reachable", Bl.Reachable},
                   {"padding", Bl.Padding}};
    if (Opts.Insns) {
      json::Array Insns;
      for (uint32_t I = Bl.First; I < Bl.End; ++I)
        Insns.push_back(
            json::Object{{"address", static_cast<int64_t>(G.Insns[I].Addr)},
                         {"text", insnText(R, F, G.Insns[I])}});
      O["insns"] = std::move(Insns);
    }
    Blocks.push_back(std::move(O));
  }
  json::Array Calls;
  for (const CallSite &C : G.Calls) {
    json::Object O{{"address", static_cast<int64_t>(G.Insns[C.Insn].Addr)}};
    if (C.Target)
      O["target"] = static_cast<int64_t>(*C.Target);
    Calls.push_back(std::move(O));
  }
  json::Array Findings;
  for (const CodeFinding &Fd : G.Findings)
    Findings.push_back(json::Object{{"address", static_cast<int64_t>(Fd.Addr)},
                                    {"message", Fd.Message},
                                    {"blocking", Fd.Blocking}});
  json::Array Windows;
  for (const CodeWindow &W : G.Windows)
    Windows.push_back(
        json::Object{{"begin", static_cast<int64_t>(W.Begin)},
                     {"end", static_cast<int64_t>(W.End)},
                     {"kind", windowKindName(W.K)},
                     {"forbids_insert", W.K != CodeWindow::Priority}});
  return json::Object{{"name", F.Name},
                      {"kind", kindName(F.Kind)},
                      {"begin", static_cast<int64_t>(F.Begin)},
                      {"end", static_cast<int64_t>(F.End)},
                      {"windows", std::move(Windows)},
                      {"decoded_bytes", static_cast<int64_t>(G.decodedBytes())},
                      {"instructions", static_cast<int64_t>(G.Insns.size())},
                      {"editable", G.editable()},
                      {"blocks", std::move(Blocks)},
                      {"calls", std::move(Calls)},
                      {"findings", std::move(Findings)}};
}

static std::string highestText(const RegisterModel &RM, const RegSet &S) {
  std::string T;
  for (auto [C, N] :
       {std::pair{RegClass::SGPR, "s"}, std::pair{RegClass::VGPR, "v"},
        std::pair{RegClass::AGPR, "a"}}) {
    if (auto H = RM.highest(S, C)) {
      if (!T.empty())
        T += ", ";
      T += N + std::to_string(*H);
    }
  }
  return T.empty() ? "none" : T;
}

void CodePrinter::printLiveness(CodeAnalysis::Result &R, size_t FI,
                                raw_ostream &OS) const {
  const CodeFunction &F = R.functions().Functions[FI];
  const CodeAnalysis::FunctionCode &FC = R.function(FI);
  const FunctionCFG &G = FC.CFG;
  const RegisterModel &RM = RegisterModel::get(R.mc().regInfo());
  OS << "function '" << F.Name << "' (" << kindName(F.Kind) << ") "
     << range(F.Begin, F.End) << "\n";
  if (G.Blocks.empty()) {
    OS << "  no instructions\n";
    return;
  }
  OS << "  live at entry: " << RM.format(FC.Live.LiveIn[0]) << "\n";
  OS << "  highest ever live: " << highestText(RM, FC.Live.everLive()) << "\n";
  if (Opts.Insns) {
    OS << "  exec values: e0 every lane, e1 at entry";
    for (uint32_t V = 2; V < FC.Live.execValues(); ++V)
      OS << ", e" << V << " in e" << FC.Live.execParent(V);
    OS << "\n";
  }
  for (uint32_t B = 0; B < G.Blocks.size(); ++B) {
    const Block &Bl = G.Blocks[B];
    OS << "  bb" << B << " " << hex(G.Insns[Bl.First].Addr)
       << (FC.Live.ExecFullBefore[Bl.First] ? "" : " (exec partial)") << "\n";
    OS << "    in:  " << RM.format(FC.Live.LiveIn[B]) << "\n";
    const code::WaitCounts &W = FC.Waits;
    if (!W.In[B].idle())
      OS << "    in flight: " << W.In[B].format(W.Set, RM) << "\n";
    if (Opts.Insns) {
      std::vector<RegSet> Before = FC.Live.liveBefore(B);
      std::vector<code::WaitState> Waits = W.statesBefore(B);
      for (uint32_t I = Bl.First; I < Bl.End; ++I) {
        OS << "    " << hex(G.Insns[I].Addr) << ": "
           << insnText(R, F, G.Insns[I]) << "\n      exec e"
           << FC.Live.execBefore(I) << " (in e"
           << FC.Live.execParent(FC.Live.execBefore(I))
           << "), live: " << RM.format(Before[I - Bl.First]);
        if (!Waits[I - Bl.First].idle())
          OS << "; in flight: " << Waits[I - Bl.First].format(W.Set, RM);
        OS << "\n";
      }
    }
    OS << "    out: " << RM.format(FC.Live.LiveOut[B]) << "\n";
  }
}

json::Object CodePrinter::livenessJSON(CodeAnalysis::Result &R,
                                       size_t FI) const {
  const CodeFunction &F = R.functions().Functions[FI];
  const CodeAnalysis::FunctionCode &FC = R.function(FI);
  const FunctionCFG &G = FC.CFG;
  const RegisterModel &RM = RegisterModel::get(R.mc().regInfo());
  json::Array Blocks;
  for (uint32_t B = 0; B < G.Blocks.size(); ++B) {
    const Block &Bl = G.Blocks[B];
    json::Object O{
        {"index", B},
        {"begin", static_cast<int64_t>(G.Insns[Bl.First].Addr)},
        {"exec_full", static_cast<bool>(FC.Live.ExecFullBefore[Bl.First])},
        {"live_in", RM.format(FC.Live.LiveIn[B])},
        {"in_flight", FC.Waits.In[B].format(FC.Waits.Set, RM)},
        {"live_out", RM.format(FC.Live.LiveOut[B])}};
    if (Opts.Insns) {
      std::vector<RegSet> Before = FC.Live.liveBefore(B);
      std::vector<code::WaitState> Waits = FC.Waits.statesBefore(B);
      json::Array Insns;
      for (uint32_t I = Bl.First; I < Bl.End; ++I)
        Insns.push_back(json::Object{
            {"address", static_cast<int64_t>(G.Insns[I].Addr)},
            {"text", insnText(R, F, G.Insns[I])},
            {"live", RM.format(Before[I - Bl.First])},
            {"in_flight", Waits[I - Bl.First].format(FC.Waits.Set, RM)}});
      O["insns"] = std::move(Insns);
    }
    Blocks.push_back(std::move(O));
  }
  json::Object Out{{"name", F.Name},
                   {"kind", kindName(F.Kind)},
                   {"begin", static_cast<int64_t>(F.Begin)},
                   {"blocks", std::move(Blocks)}};
  if (!G.Blocks.empty())
    Out["live_at_entry"] = RM.format(FC.Live.LiveIn[0]);
  for (auto [C, Key] : {std::pair{RegClass::SGPR, "highest_sgpr"},
                        std::pair{RegClass::VGPR, "highest_vgpr"},
                        std::pair{RegClass::AGPR, "highest_agpr"}})
    if (auto H = RM.highest(FC.Live.everLive(), C))
      Out[Key] = *H;
  return Out;
}

Expected<PreservedAnalyses> CodePrinter::run(Object &Obj, AnalysisManager &AM,
                                             PassContext &Ctx) {
  auto R = AM.getResult<CodeAnalysis>(Obj);
  if (!R)
    return R.takeError();
  const FunctionMap &M = R->functions();
  if (!Ctx.JSON) {
    raw_ostream &OS = *Ctx.Out;
    size_t Kernels = 0;
    for (const CodeFunction &F : M.Functions)
      Kernels += F.Kind == FunctionKind::Kernel;
    OS << "functions: " << M.Functions.size() << " ("
       << counted(Kernels, "kernel") << ")\n";
    for (size_t I = 0; I < M.Functions.size(); ++I) {
      if (!selected(M.Functions[I]))
        continue;
      bool Kept = R->isComputed(I);
      if (W == What::CFG)
        printCFG(*R, I, OS);
      else
        printLiveness(*R, I, OS);
      if (!Kept)
        R->invalidate(I);
    }
    if (W == What::CFG && !OnlyRE) {
      for (const CodeGap &G : M.Gaps)
        OS << "gap " << range(G.Begin, G.End) << " " << gapKindName(G.Kind)
           << "\n";
      for (const std::string &Fd : M.Findings)
        OS << "finding: " << Fd << "\n";
    }
    return PreservedAnalyses::all();
  }
  json::Array Fns;
  for (size_t I = 0; I < M.Functions.size(); ++I) {
    if (!selected(M.Functions[I]))
      continue;
    bool Kept = R->isComputed(I);
    Fns.push_back(W == What::CFG ? cfgJSON(*R, I) : livenessJSON(*R, I));
    if (!Kept)
      R->invalidate(I);
  }
  json::Object Top{{"functions", std::move(Fns)}};
  if (W == What::CFG) {
    json::Array Gaps;
    for (const CodeGap &G : M.Gaps)
      Gaps.push_back(json::Object{{"begin", static_cast<int64_t>(G.Begin)},
                                  {"end", static_cast<int64_t>(G.End)},
                                  {"kind", gapKindName(G.Kind)}});
    Top["gaps"] = std::move(Gaps);
    json::Array Findings;
    for (const std::string &Fd : M.Findings)
      Findings.push_back(Fd);
    Top["findings"] = std::move(Findings);
  }
  json::Value V(
      json::Object{{W == What::CFG ? "cfg" : "liveness", std::move(Top)}});
  if (Ctx.JSONOut)
    Ctx.JSONOut->push_back(std::move(V));
  else
    *Ctx.Out << formatv("{0:2}", V) << "\n";
  return PreservedAnalyses::all();
}

static Expected<CodePrinterOptions> parseOptions(StringRef Printer,
                                                 StringRef Params) {
  CodePrinterOptions O;
  if (Error E = parseOnlyParams("print<" + Printer.str() + ">", Params, O.Only,
                                {{"insns", &O.Insns}}))
    return std::move(E);
  return O;
}

Expected<std::unique_ptr<Pass>> CFGPrinterPass::create(StringRef Params) {
  Expected<CodePrinterOptions> O = parseOptions("cfg", Params);
  if (!O)
    return O.takeError();
  return std::make_unique<CodePrinter>(What::CFG, std::move(*O));
}

Expected<std::unique_ptr<Pass>> LivenessPrinterPass::create(StringRef Params) {
  Expected<CodePrinterOptions> O = parseOptions("liveness", Params);
  if (!O)
    return O.takeError();
  return std::make_unique<CodePrinter>(What::Liveness, std::move(*O));
}
