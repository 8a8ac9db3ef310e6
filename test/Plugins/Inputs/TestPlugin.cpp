//===- test/Plugins/Inputs/TestPlugin.cpp - Pass plugins for the tests ----===//
//
// Built by test/CMakeLists.txt with hotswap_add_plugin, once as a working
// plugin and once per way a plugin can be broken (TEST_PLUGIN_VARIANT):
//   0  hotswap-test: test-mark<tag=T> (a transform with an invariant),
//      test-fail, test-throw, test-crash (a pass that returns an error,
//      throws, crashes), test-never-holds (its invariant never holds),
//      print<test-sections> (an analysis of its own), test-count-insns
//      (decoded code, from the code analysis), test-place (loaded code
//      through the Code layer), alias test-marks
//   1  API version 999
//   2  its registration throws
//   3  registers 'test-mark' twice, dropping the Error it gets back
//   4  no entry point at all
//   5  its registration returns an error
//   6  hotswap-test-second: alias test-second, of the first plugin's pass
//
//===----------------------------------------------------------------------===//

#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/PassPlugin.h"

#include <csignal>
#include <stdexcept>

using namespace llvm;
using namespace hotswap;

#ifndef TEST_PLUGIN_VARIANT
#define TEST_PLUGIN_VARIANT 0
#endif

namespace {

/// Adds a non-loaded section ".test.mark" holding TAG.
class TestMarkPass : public PassInfoMixin<TestMarkPass> {
public:
  static constexpr StringLiteral Name = "test-mark";
  static constexpr StringLiteral Invariant =
      "the object has a .test.mark section";
  explicit TestMarkPass(std::string Tag) : Tag(std::move(Tag)) {}

  static Expected<std::unique_ptr<Pass>> create(StringRef Params) {
    std::string Tag = "mark";
    if (!Params.empty()) {
      if (!Params.consume_front("tag="))
        return makeError("unknown parameter '" + Params + "' (known: tag=T)");
      Tag = Params.str();
    }
    return std::make_unique<TestMarkPass>(Tag);
  }
  void printPipeline(raw_ostream &OS) const override {
    OS << Name << "<tag=" << Tag << ">";
  }
  Expected<bool> isSatisfied(Object &Obj, AnalysisManager &,
                             PassContext &) override {
    return Obj.findSection(".test.mark") != nullptr;
  }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &,
                                  PassContext &Ctx) override {
    auto S = std::make_unique<Section>();
    S->Name = ".test.mark";
    S->Type = ELF::SHT_PROGBITS;
    S->AddrAlign = 1;
    S->setContents(std::vector<uint8_t>(Tag.begin(), Tag.end()));
    Obj.addSection(std::move(S));
    Ctx.Stats.add("test-mark", "sections", "sections added");
    return PreservedAnalyses::changedPreservingAll();
  }

private:
  std::string Tag;
};

class TestFailPass : public PassInfoMixin<TestFailPass> {
public:
  static constexpr StringLiteral Name = "test-fail";
  bool isTransform() const override { return false; }
  Expected<PreservedAnalyses> run(Object &, AnalysisManager &,
                                  PassContext &) override {
    return makeError("this pass always fails");
  }
};

class TestThrowPass : public PassInfoMixin<TestThrowPass> {
public:
  static constexpr StringLiteral Name = "test-throw";
  bool isTransform() const override { return false; }
  Expected<PreservedAnalyses> run(Object &, AnalysisManager &,
                                  PassContext &) override {
    throw std::runtime_error("thrown by test-throw");
  }
};

class TestCrashPass : public PassInfoMixin<TestCrashPass> {
public:
  static constexpr StringLiteral Name = "test-crash";
  bool isTransform() const override { return false; }
  Expected<PreservedAnalyses> run(Object &, AnalysisManager &,
                                  PassContext &) override {
    volatile int *Null = nullptr;
    *Null = 1;
    return PreservedAnalyses::all();
  }
};

/// Claims an invariant and changes the object, but the invariant never
/// holds: -verify-each must catch it.
class TestNeverHoldsPass : public PassInfoMixin<TestNeverHoldsPass> {
public:
  static constexpr StringLiteral Name = "test-never-holds";
  static constexpr StringLiteral Invariant = "never";
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                  PassContext &Ctx) override {
    return TestMarkPass("never").run(Obj, AM, Ctx);
  }
};

/// An analysis of the plugin's own: the number of sections.
struct TestSectionsAnalysis {
  static AnalysisKey Key;
  static StringRef name() { return "test-sections"; }
  struct Result {
    size_t Sections = 0;
    std::optional<std::string> firstDifference(const Result &F) const {
      if (F.Sections != Sections)
        return std::string("Sections");
      return std::nullopt;
    }
  };
  static Expected<Result> run(Object &Obj, AnalysisManager &) {
    return Result{Obj.sections().size()};
  }
};
AnalysisKey TestSectionsAnalysis::Key;

