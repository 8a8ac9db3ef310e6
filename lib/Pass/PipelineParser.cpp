//===- lib/Pass/PipelineParser.cpp - Pass names and pipelines -------------===//

#include "hotswap/Pass/PipelineParser.h"

#include "hotswap/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Regex.h"

using namespace llvm;
using namespace hotswap;

Error PipelineParser::add(Kind K, StringRef Name, StringRef Description,
                          PassFactory Factory, StringRef Expansion) {
  auto Fail = [&](const Twine &Msg) {
    if (Scope && Scope->FirstError.empty())
      Scope->FirstError = Msg.str();
    return makeError(Msg);
  };
  if (Name.empty() || Name.find_first_of(",<> ") != StringRef::npos)
    return Fail("invalid pass name '" + Name + "'");
  StringMap<size_t> &Names = K == Kind::Analysis ? AnalysisByName : ByName;
  if (Names.count(Name)) {
    const Entry &Taken = Entries[Names.lookup(Name)];
    return Fail((K == Kind::Analysis ? "analysis name '" : "pass name '") +
                Name + "' is already registered" +
                (Taken.Origin.empty() ? " (built in)" : " by " + Taken.Origin));
  }
  std::string Origin;
  if (Scope) {
    Origin = Scope->Origin;
    if (Factory && Scope->Wrap)
      Factory = Scope->Wrap(Name, std::move(Factory));
  } else if (K == Kind::Custom || BuiltinsDone) {
    Origin = "the embedding program";
  }
  Entries.push_back({Name.str(), Description.str(), K, std::move(Factory),
                     Expansion.str(), std::move(Origin)});
  Names[Name] = Entries.size() - 1;
  return Error::success();
}

Error PipelinePlan::appendTo(PassManager &PM) const {
  for (const Step &S : Steps) {
    // Parameters were checked when the plan was made: a factory that
    // accepted them once accepts them again.
    Expected<std::unique_ptr<Pass>> P = S.Factory(S.Params);
    if (!P)
      return P.takeError();
    PM.addPass(std::move(*P));
  }
  return Error::success();
}

Expected<PassManager> PipelinePlan::instantiate() const {
  PassManager PM;
  if (Error E = appendTo(PM))
    return std::move(E);
  return std::move(PM);
}

Expected<PipelinePlan> PipelineParser::parsePipeline(StringRef Text) const {
  PipelinePlan Plan;
  if (Error E = parseInto(Plan, Text, Text, 0, 0))
    return std::move(E);
  return std::move(Plan);
}

Error PipelineParser::parsePassPipeline(PassManager &PM, StringRef Text) const {
  Expected<PipelinePlan> Plan = parsePipeline(Text);
  if (!Plan)
    return Plan.takeError();
  return Plan->appendTo(PM);
}

