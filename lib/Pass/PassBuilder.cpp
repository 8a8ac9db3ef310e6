//===- lib/Pass/PassBuilder.cpp - Textual pipelines -----------------------===//

#include "hotswap/Pass/PassBuilder.h"

#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/PatchDescriptors.h"
#include "hotswap/Passes/RealignShdrs.h"
#include "hotswap/Passes/StubSymbols.h"
#include "hotswap/Passes/SynthTrampolines.h"
#include "hotswap/Passes/Verify.h"

#include "llvm/Support/Format.h"

using namespace llvm;
using namespace hotswap;

namespace {
/// `print<NAME>`: computes the analysis and prints it to the context stream.
template <typename AnalysisT> class PrintAnalysisPass : public Pass {
public:
  StringRef name() const override { return Name; }
  void printPipeline(raw_ostream &OS) const override {
    OS << "print<" << AnalysisT::name() << ">";
  }
  bool isTransform() const override { return false; }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                  PassContext &Ctx) override {
    auto R = AM.getResult<AnalysisT>(Obj);
    if (!R)
      return R.takeError();
    AnalysisT::print(*R, Obj, *Ctx.Out, Ctx.JSON);
    return PreservedAnalyses::all();
  }

private:
  std::string Name = ("print<" + AnalysisT::name() + ">").str();
};
} // namespace

PassBuilder::PassBuilder() {
#define HOTSWAP_TRANSFORM(NAME, CLASS, DESCRIPTION)                            \
  cantFail(registerPass(NAME, DESCRIPTION, &CLASS::create));                   \
  Entries.back().K = Entry::Transform;
#define HOTSWAP_CHECK(NAME, CLASS, DESCRIPTION)                                \
  cantFail(registerPass(NAME, DESCRIPTION, &CLASS::create));                   \
  Entries.back().K = Entry::Check;
#define HOTSWAP_ANALYSIS(NAME, CLASS, DESCRIPTION)                             \
  Entries.push_back({NAME, DESCRIPTION, Entry::Analysis,                       \
                     [](StringRef Params) -> Expected<std::unique_ptr<Pass>> { \
                       if (!Params.empty())                                    \
                         return createStringError(                             \
                             "print<" NAME "> takes no parameters");           \
                       return std::make_unique<PrintAnalysisPass<CLASS>>();    \
                     },                                                        \
                     ""});                                                     \
  AnalysisByName[NAME] = Entries.size() - 1;
#define HOTSWAP_ALIAS(NAME, PIPELINE, DESCRIPTION)                             \
  cantFail(registerAlias(NAME, PIPELINE, DESCRIPTION));
#include "hotswap/Pass/PassRegistry.def"
}

Error PassBuilder::registerPass(StringRef Name, StringRef Description,
                                PassFactory Factory) {
  if (Name.empty() || Name.find_first_of(",<> ") != StringRef::npos)
    return createStringError("invalid pass name '" + Name + "'");
  if (ByName.count(Name))
    return createStringError("pass name '" + Name + "' is already registered");
  Entries.push_back(
      {Name.str(), Description.str(), Entry::Custom, std::move(Factory), ""});
  ByName[Name] = Entries.size() - 1;
  return Error::success();
}

Error PassBuilder::registerAlias(StringRef Name, StringRef Pipeline,
                                 StringRef Description) {
  if (ByName.count(Name))
    return createStringError("pass name '" + Name + "' is already registered");
  Entries.push_back(
      {Name.str(), Description.str(), Entry::Alias, nullptr, Pipeline.str()});
  ByName[Name] = Entries.size() - 1;
  return Error::success();
}

Error PassBuilder::parsePassPipeline(PassManager &PM, StringRef Text) const {
  return parseInto(PM, Text, Text, 0, 0);
}

Error PassBuilder::parseInto(PassManager &PM, StringRef Text, StringRef Whole,
                             size_t Base, unsigned Depth) const {
  if (Depth > 8)
    return createStringError("pipeline alias nesting is too deep");
  auto fail = [&](size_t Col, const Twine &Msg) {
    return createStringError("invalid pipeline '" + Whole + "': " + Msg +
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
          return fail(End, "unbalanced '>'");
      } else if (C == ',' && Angle == 0)
        break;
    }
    if (Angle != 0)
      return fail(Start, "missing '>'");
    StringRef Elem = Text.slice(Start, End);
    if (Elem.trim().empty())
      return fail(Start, "empty pass name");
    StringRef Name = Elem, Params;
    size_t LT = Elem.find('<');
    if (LT != StringRef::npos) {
      if (!Elem.ends_with(">"))
        return fail(Start + Elem.rfind('>') + 1,
                    "unexpected text after '>' in '" + Elem + "'");
      Name = Elem.take_front(LT);
      Params = Elem.drop_front(LT + 1).drop_back();
    }
    if (Name.trim() != Name)
      return fail(Start, "unexpected space in pass name '" + Name + "'");
    if (Name == "print") {
      auto It = AnalysisByName.find(Params);
      if (It == AnalysisByName.end())
        return fail(Start, "unknown analysis '" + Params +
                               "' in 'print<...>' (known: kernels)");
      Expected<std::unique_ptr<Pass>> P = Entries[It->second].Factory("");
      if (!P)
        return P.takeError();
      PM.addPass(std::move(*P));
    } else {
      auto It = ByName.find(Name);
      if (It == ByName.end())
        return fail(Start, "unknown pass name '" + Name + "'");
      const Entry &E = Entries[It->second];
      if (E.K == Entry::Alias) {
        if (LT != StringRef::npos)
          return fail(Start, "pipeline alias '" + Name +
                                 "' takes no parameters");
        if (Error Err = parseInto(PM, E.Expansion, E.Expansion, 0, Depth + 1))
          return Err;
      } else {
        Expected<std::unique_ptr<Pass>> P = E.Factory(Params);
        if (!P)
          return fail(Start, "pass '" + Name + "': " + toString(P.takeError()));
        PM.addPass(std::move(*P));
      }
    }
    if (End >= Text.size())
      break;
    Pos = End + 1;
    if (Pos >= Text.size())
      return fail(Pos, "empty pass name");
  }
  return Error::success();
}

void PassBuilder::printPassNames(raw_ostream &OS) const {
  auto section = [&](StringRef Title, Entry::Kind K) {
    OS << Title << ":\n";
    for (const Entry &E : Entries) {
      if (E.K != K)
        continue;
      std::string N = K == Entry::Analysis ? "print<" + E.Name + ">" : E.Name;
      OS << "  " << left_justify(N, 20) << " " << E.Description;
      if (K == Entry::Alias)
        OS << " (= " << E.Expansion << ")";
      OS << "\n";
    }
  };
  section("Transform passes", Entry::Transform);
  section("Pipeline aliases", Entry::Alias);
  section("Check passes", Entry::Check);
  section("Analyses (print<name>)", Entry::Analysis);
  bool AnyCustom = false;
  for (const Entry &E : Entries)
    AnyCustom |= E.K == Entry::Custom;
  if (AnyCustom)
    section("Registered by the embedding program", Entry::Custom);
}
