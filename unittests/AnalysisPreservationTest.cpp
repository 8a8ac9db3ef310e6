//===- unittests/AnalysisPreservationTest.cpp - Kept versus fresh ---------===//
//
// -verify-analysis-preservation and the -verify-each invariant check catch
// a pass that lies: one that changes a kernel descriptor but claims to keep
// the kernels analysis, and one whose invariant does not hold after it ran.
// The built-in pipelines pass both checks.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Hotswap.h"
#include "hotswap/Object/Object.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/PassBuilder.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::unittest;

namespace {

/// A gfx900 object with kernels.
std::vector<char> gfx900Object() {
  std::vector<uint8_t> B =
      yamlToBytes(embeddedInput("concurrency-gfx900.yaml"));
  return std::vector<char>(B.begin(), B.end());
}

/// Adds 16 to the first kernel's group_segment_fixed_size (descriptor bytes
/// 0-3) and claims every analysis is still valid.
class LiarPass : public Pass {
public:
  StringRef name() const override { return "liar"; }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                  PassContext &) override {
    Expected<KernelsAnalysis::Result &> R = AM.getResult<KernelsAnalysis>(Obj);
    if (!R)
      return R.takeError();
    const KernelInfo &K = R->Kernels.at(0);
    ArrayRef<uint8_t> Old =
        K.KDSection->contents().slice(K.KDAddr - K.KDSection->Addr, 4);
    uint32_t V = support::endian::read32le(Old.data()) + 16;
    uint8_t New[4];
    support::endian::write32le(New, V);
    if (Error E = K.KDSection->overwrite(K.KDAddr - K.KDSection->Addr, New))
      return std::move(E);
    return PreservedAnalyses::changedPreservingAll();
  }
};

/// Claims the invariant "never holds" and changes nothing visible, but says
/// it changed the object.
class UnfinishedPass : public Pass {
public:
  explicit UnfinishedPass(bool Warns) : Warns(Warns) {}
  StringRef name() const override { return "unfinished"; }
  StringRef invariantDescription() const override { return "never holds"; }
  Expected<bool> isSatisfied(Object &, AnalysisManager &,
                             PassContext &) override {
    return false;
  }
  Expected<PreservedAnalyses> run(Object &, AnalysisManager &,
                                  PassContext &Ctx) override {
    if (Warns)
      Ctx.Warn("gave up on one kernel");
    return PreservedAnalyses::none();
  }
  bool Warns;
};

struct AnalysisPreservationTest : ::testing::Test {
  void SetUp() override {
    In = gfx900Object();
    ASSERT_FALSE(In.empty());
    ASSERT_FALSE(errorToBool(PB.registerPass(
        "liar", "", [](StringRef) -> Expected<std::unique_ptr<Pass>> {
          return std::make_unique<LiarPass>();
        })));
    ASSERT_FALSE(errorToBool(PB.registerPass(
        "unfinished", "", [](StringRef) -> Expected<std::unique_ptr<Pass>> {
          return std::make_unique<UnfinishedPass>(false);
        })));
    ASSERT_FALSE(errorToBool(
        PB.registerPass("unfinished-warns", "",
                        [](StringRef) -> Expected<std::unique_ptr<Pass>> {
                          return std::make_unique<UnfinishedPass>(true);
                        })));
    Opts.Builder = &PB;
    Opts.Warn = [this](const Twine &M) { Warnings.push_back(M.str()); };
  }
  /// The error of running \p Pipeline, or "" when it succeeded.
  std::string run(StringRef Pipeline) {
    MemoryBufferRef Ref(StringRef(In.data(), In.size()), "gfx900.co");
    Expected<std::unique_ptr<MemoryBuffer>> Out =
        runPipeline(Ref, Pipeline, Opts);
    return Out ? std::string() : toString(Out.takeError());
  }
  std::vector<char> In;
  PassBuilder PB;
  PipelineOptions Opts;
  std::vector<std::string> Warnings;
};

TEST_F(AnalysisPreservationTest, BuiltInPipelinesKeepTheAnalysisExact) {
  Opts.VerifyAnalysisPreservation = true;
  Opts.VerifyEach = true;
  for (StringRef P :
       {"trampoline,stub-syms,verify",
        "synth-trampolines<form=long>,patch-descriptors,stub-syms,"
        "realign-shdrs,verify",
        "synth-trampolines,print<kernels>,patch-descriptors,stub-syms"})
    EXPECT_EQ(run(P), "") << P.str();
}

TEST_F(AnalysisPreservationTest, KeptAnalysisThatIsStaleIsAnError) {
  // Unchecked, the lie goes through.
  EXPECT_EQ(run("liar"), "");
  Opts.VerifyAnalysisPreservation = true;
  std::string Err = run("liar");
  EXPECT_NE(Err.find("after pass 'liar': the kernels analysis it kept "
                     "differs from a fresh one in kernel '"),
            std::string::npos)
      << Err;
  EXPECT_NE(Err.find("descriptor bytes"), std::string::npos) << Err;
}

TEST_F(AnalysisPreservationTest, VerifyEachChecksTheInvariantAfterATransform) {
  EXPECT_EQ(run("unfinished"), "");
  Opts.VerifyEach = true;
  EXPECT_EQ(run("unfinished"),
            "after pass 'unfinished': its invariant does not hold (never "
            "holds)");
  // A pass that warned is best-effort: its invariant may stay unmet.
  EXPECT_EQ(run("unfinished-warns"), "");
  EXPECT_EQ(Warnings, std::vector<std::string>{"gave up on one kernel"});
}

} // namespace
