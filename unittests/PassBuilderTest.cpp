//===- unittests/PassBuilderTest.cpp - Textual pipelines ------------------===//
//
// PassBuilder::parsePassPipeline and parsePipeline (plans): accepted
// pipelines and their canonical form, every rejection with its exact
// message, aliases, and passes registered by an embedding program.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/PassBuilder.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <set>

using namespace llvm;
using namespace hotswap;

namespace {

/// Parses \p Text; returns the canonical form or "error: <message>".
std::string parse(const PassBuilder &PB, StringRef Text) {
  PassManager PM;
  if (Error E = PB.parsePassPipeline(PM, Text))
    return "error: " + toString(std::move(E));
  std::string S;
  raw_string_ostream OS(S);
  PM.printPipeline(OS);
  return S;
}

std::vector<std::string> names(const PassManager &PM) {
  std::vector<std::string> N;
  for (const auto &P : PM.passes())
    N.push_back(P->name().str());
  return N;
}

TEST(PassBuilderTest, AcceptsPipelines) {
  PassBuilder PB;
  EXPECT_EQ(parse(PB, ""), "");
  EXPECT_EQ(parse(PB, "stub-syms"), "stub-syms");
  EXPECT_EQ(parse(PB, "verify,verify"), "verify,verify");
  EXPECT_EQ(parse(PB, "print<kernels>,realign-shdrs"),
            "print<kernels>,realign-shdrs");
  EXPECT_EQ(parse(PB, "synth-trampolines<>"), "synth-trampolines");
  EXPECT_EQ(parse(PB, "synth-trampolines<form=long;only=^k[0-9]$>"),
            "synth-trampolines<only=^k[0-9]$;form=long>");
}

TEST(PassBuilderTest, AliasExpands) {
  PassBuilder PB;
  PassManager PM;
  ASSERT_FALSE(errorToBool(PB.parsePassPipeline(PM, "trampoline,stub-syms")));
  EXPECT_EQ(names(PM),
            (std::vector<std::string>{"synth-trampolines", "patch-descriptors",
                                      "stub-syms"}));
  EXPECT_EQ(parse(PB, "stub-syms,trampoline,trampoline"),
            "stub-syms,synth-trampolines,patch-descriptors,synth-trampolines,"
            "patch-descriptors");
}

// Parsed once, a plan makes any number of pass managers, each with passes
// of its own (passes keep state per run), aliases expanded and parameters
// kept.
TEST(PassBuilderTest, PlanMakesFreshPassManagers) {
  PassBuilder PB;
  Expected<PipelinePlan> Plan =
      PB.parsePipeline("trampoline,synth-trampolines<form=long>,verify");
  ASSERT_TRUE(bool(Plan)) << toString(Plan.takeError());
  EXPECT_EQ(Plan->size(), 4u);
  Expected<PassManager> A = Plan->instantiate();
  Expected<PassManager> B = Plan->instantiate();
  ASSERT_TRUE(A && B);
  std::string SA, SB;
  raw_string_ostream OA(SA), OB(SB);
  A->printPipeline(OA);
  B->printPipeline(OB);
  EXPECT_EQ(SA, "synth-trampolines,patch-descriptors,"
                "synth-trampolines<form=long>,verify");
  EXPECT_EQ(SA, SB);
  for (size_t I = 0; I < A->passes().size(); ++I)
    EXPECT_NE(A->passes()[I].get(), B->passes()[I].get());
  // A text that does not parse makes no plan, with the parser's message.
  Expected<PipelinePlan> Bad = PB.parsePipeline("trampoline,bogus");
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(toString(Bad.takeError()),
            "invalid pipeline 'trampoline,bogus': unknown pass name 'bogus' "
            "(at column 12)");
}

struct BadPipeline {
  const char *Text;
  const char *Message;
};

TEST(PassBuilderTest, RejectsWithExactMessages) {
  const BadPipeline Cases[] = {
      {"bogus",
       "invalid pipeline 'bogus': unknown pass name 'bogus' (at column 1)"},
      {"trampoline,bogus", "invalid pipeline 'trampoline,bogus': unknown pass "
                           "name 'bogus' (at column 12)"},
      {"trampoline,,verify", "invalid pipeline 'trampoline,,verify': empty "
                             "pass name (at column 12)"},
      {"verify,", "invalid pipeline 'verify,': empty pass name (at column 8)"},
      {",verify", "invalid pipeline ',verify': empty pass name (at column 1)"},
      {"verify,synth-trampolines<form=long",
       "invalid pipeline 'verify,synth-trampolines<form=long': missing '>' "
       "(at column 8)"},
      {"verify>", "invalid pipeline 'verify>': unbalanced '>' (at column 7)"},
      {"print<kernels>>", "invalid pipeline 'print<kernels>>': unbalanced "
                          "'>' (at column 15)"},
      {"print<kernels>x", "invalid pipeline 'print<kernels>x': unexpected "
                          "text after '>' in 'print<kernels>x' (at column "
                          "15)"},
      {" verify", "invalid pipeline ' verify': unexpected space in pass name "
                  "' verify' (at column 1)"},
      {"verify,print<callgraph>",
       "invalid pipeline 'verify,print<callgraph>': unknown analysis "
       "'callgraph' in 'print<...>' (known: kernels, provenance, cfg, "
       "liveness, clones, sites, counters) (at column 8)"},
      {"print<cfg;x>", "invalid pipeline 'print<cfg;x>': print<cfg>: unknown "
                       "parameter 'x' (known: only=REGEX, insns) (at column "
                       "1)"},
      {"patch-insns<where=before;insert=r.s>",
       "invalid pipeline 'patch-insns<where=before;insert=r.s>': pass "
       "'patch-insns': exactly one of match=REGEX and at=OFFSET selects the "
       "sites (at column 1)"},
      {"patch-insns<match=x;where=inside;insert=r.s>",
       "invalid pipeline 'patch-insns<match=x;where=inside;insert=r.s>': pass "
       "'patch-insns': where=inside is not one of before, after, replace (at "
       "column 1)"},
      {"patch-insns<match=x;where=after>",
       "invalid pipeline 'patch-insns<match=x;where=after>': pass "
       "'patch-insns': insert=FILE is required: the assembly to place at each "
       "site (at column 1)"},
      {"verify-code<insns>",
       "invalid pipeline 'verify-code<insns>': pass 'verify-code': unknown "
       "parameter 'insns' (known: only=REGEX, hazards) (at column 1)"},
      {"print<liveness;only=a;only=(>",
       "invalid pipeline 'print<liveness;only=a;only=(>': invalid regular "
       "expression '(' in only=: parentheses not balanced (at column 1)"},
      {"trampoline<>", "invalid pipeline 'trampoline<>': pipeline alias "
                       "'trampoline' takes no parameters (at column 1)"},
      {"verify,trampoline<form=long>",
       "invalid pipeline 'verify,trampoline<form=long>': pipeline alias "
       "'trampoline' takes no parameters (at column 8)"},
      {"synth-trampolines<form=short>",
       "invalid pipeline 'synth-trampolines<form=short>': pass "
       "'synth-trampolines': invalid form 'short' (expected auto or long) (at "
       "column 1)"},
      {"synth-trampolines<prologue=gfx9>",
       "invalid pipeline 'synth-trampolines<prologue=gfx9>': pass "
       "'synth-trampolines': invalid prologue 'gfx9' (expected none, "
       "gfx1250-vmem or asm:FILE) (at column 1)"},
      {"synth-trampolines<only=(>",
       "invalid pipeline 'synth-trampolines<only=(>': pass "
       "'synth-trampolines': invalid regular expression '(' in only=: "
       "parentheses not balanced (at column 1)"},
      {"synth-trampolines<skip-unwrappable=yes>",
       "invalid pipeline 'synth-trampolines<skip-unwrappable=yes>': pass "
       "'synth-trampolines': unknown parameter 'skip-unwrappable=yes' (at "
       "column 1)"},
      {"stub-syms<x>", "invalid pipeline 'stub-syms<x>': pass 'stub-syms': "
                       "unknown parameter 'x' (at column 1)"},
      {"verify,realign-shdrs<x>",
       "invalid pipeline 'verify,realign-shdrs<x>': pass 'realign-shdrs': "
       "unknown parameter 'x' (at column 8)"},
      {"patch-descriptors<x>",
       "invalid pipeline 'patch-descriptors<x>': pass 'patch-descriptors': "
       "unknown parameter 'x' (at column 1)"},
  };
  PassBuilder PB;
  for (const BadPipeline &C : Cases) {
    SCOPED_TRACE(C.Text);
    PassManager PM;
    Error E = PB.parsePassPipeline(PM, C.Text);
    ASSERT_TRUE(bool(E));
    EXPECT_EQ(toString(std::move(E)), C.Message);
  }
}

/// Every name --print-passes lists (the registry), with its canonical form.
std::vector<std::string> listedPasses(const PassBuilder &PB) {
  std::string Text;
  raw_string_ostream OS(Text);
  PB.printPassNames(OS);
  std::vector<std::string> Out;
  SmallVector<StringRef, 16> Lines;
  StringRef(Text).split(Lines, '\n', -1, false);
  for (StringRef L : Lines)
    if (L.starts_with("  "))
      Out.push_back(L.trim().split(' ').first.str());
  return Out;
}

TEST(PassBuilderTest, PrintPipelineRoundTripsEveryRegisteredPass) {
  PassBuilder PB;
  std::vector<std::string> Listed = listedPasses(PB);
  EXPECT_EQ(Listed, (std::vector<std::string>{
                        "synth-trampolines", "patch-descriptors", "stub-syms",
                        "clone-kernels", "patch-insns", "instrument",
                        "swap-kernels", "realign-shdrs", "restore",
                        "trampoline", "verify", "verify-code", "print<kernels>",
                        "print<provenance>", "print<cfg>", "print<liveness>",
                        "print<clones>", "print<sites>", "print<counters>"}));
  std::vector<std::string> Texts;
  // swap-kernels, patch-insns and print<sites> have required parameters
  // (their files are not read to parse).
  for (const std::string &L : Listed)
    Texts.push_back(
        L == "swap-kernels"   ? "swap-kernels<with=/tmp/fixed.co>"
        : L == "patch-insns"  ? "patch-insns<match=^ds_read2;where=replace;"
                                "insert=/tmp/r.s>"
        : L == "print<sites>" ? "print<sites;at=0x10;where=before;insert=r.s>"
                              : L);
  Texts.push_back("patch-insns<at=0x1c;where=after;insert=h.s;only=^k$>");
  Texts.push_back("swap-kernels<with=fixed.co;only=^v;own-variables>");
  // The code printers' and verify-code's parameters.
  for (const char *P : {"print<cfg;only=^k$;insns>", "print<liveness;insns>",
                        "verify-code<only=k.*>"})
    Texts.push_back(P);
  // Every parameter of synth-trampolines, alone and together.
  for (const char *P :
       {"synth-trampolines<prologue=gfx1250-vmem>",
        "synth-trampolines<prologue=asm:/tmp/p.s>",
        "synth-trampolines<only=^(vadd|kern2)$>",
        "synth-trampolines<form=long>", "synth-trampolines<skip-unwrappable>",
        "synth-trampolines<prologue=gfx1250-vmem;only=k.*;form=long;"
        "skip-unwrappable>"})
    Texts.push_back(P);
  for (const std::string &T : Texts) {
    SCOPED_TRACE(T);
    std::string Once = parse(PB, T);
    ASSERT_EQ(Once.rfind("error: ", 0), std::string::npos) << Once;
    if (T != "trampoline")
      EXPECT_EQ(Once, T); // already canonical
    EXPECT_EQ(parse(PB, Once), Once);
  }
  EXPECT_EQ(parse(PB, "trampoline"), "synth-trampolines,patch-descriptors");
}

TEST(PassBuilderTest, DefaultParametersAreDropped) {
  PassBuilder PB;
  EXPECT_EQ(parse(PB, "synth-trampolines<prologue=none;form=auto>"),
            "synth-trampolines");
}

class NamedPass : public Pass {
public:
  NamedPass(std::string N, std::string Params)
      : N(std::move(N)), Params(std::move(Params)) {}
  StringRef name() const override { return N; }
  void printPipeline(raw_ostream &OS) const override {
    OS << N;
    if (!Params.empty())
      OS << "<" << Params << ">";
  }
  Expected<PreservedAnalyses> run(Object &, AnalysisManager &,
                                  PassContext &) override {
    return PreservedAnalyses::all();
  }
  std::string N, Params;
};

PassFactory factoryFor(std::string Name) {
  return [Name](StringRef Params) -> Expected<std::unique_ptr<Pass>> {
    if (Params == "bad")
      return createStringError("'bad' is not a parameter");
    return std::make_unique<NamedPass>(Name, Params.str());
  };
}

TEST(PassBuilderTest, RegisterCustomPass) {
  PassBuilder PB;
  ASSERT_FALSE(errorToBool(
      PB.registerPass("my-pass", "does my thing", factoryFor("my-pass"))));
  EXPECT_EQ(parse(PB, "trampoline,my-pass<a=1>,my-pass"),
            "synth-trampolines,patch-descriptors,my-pass<a=1>,my-pass");
  EXPECT_EQ(parse(PB, "verify,my-pass<bad>"),
            "error: invalid pipeline 'verify,my-pass<bad>': pass 'my-pass': "
            "'bad' is not a parameter (at column 8)");
  // Listed separately from the built-in passes.
  std::string Text;
  raw_string_ostream OS(Text);
  PB.printPassNames(OS);
  EXPECT_NE(Text.find("Registered by the embedding program:\n"
                      "  my-pass              does my thing\n"),
            std::string::npos)
      << Text;
  // A builder without it does not know it.
  PassBuilder Plain;
  EXPECT_EQ(parse(Plain, "my-pass"), "error: invalid pipeline 'my-pass': "
                                     "unknown pass name 'my-pass' (at column "
                                     "1)");
  std::string PlainText;
  raw_string_ostream POS(PlainText);
  Plain.printPassNames(POS);
  EXPECT_EQ(PlainText.find("Registered by"), std::string::npos);
}

TEST(PassBuilderTest, RegisterRejectsTakenAndInvalidNames) {
  PassBuilder PB;
  for (const char *Taken : {"stub-syms", "verify", "trampoline"}) {
    Error E = PB.registerPass(Taken, "", factoryFor(Taken));
    ASSERT_TRUE(bool(E));
    EXPECT_EQ(toString(std::move(E)), "pass name '" + std::string(Taken) +
                                          "' is already registered (built in)");
  }
  ASSERT_FALSE(errorToBool(PB.registerPass("mine", "", factoryFor("mine"))));
  Error Dup = PB.registerPass("mine", "", factoryFor("mine"));
  // The message says who took the name (a plugin: PassPluginTest).
  EXPECT_EQ(toString(std::move(Dup)),
            "pass name 'mine' is already registered by the embedding program");
  Error DupAlias = PB.registerAlias("mine", "verify", "");
  EXPECT_EQ(toString(std::move(DupAlias)),
            "pass name 'mine' is already registered by the embedding program");
  for (const char *Bad : {"", "a,b", "a<b>", "a b"}) {
    Error E = PB.registerPass(Bad, "", factoryFor("x"));
    EXPECT_EQ(toString(std::move(E)),
              "invalid pass name '" + std::string(Bad) + "'");
  }
  // The original registration still works.
  EXPECT_EQ(parse(PB, "mine"), "mine");
}

TEST(PassBuilderTest, RegisterAlias) {
  PassBuilder PB;
  ASSERT_FALSE(errorToBool(
      PB.registerAlias("all", "trampoline,stub-syms,verify", "everything")));
  EXPECT_EQ(parse(PB, "all"),
            "synth-trampolines,patch-descriptors,stub-syms,verify");
  EXPECT_EQ(parse(PB, "all<x>"), "error: invalid pipeline 'all<x>': pipeline "
                                 "alias 'all' takes no parameters (at column "
                                 "1)");
}

} // namespace
