//===- unittests/PassManagerTest.cpp - Running pipelines ------------------===//
//
// PassManager and AnalysisManager semantics with passes and an analysis made
// for the test: caching and invalidation, PreservedAnalyses, skipping when
// the invariant holds or a precondition is unmet (error in strict mode),
// instrumentation order, statistics, and runPipeline on an in-memory object.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Pass/PassManager.h"
#include "hotswap/Hotswap.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Pass/AnalysisManager.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

using namespace llvm;
using namespace hotswap;

namespace {

/// A linked gfx900 code object without kernels: one loaded .text, a local
/// and a global symbol.
const char *MinimalYAML = R"(--- !ELF
FileHeader:
  Class:      ELFCLASS64
  Data:       ELFDATA2LSB
  OSABI:      ELFOSABI_AMDGPU_HSA
  ABIVersion: 0x4
  Type:       ET_DYN
  Machine:    EM_AMDGPU
  Flags:      [ EF_AMDGPU_MACH_AMDGCN_GFX900 ]
ProgramHeaders:
  - Type:     PT_LOAD
    Flags:    [ PF_X, PF_R ]
    FirstSec: .text
    LastSec:  .text
    VAddr:    0x1000
    Align:    0x1000
    Offset:   0x1000
Sections:
  - Name:         .text
    Type:         SHT_PROGBITS
    Flags:        [ SHF_ALLOC, SHF_EXECINSTR ]
    Address:      0x1000
    AddressAlign: 0x100
    Offset:       0x1000
    Content:      "000081BF"
Symbols:
  - Name:    local
    Section: .text
    Value:   0x1000
  - Name:    f
    Type:    STT_FUNC
    Section: .text
    Binding: STB_GLOBAL
    Value:   0x1000
    Size:    4
)";

std::vector<char> makeObject() {
  std::vector<uint8_t> B = unittest::yamlToBytes(MinimalYAML);
  return std::vector<char>(B.begin(), B.end());
}

/// Counts how often it is computed.
struct CountingAnalysis {
  static AnalysisKey Key;
  static StringRef name() { return "counting"; }
  struct Result {
    unsigned Generation;
    /// Nothing in it follows from the object: nothing to compare.
    std::optional<std::string> firstDifference(const Result &) const {
      return std::nullopt;
    }
  };
  static unsigned Runs;
  static Expected<Result> run(Object &, AnalysisManager &) {
    return Result{++Runs};
  }
};
AnalysisKey CountingAnalysis::Key;
unsigned CountingAnalysis::Runs = 0;

struct OtherAnalysis {
  static AnalysisKey Key;
  static StringRef name() { return "other"; }
  struct Result {
    int Value;
    std::optional<std::string> firstDifference(const Result &F) const {
      if (Value != F.Value)
        return std::string("value");
      return std::nullopt;
    }
  };
  static Expected<Result> run(Object &, AnalysisManager &) {
    return Result{42};
  }
};
AnalysisKey OtherAnalysis::Key;

/// The first byte of .text, which a pass may change.
struct FirstByteAnalysis {
  static AnalysisKey Key;
  static StringRef name() { return "first-byte"; }
  struct Result {
    uint8_t Byte;
    std::optional<std::string> firstDifference(const Result &F) const {
      if (Byte != F.Byte)
        return "byte (" + std::to_string(Byte) + " kept, " +
               std::to_string(F.Byte) + " fresh)";
      return std::nullopt;
    }
  };
  static Expected<Result> run(Object &Obj, AnalysisManager &) {
    Section *Text = Obj.findSection(".text");
    if (!Text || Text->contents().empty())
      return createStringError("no .text");
    return Result{Text->contents()[0]};
  }
};
AnalysisKey FirstByteAnalysis::Key;