Error PipelineParser::parseInto(PipelinePlan &Plan, StringRef Text,
                                StringRef Whole, size_t Base,
                                unsigned Depth) const {
  if (Depth > 8)
    return makeError("pipeline alias nesting is too deep");
  auto Fail = [&](size_t Col, const Twine &Msg) {
    return makeError("invalid pipeline '" + Whole + "': " + Msg +
                     " (at column " + Twine(Base + Col + 1) + ")");
  };
  if (Text.trim().empty())
    return Error::success();
  size_t Pos = 0;
  while (true) {
    // One element: up to the next ',' at angle-bracket depth 0.
    size_t Start = Pos;
    int Angle = 0;
    size_t End = Pos;
    for (; End < Text.size(); ++End) {
      char C = Text[End];
      if (C == '<')
        ++Angle;
      else if (C == '>') {
        if (--Angle < 0)
          return Fail(End, "unbalanced '>'");
      } else if (C == ',' && Angle == 0)
        break;
    }
    if (Angle != 0)
      return Fail(Start, "missing '>'");
    StringRef Elem = Text.slice(Start, End);
    if (Elem.trim().empty())
      return Fail(Start, "empty pass name");
    StringRef Name = Elem, Params;
    size_t LT = Elem.find('<');
    if (LT != StringRef::npos) {
      if (!Elem.ends_with(">"))
        return Fail(Start + Elem.rfind('>') + 1,
                    "unexpected text after '>' in '" + Elem + "'");
      Name = Elem.take_front(LT);
      Params = Elem.drop_front(LT + 1).drop_back();
    }
    if (Name.trim() != Name)
      return Fail(Start, "unexpected space in pass name '" + Name + "'");
    if (Name == "print") {
      // print<NAME> or print<NAME;PARAMS>: the printer's own parameters
      // follow the analysis name.
      auto [AnalysisName, PrinterParams] = Params.split(';');
      auto It = AnalysisByName.find(AnalysisName);
      if (It == AnalysisByName.end()) {
        SmallVector<StringRef, 4> Known;
        for (const Entry &E : Entries)
          if (E.K == Kind::Analysis)
            Known.push_back(E.Name);
        return Fail(Start,
                    "unknown analysis '" + Params +
                        "' in 'print<...>' (known: " + join(Known, ", ") + ")");
      }
      const Entry &E = Entries[It->second];
      Expected<std::unique_ptr<Pass>> P = E.Factory(PrinterParams);
      if (!P)
        return Fail(Start, toString(P.takeError()));
      Plan.Steps.push_back({E.Factory, PrinterParams.str()});
    } else {
      auto It = ByName.find(Name);
      if (It == ByName.end())
        return Fail(Start, "unknown pass name '" + Name + "'");
      const Entry &E = Entries[It->second];
      if (E.K == Kind::Alias) {
        if (LT != StringRef::npos)
          return Fail(Start,
                      "pipeline alias '" + Name + "' takes no parameters");
        if (Error Err = parseInto(Plan, E.Expansion, E.Expansion, 0, Depth + 1))
          return Err;
      } else {
        Expected<std::unique_ptr<Pass>> P = E.Factory(Params);
        if (!P)
          return Fail(Start, "pass '" + Name + "': " + toString(P.takeError()));
        Plan.Steps.push_back({E.Factory, Params.str()});
      }
    }
    if (End >= Text.size())
      break;
    Pos = End + 1;
    if (Pos >= Text.size())
      return Fail(Pos, "empty pass name");
  }
  return Error::success();
}

void PipelineParser::printPassNames(raw_ostream &OS) const {
  auto PrintSection = [&](StringRef Title, Kind K) {
    OS << Title << ":\n";
    for (const Entry &E : Entries) {
      if (E.K != K || !E.Origin.empty())
        continue;
      std::string N = K == Kind::Analysis ? "print<" + E.Name + ">" : E.Name;
      OS << "  " << left_justify(N, 20) << " " << E.Description;
      if (K == Kind::Alias)
        OS << " (= " << E.Expansion << ")";
      OS << "\n";
    }
  };
  PrintSection("Transform passes", Kind::Transform);
  PrintSection("Pipeline aliases", Kind::Alias);
  PrintSection("Check passes", Kind::Check);
  PrintSection("Analyses (print<name>)", Kind::Analysis);
  // Then what the embedding program and each plugin registered, in the
  // order of registration, under who registered it.
  std::vector<StringRef> Origins;
  for (const Entry &E : Entries)
    if (!E.Origin.empty() && !llvm::is_contained(Origins, E.Origin))
      Origins.push_back(E.Origin);
  for (StringRef O : Origins) {
    OS << "Registered by " << O << ":\n";
    for (const Entry &E : Entries) {
      if (E.Origin != O)
        continue;
      std::string N = E.K == Kind::Analysis ? "print<" + E.Name + ">" : E.Name;
      OS << "  " << left_justify(N, 20) << " " << E.Description;
      if (E.K == Kind::Alias)
        OS << " (= " << E.Expansion << ")";
      OS << "\n";
    }
  }
}

Error hotswap::regexParam(StringRef Key, StringRef Value, std::string &Out) {
  std::string Err;
  if (!Regex(Value).isValid(Err))
    return makeError("invalid regular expression '" + Value + "' in " + Key +
                     "=: " + Err);
  Out = Value.str();
  return Error::success();
}

Error hotswap::parseOnlyParams(StringRef Pass, StringRef Params,
                               std::string &Only,
                               ArrayRef<std::pair<StringRef, bool *>> Flags) {
  SmallVector<StringRef, 4> Parts;
  Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts) {
    auto [Key, Value] = P.split('=');
    if (Key == "only" && P.contains('=')) {
      if (Error E = regexParam(Key, Value, Only))
        return E;
      continue;
    }
    auto F = llvm::find_if(Flags, [&](auto &Flag) { return Flag.first == P; });
    if (F == Flags.end()) {
      std::string Known = "only=REGEX";
      for (auto &Flag : Flags)
        Known += ", " + Flag.first.str();
      return makeError((Pass.empty() ? "" : Pass + ": ") +
                       "unknown parameter '" + P + "' (known: " + Known + ")");
    }
    *F->second = true;
  }
  return Error::success();
}