class PrintTestSections : public PassInfoMixin<PrintTestSections> {
public:
  static constexpr StringLiteral Name = "print<test-sections>";
  bool isTransform() const override { return false; }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                  PassContext &Ctx) override {
    auto R = AM.getResult<TestSectionsAnalysis>(Obj);
    if (!R)
      return R.takeError();
    *Ctx.Out << "test-sections: " << R->Sections << "\n";
    return PreservedAnalyses::all();
  }
};

/// Decoded code through the library's code analysis (LLVM MC inside the
/// driver): blocks and instructions per function.
class TestCountInsns : public PassInfoMixin<TestCountInsns> {
public:
  static constexpr StringLiteral Name = "test-count-insns";
  bool isTransform() const override { return false; }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                  PassContext &Ctx) override {
    auto Code = AM.getResult<CodeAnalysis>(Obj);
    if (!Code)
      return Code.takeError();
    for (size_t I = 0; I < Code->functions().Functions.size(); ++I) {
      const CodeAnalysis::FunctionCode &F = Code->function(I);
      *Ctx.Out << "function " << Code->functions().Functions[I].Name << ": "
               << F.CFG.Blocks.size() << " blocks, " << F.CFG.Insns.size()
               << " instructions\n";
    }
    return PreservedAnalyses::all();
  }
};

/// Places 16 bytes of s_endpgm (gfx9-11 encoding) in a loaded region of
/// its own through CodeAppender: in the run's one appended PT_LOAD.
class TestPlacePass : public PassInfoMixin<TestPlacePass> {
public:
  static constexpr StringLiteral Name = "test-place";
  static constexpr StringLiteral Invariant =
      "the object has a .hotswap.plugin.text region";
  Expected<bool> isSatisfied(Object &Obj, AnalysisManager &,
                             PassContext &) override {
    return Obj.findSection(".hotswap.plugin.text") != nullptr;
  }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &,
                                  PassContext &Ctx) override {
    std::vector<uint8_t> Bytes;
    for (int I = 0; I < 4; ++I)
      Bytes.insert(Bytes.end(), {0x00, 0x00, 0x81, 0xbf});
    code::CodeAppender Appender(Obj);
    Expected<Section &> S =
        Appender.append(code::CodePurpose::PluginCode, 256, ELF::SHF_EXECINSTR,
                        std::move(Bytes));
    if (!S)
      return S.takeError();
    Ctx.Stats.add(Name, "regions", "regions placed");
    // New code in a new segment: no analysis of the old code changed.
    return PreservedAnalyses::changedPreservingAll();
  }
};

Error registerPasses(PassBuilder &PB) {
#if TEST_PLUGIN_VARIANT == 2
  throw std::runtime_error("thrown by the registration");
#elif TEST_PLUGIN_VARIANT == 3
  consumeError(PB.registerPass("test-mark", "first", &TestMarkPass::create));
  consumeError(PB.registerPass("test-mark", "second", &TestMarkPass::create));
  return Error::success();
#elif TEST_PLUGIN_VARIANT == 5
  return makeError("the plugin refuses to register");
#elif TEST_PLUGIN_VARIANT == 6
  return PB.registerAlias("test-second", "test-mark<tag=second>",
                          "test-mark of the first plugin");
#else
  for (auto [Name, Desc, Factory] :
       std::initializer_list<std::tuple<StringRef, StringRef, PassFactory>>{
           {"test-mark", "add a .test.mark section (tag=T)",
            &TestMarkPass::create},
           {"test-fail", "return an error", &TestFailPass::create},
           {"test-throw", "throw a C++ exception", &TestThrowPass::create},
           {"test-crash", "write through a null pointer",
            &TestCrashPass::create},
           {"test-never-holds", "change the object, invariant never holds",
            &TestNeverHoldsPass::create},
           {"test-count-insns", "count decoded instructions",
            &TestCountInsns::create},
           {"test-place", "place code through the Code layer",
            &TestPlacePass::create}})
    if (Error E = PB.registerPass(Name, Desc, Factory))
      return E;
  if (Error E = PB.registerAnalysisPrinter(
          "test-sections", "count the sections", &PrintTestSections::create))
    return E;
  return PB.registerAlias("test-marks", "test-mark<tag=a>,verify",
                          "test-mark, then verify");
#endif
}

} // namespace

#if TEST_PLUGIN_VARIANT == 1
extern "C" HOTSWAP_PLUGIN_EXPORT
    PassPluginLibraryInfo hotswapGetPassPluginInfo() {
  return {999, "hotswap-test-version", "1.0", registerPasses};
}
#elif TEST_PLUGIN_VARIANT == 6
HOTSWAP_PASS_PLUGIN("hotswap-test-second", "2.0", registerPasses)
#elif TEST_PLUGIN_VARIANT != 4
HOTSWAP_PASS_PLUGIN("hotswap-test", "1.0", registerPasses)
#else
// No entry point: a shared object, not a plugin.
extern "C" void *notAPlugin() {
  return reinterpret_cast<void *>(&registerPasses);
}
#endif