/// A configurable test pass.
class TestPass : public Pass {
public:
  explicit TestPass(std::string N) : N(std::move(N)) {}
  StringRef name() const override { return N; }
  StringRef invariantDescription() const override { return Invariant; }
  Expected<bool> isSatisfied(Object &, AnalysisManager &,
                             PassContext &) override {
    return Satisfied;
  }
  Expected<std::optional<std::string>>
  unmetPrecondition(Object &, AnalysisManager &, PassContext &) override {
    return Unmet;
  }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                  PassContext &Ctx) override {
    ++Runs;
    if (UsesCounting) {
      auto R = AM.getResult<CountingAnalysis>(Obj);
      if (!R)
        return R.takeError();
      Seen.push_back(R->Generation);
    }
    if (Fail)
      return createStringError("pass failed");
    Ctx.Stats.add(N, "runs", "times run");
    return Result;
  }
  bool isTransform() const override { return Transform; }
  bool needsSomeCodeObject() const override { return NeedsSome; }

  std::string N;
  std::string Invariant;
  bool Satisfied = false;
  std::optional<std::string> Unmet;
  bool UsesCounting = false;
  bool Fail = false;
  bool Transform = true;
  bool NeedsSome = false;
  PreservedAnalyses Result = PreservedAnalyses::all();
  unsigned Runs = 0;
  std::vector<unsigned> Seen;
};

struct PassManagerTest : ::testing::Test {
  void SetUp() override {
    Bytes = makeObject();
    auto O = readObject(
        MemoryBufferRef(StringRef(Bytes.data(), Bytes.size()), "test.co"));
    ASSERT_TRUE(bool(O)) << toString(O.takeError());
    Obj = std::move(*O);
    CountingAnalysis::Runs = 0;
  }
  TestPass &add(std::string Name) {
    auto P = std::make_unique<TestPass>(std::move(Name));
    TestPass &Ref = *P;
    PM.addPass(std::move(P));
    return Ref;
  }
  /// Records instrumentation events as text.
  PassInstrumentation record() {
    PassInstrumentation PI;
    PI.BeforePass.push_back([this](const Pass &P, const Object &) {
      Events.push_back("before " + P.name().str());
    });
    PI.AfterPass.push_back([this](const Pass &P, Object &, bool Changed) {
      Events.push_back("after " + P.name().str() +
                       (Changed ? " changed" : " unchanged"));
      return Error::success();
    });
    PI.SkippedPass.push_back([this](const Pass &P, StringRef Why) {
      Events.push_back("skipped " + P.name().str() + ": " + Why.str());
    });
    return PI;
  }
  std::vector<char> Bytes;
  std::unique_ptr<Object> Obj;
  PassManager PM;
  AnalysisManager AM;
  PassContext Ctx;
  std::vector<std::string> Events;
};

TEST(PreservedAnalysesTest, Semantics) {
  PreservedAnalyses All = PreservedAnalyses::all();
  EXPECT_FALSE(All.modified());
  EXPECT_TRUE(All.areAllPreserved());
  EXPECT_TRUE(All.isPreserved(&CountingAnalysis::Key));

  PreservedAnalyses None = PreservedAnalyses::none();
  EXPECT_TRUE(None.modified());
  EXPECT_FALSE(None.areAllPreserved());
  EXPECT_FALSE(None.isPreserved(&CountingAnalysis::Key));

  PreservedAnalyses CPA = PreservedAnalyses::changedPreservingAll();
  EXPECT_TRUE(CPA.modified());
  EXPECT_TRUE(CPA.areAllPreserved());
  EXPECT_TRUE(CPA.isPreserved(&OtherAnalysis::Key));

  PreservedAnalyses Some = PreservedAnalyses::none();
  Some.preserve<CountingAnalysis>();
  EXPECT_TRUE(Some.modified());
  EXPECT_FALSE(Some.areAllPreserved());
  EXPECT_TRUE(Some.isPreserved(&CountingAnalysis::Key));
  EXPECT_FALSE(Some.isPreserved(&OtherAnalysis::Key));
}

TEST_F(PassManagerTest, AnalysisManagerCachesAndInvalidates) {
  std::vector<std::string> Computed;
  AM.BeforeCompute = [&](StringRef N) { Computed.push_back(N.str()); };
  PreservedAnalyses KeepCounting = PreservedAnalyses::none();
  KeepCounting.preserve<CountingAnalysis>();

  TestPass &A = add("a");
  A.UsesCounting = true;
  A.Result = KeepCounting; // changed, but preserved the analysis
  TestPass &B = add("b");
  B.UsesCounting = true;
  B.Result = PreservedAnalyses::changedPreservingAll();
  TestPass &C = add("c");
  C.UsesCounting = true;
  C.Result = PreservedAnalyses::none(); // invalidates it
  TestPass &D = add("d");
  D.UsesCounting = true;
  D.Result = PreservedAnalyses::all();

  ASSERT_FALSE(errorToBool(PM.run(*Obj, AM, Ctx)));
  EXPECT_EQ(A.Seen, std::vector<unsigned>{1});
  EXPECT_EQ(B.Seen, std::vector<unsigned>{1});
  EXPECT_EQ(C.Seen, std::vector<unsigned>{1});
  EXPECT_EQ(D.Seen, std::vector<unsigned>{2});
  EXPECT_EQ(CountingAnalysis::Runs, 2u);
  EXPECT_EQ(Computed, (std::vector<std::string>{"counting", "counting"}));
  // D preserved everything: still cached.
  EXPECT_TRUE(AM.isCached(&CountingAnalysis::Key));
  ASSERT_NE(AM.getCachedResult<CountingAnalysis>(), nullptr);
  EXPECT_EQ(AM.getCachedResult<CountingAnalysis>()->Generation, 2u);
}

TEST_F(PassManagerTest, InvalidateDropsOnlyWhatIsNotPreserved) {
  ASSERT_TRUE(bool(AM.getResult<CountingAnalysis>(*Obj)));
  ASSERT_TRUE(bool(AM.getResult<OtherAnalysis>(*Obj)));
  PreservedAnalyses KeepOther = PreservedAnalyses::none();
  KeepOther.preserve<OtherAnalysis>();
  AM.invalidate(KeepOther);
  EXPECT_FALSE(AM.isCached(&CountingAnalysis::Key));
  EXPECT_TRUE(AM.isCached(&OtherAnalysis::Key));
  EXPECT_EQ(AM.getCachedResult<CountingAnalysis>(), nullptr);
  AM.invalidate(PreservedAnalyses::changedPreservingAll());
  EXPECT_TRUE(AM.isCached(&OtherAnalysis::Key));
  AM.invalidate(PreservedAnalyses::none());
  EXPECT_FALSE(AM.isCached(&OtherAnalysis::Key));
  // Recomputed on the next request.
  auto R = AM.getResult<CountingAnalysis>(*Obj);
  ASSERT_TRUE(bool(R));
  EXPECT_EQ(R->Generation, 2u);
}

// -verify-analysis-preservation's check covers every cached analysis, by
// each result's own firstDifference, and leaves the cache as it was.
TEST_F(PassManagerTest, StaleResultsAreFoundForEveryAnalysis) {
  ASSERT_TRUE(bool(AM.getResult<OtherAnalysis>(*Obj)));
  ASSERT_TRUE(bool(AM.getResult<FirstByteAnalysis>(*Obj)));
  auto Fresh = AM.firstStaleResult(*Obj);
  ASSERT_TRUE(bool(Fresh)) << toString(Fresh.takeError());
  EXPECT_FALSE(Fresh->has_value());

  // A pass changes the byte but keeps the result.
  Section *Text = Obj->findSection(".text");
  ASSERT_NE(Text, nullptr);
  const uint8_t New[1] = {0x7f};
  ASSERT_FALSE(bool(Text->overwrite(0, New)));
  auto Stale = AM.firstStaleResult(*Obj);
  ASSERT_TRUE(bool(Stale)) << toString(Stale.takeError());
  ASSERT_TRUE(Stale->has_value());
  EXPECT_EQ((*Stale)->Analysis, "first-byte");
  EXPECT_EQ((*Stale)->Field, "byte (0 kept, 127 fresh)");
  EXPECT_EQ(AM.getCachedResult<FirstByteAnalysis>()->Byte, 0);

  // A result edited after it was computed is caught the same way.
  AM.invalidate(PreservedAnalyses::none());
  ASSERT_TRUE(bool(AM.getResult<OtherAnalysis>(*Obj)));
  AM.getCachedResult<OtherAnalysis>()->Value = 7;
  auto Other = AM.firstStaleResult(*Obj);
  ASSERT_TRUE(bool(Other)) << toString(Other.takeError());
  ASSERT_TRUE(Other->has_value());
  EXPECT_EQ((*Other)->Analysis, "other");
  EXPECT_EQ((*Other)->Field, "value");
}

TEST_F(PassManagerTest, SatisfiedPassIsNeverRun) {
  TestPass &P = add("done");
  P.Satisfied = true;
  P.Invariant = "it is done";
  P.Unmet = "would be unmet"; // the invariant is checked first
  PassInstrumentation PI = record();
  Ctx.Strict = true;
  ASSERT_FALSE(errorToBool(PM.run(*Obj, AM, Ctx, &PI)));
  EXPECT_EQ(P.Runs, 0u);
  EXPECT_EQ(Events, std::vector<std::string>{
                        "skipped done: invariant holds: it is done"});
}

TEST_F(PassManagerTest, SatisfiedWithoutDescription) {
  TestPass &P = add("done");
  P.Satisfied = true;
  PassInstrumentation PI = record();
  ASSERT_FALSE(errorToBool(PM.run(*Obj, AM, Ctx, &PI)));
  EXPECT_EQ(P.Runs, 0u);
  EXPECT_EQ(Events, std::vector<std::string>{"skipped done: invariant holds"});
}

TEST_F(PassManagerTest, UnmetPreconditionSkipsOrFailsInStrictMode) {
  TestPass &P = add("needy");
  P.Unmet = "nothing to work on";
  TestPass &After = add("after");
  PassInstrumentation PI = record();
  ASSERT_FALSE(errorToBool(PM.run(*Obj, AM, Ctx, &PI)));
  EXPECT_EQ(P.Runs, 0u);
  EXPECT_EQ(After.Runs, 1u);
  EXPECT_EQ(Events, (std::vector<std::string>{
                        "skipped needy: precondition not met: nothing to "
                        "work on",
                        "before after", "after after unchanged"}));

  Events.clear();
  Ctx.Strict = true;
  Error E = PM.run(*Obj, AM, Ctx, &PI);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(toString(std::move(E)),
            "pass 'needy' cannot run: nothing to work on");
  EXPECT_EQ(P.Runs, 0u);
  EXPECT_EQ(After.Runs, 1u); // the pipeline stopped
  EXPECT_TRUE(Events.empty());
}

// A pass that fits only some code objects is skipped where it does not,
// even in strict mode, and the skip is recorded for whoever runs the input.
TEST_F(PassManagerTest, PassesThatNeedSomeCodeObjectRecordTheirSkips) {
  TestPass &Other = add("other");
  Other.Unmet = "not for this one";
  TestPass &P = add("picky");
  P.Unmet = "wrong target";
  P.NeedsSome = true;
  TestPass &Fits = add("fits");
  Fits.NeedsSome = true;
  Ctx.Strict = false;
  ASSERT_FALSE(errorToBool(PM.run(*Obj, AM, Ctx)));
  ASSERT_EQ(Ctx.Unfit.size(), 1u);
  EXPECT_EQ(Ctx.Unfit[0].Position, 1u);
  EXPECT_EQ(Ctx.Unfit[0].Pipeline, "picky");
  EXPECT_EQ(Ctx.Unfit[0].Why, "wrong target");
  EXPECT_EQ(Fits.Runs, 1u);

  Other.Unmet.reset();
  Ctx.Unfit.clear();
  Ctx.Strict = true;
  ASSERT_FALSE(errorToBool(PM.run(*Obj, AM, Ctx)));
  EXPECT_EQ(Ctx.Unfit.size(), 1u);
  EXPECT_EQ(P.Runs, 0u);
  EXPECT_EQ(Fits.Runs, 2u);
}

TEST_F(PassManagerTest, NonTransformsAreNotCheckedForInvariants) {
  TestPass &P = add("printer");
  P.Transform = false;
  P.Satisfied = true;
  P.Unmet = "ignored";
  Ctx.Strict = true;
  ASSERT_FALSE(errorToBool(PM.run(*Obj, AM, Ctx)));
  EXPECT_EQ(P.Runs, 1u);
}

TEST_F(PassManagerTest, InstrumentationOrder) {
  add("one").Result = PreservedAnalyses::none();
  TestPass &Two = add("two");
  Two.Satisfied = true;
  Two.Invariant = "two holds";
  add("three").Unmet = "no three";
  add("four").Result = PreservedAnalyses::all();
  add("five").Result = PreservedAnalyses::changedPreservingAll();
  PassInstrumentation PI = record();
  ASSERT_FALSE(errorToBool(PM.run(*Obj, AM, Ctx, &PI)));
  EXPECT_EQ(Events,
            (std::vector<std::string>{
                "before one", "after one changed",
                "skipped two: invariant holds: two holds",
                "skipped three: precondition not met: no three", "before four",
                "after four unchanged", "before five", "after five changed"}));
}

TEST_F(PassManagerTest, ErrorsStopThePipeline) {
  add("one");
  add("bad").Fail = true;
  TestPass &Three = add("three");
  PassInstrumentation PI = record();
  Error E = PM.run(*Obj, AM, Ctx, &PI);
  EXPECT_EQ(toString(std::move(E)), "pass failed");
  EXPECT_EQ(Three.Runs, 0u);
  EXPECT_EQ(Events, (std::vector<std::string>{
                        "before one", "after one unchanged", "before bad"}));

  // An AfterPass callback error stops it too.
  PassManager PM2;
  auto P = std::make_unique<TestPass>("x");
  TestPass &X = *P;
  PM2.addPass(std::move(P));
  auto Q = std::make_unique<TestPass>("y");
  TestPass &Y = *Q;
  PM2.addPass(std::move(Q));
  PassInstrumentation Stop;
  Stop.AfterPass.push_back([](const Pass &P, Object &, bool) -> Error {
    return createStringError("stopped after " + P.name());
  });
  Error E2 = PM2.run(*Obj, AM, Ctx, &Stop);
  EXPECT_EQ(toString(std::move(E2)), "stopped after x");
  EXPECT_EQ(X.Runs, 1u);
  EXPECT_EQ(Y.Runs, 0u);
}

TEST(StatisticsTest, FirstUseOrderAndPrinting) {
  Statistics S;
  S.add("stub-syms", "symbols", "stub symbols added", 2);
  S.add("synth-trampolines", "stubs", "stubs added");
  S.add("stub-syms", "symbols", "stub symbols added", 3);
  S.add("synth-trampolines", "kernels", "kernels seen", 7);
  EXPECT_EQ(S.get("stub-syms", "symbols"), 5u);
  EXPECT_EQ(S.get("synth-trampolines", "stubs"), 1u);
  EXPECT_EQ(S.get("synth-trampolines", "nothing"), 0u);
  ASSERT_EQ(S.entries().size(), 3u);
  EXPECT_EQ(S.entries()[0].Name, "symbols");
  EXPECT_EQ(S.entries()[1].Name, "stubs");
  EXPECT_EQ(S.entries()[2].Name, "kernels");

  std::string Text;
  raw_string_ostream OS(Text);
  S.print(OS);
  std::string Rule = "===" + std::string(73, '-') + "===\n";
  EXPECT_EQ(Text, Rule +
                      "                          ... Statistics Collected "
                      "...\n" +
                      Rule + "\n" +
                      "       5 stub-syms         - stub symbols added\n"
                      "       1 synth-trampolines - stubs added\n"
                      "       7 synth-trampolines - kernels seen\n");

  std::string JSON;
  raw_string_ostream JOS(JSON);
  S.printJSON(JOS);
  EXPECT_EQ(JSON, "{\n"
                  "  \"stub-syms.symbols\": 5,\n"
                  "  \"synth-trampolines.kernels\": 7,\n"
                  "  \"synth-trampolines.stubs\": 1\n"
                  "}\n");
}

TEST_F(PassManagerTest, StatisticsFromPassesInRunOrder) {
  add("b");
  add("a");
  add("b");
  ASSERT_FALSE(errorToBool(PM.run(*Obj, AM, Ctx)));
  ASSERT_EQ(Ctx.Stats.entries().size(), 2u);
  EXPECT_EQ(Ctx.Stats.entries()[0].Pass, "b");
  EXPECT_EQ(Ctx.Stats.entries()[0].Value, 2u);
  EXPECT_EQ(Ctx.Stats.entries()[1].Pass, "a");
}

TEST(RunPipelineTest, EmptyPipelineIsByteIdentical) {
  std::vector<char> In = makeObject();
  MemoryBufferRef Ref(StringRef(In.data(), In.size()), "in.co");
  for (const char *Pipeline : {"", "verify", "print<kernels>", "realign-shdrs",
                               "trampoline", "trampoline,stub-syms"}) {
    SCOPED_TRACE(Pipeline);
    Expected<std::unique_ptr<MemoryBuffer>> Out = runPipeline(Ref, Pipeline);
    ASSERT_TRUE(bool(Out)) << toString(Out.takeError());
    EXPECT_EQ((*Out)->getBuffer(), Ref.getBuffer());
  }
}

TEST(RunPipelineTest, ReportsParseErrorsBeforeReading) {
  MemoryBufferRef Junk("not an ELF file", "junk");
  Expected<std::unique_ptr<MemoryBuffer>> Out = runPipeline(Junk, "bogus");
  ASSERT_FALSE(bool(Out));
  EXPECT_EQ(toString(Out.takeError()), "invalid pipeline 'bogus': unknown "
                                       "pass name 'bogus' (at column 1)");
}

/// A pass for one kind of code object only: its precondition says whether
/// the object is one.
class PickyPass : public Pass {
public:
  explicit PickyPass(bool Fits) : Fits(Fits) {}
  StringRef name() const override { return "picky"; }
  bool needsSomeCodeObject() const override { return true; }
  Expected<std::optional<std::string>>
  unmetPrecondition(Object &, AnalysisManager &, PassContext &) override {
    if (Fits)
      return std::nullopt;
    return std::optional<std::string>("not the object it is for");
  }
  Expected<PreservedAnalyses> run(Object &, AnalysisManager &,
                                  PassContext &) override {
    return PreservedAnalyses::all();
  }
  bool Fits;
};

// A bare code object that such a pass does not fit is an error naming the
// pass and why (a skip on a container's other code objects is not).
TEST(RunPipelineTest, PassThatFitsNoCodeObjectFailsTheInput) {
  std::vector<char> In = makeObject();
  MemoryBufferRef Ref(StringRef(In.data(), In.size()), "in.co");
  PassBuilder PB;
  for (bool Fits : {false, true})
    ASSERT_FALSE(errorToBool(
        PB.registerPass(Fits ? "picky-fits" : "picky", "",
                        [Fits](StringRef) -> Expected<std::unique_ptr<Pass>> {
                          return std::make_unique<PickyPass>(Fits);
                        })));
  PipelineOptions Opts;
  Opts.Builder = &PB;
  RunSummary Summary;
  Expected<std::unique_ptr<MemoryBuffer>> Out =
      runPipeline(Ref, "verify,picky", Opts, &Summary);
  ASSERT_FALSE(bool(Out));
  EXPECT_EQ(toString(Out.takeError()),
            "pass 'picky' cannot run: not the object it is for");
  EXPECT_EQ(Summary.Unfit.at(1).CodeObjects, 1u);
  Opts.Strict = true;
  Out = runPipeline(Ref, "picky", Opts);
  ASSERT_FALSE(bool(Out));
  EXPECT_EQ(toString(Out.takeError()),
            "pass 'picky' cannot run: not the object it is for");
  Out = runPipeline(Ref, "picky-fits", Opts);
  ASSERT_TRUE(bool(Out)) << toString(Out.takeError());
  EXPECT_EQ((*Out)->getBuffer(), Ref.getBuffer());
}

/// Drops the terminating NUL of .strtab (a non-loaded section may be
/// replaced whole): the object is now wrong and verify says so.
class CorruptPass : public Pass {
public:
  StringRef name() const override { return "corrupt"; }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &,
                                  PassContext &Ctx) override {
    Section &Str = Obj.symtab()->stringTable();
    std::vector<uint8_t> Bytes(Str.contents().begin(), Str.contents().end());
    Bytes.push_back('x');
    Str.setContents(std::move(Bytes));
    Ctx.Warn("corrupted");
    Ctx.Stats.add(name(), "runs", "corruptions");
    return PreservedAnalyses::none();
  }
};

TEST(RunPipelineTest, CustomPassesStatsWarningsAndVerifyEach) {
  std::vector<char> In = makeObject();
  MemoryBufferRef Ref(StringRef(In.data(), In.size()), "in.co");
  PassBuilder PB;
  ASSERT_FALSE(errorToBool(PB.registerPass(
      "corrupt", "", [](StringRef) -> Expected<std::unique_ptr<Pass>> {
        return std::make_unique<CorruptPass>();
      })));
  PipelineOptions Opts;
  Opts.Builder = &PB;
  std::vector<std::string> Warnings;
  Opts.Warn = [&](const Twine &M) { Warnings.push_back(M.str()); };
  Statistics Stats;
  Opts.StatsOut = &Stats;
  std::vector<std::string> Ran;
  PassInstrumentation PI;
  PI.BeforePass.push_back(
      [&](const Pass &P, const Object &) { Ran.push_back(P.name().str()); });
  Opts.Instrumentation = &PI;

  // Without -verify-each the damage goes unnoticed until verify runs.
  Expected<std::unique_ptr<MemoryBuffer>> Out =
      runPipeline(Ref, "corrupt", Opts);
  ASSERT_TRUE(bool(Out)) << toString(Out.takeError());
  EXPECT_EQ(Warnings, std::vector<std::string>{"corrupted"});
  EXPECT_EQ(Stats.get("corrupt", "runs"), 1u);
  EXPECT_EQ(Ran, std::vector<std::string>{"corrupt"});

  Opts.VerifyEach = true;
  Out = runPipeline(Ref, "corrupt,stub-syms", Opts);
  ASSERT_FALSE(bool(Out));
  EXPECT_EQ(toString(Out.takeError()),
            "after pass 'corrupt': verification failed: "
            "1 problem\n  string table '.strtab' is empty or not "
            "NUL-terminated");
  // Statistics are reported even when the run fails, added to what
  // StatsOut already held.
  EXPECT_EQ(Stats.get("corrupt", "runs"), 2u);
  EXPECT_EQ(Stats.get("verify", "runs"), 1u);
}

} // namespace
