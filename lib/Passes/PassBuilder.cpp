//===- lib/Passes/PassBuilder.cpp - Built-in pass registry ----------------===//

#include "hotswap/Passes/PassBuilder.h"

#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/CloneKernels.h"
#include "hotswap/Passes/ClonePlan.h"
#include "hotswap/Passes/CodePrinters.h"
#include "hotswap/Passes/CountersPrinter.h"
#include "hotswap/Passes/Instrument.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/PatchDescriptors.h"
#include "hotswap/Passes/PatchInsns.h"
#include "hotswap/Passes/Provenance.h"
#include "hotswap/Passes/RealignShdrs.h"
#include "hotswap/Passes/Restore.h"
#include "hotswap/Passes/StubSymbols.h"
#include "hotswap/Passes/SwapKernels.h"
#include "hotswap/Passes/SynthTrampolines.h"
#include "hotswap/Passes/Verify.h"
#include "hotswap/Passes/VerifyCode.h"
#include "hotswap/Support/Error.h"

#include "llvm/Support/FormatVariadic.h"

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
    if (!Ctx.JSON) {
      if (Error E = AnalysisT::print(*R, Obj, AM, *Ctx.Out))
        return std::move(E);
      return PreservedAnalyses::all();
    }
    json::Value V = AnalysisT::toJSON(*R, Obj, AM);
    if (Ctx.JSONOut)
      Ctx.JSONOut->push_back(std::move(V));
    else
      *Ctx.Out << formatv("{0:2}", V) << "\n";
    return PreservedAnalyses::all();
  }

private:
  std::string Name = ("print<" + AnalysisT::name() + ">").str();
};

template <typename AnalysisT>
Expected<std::unique_ptr<Pass>> createPrinter(StringRef Params) {
  if (!Params.empty())
    return makeError("print<" + AnalysisT::name() + "> takes no parameters");
  return std::make_unique<PrintAnalysisPass<AnalysisT>>();
}
} // namespace

PassBuilder::PassBuilder() {
#define HOTSWAP_TRANSFORM(NAME, CLASS, DESCRIPTION)                            \
  cantFail(add(Kind::Transform, NAME, DESCRIPTION, &CLASS::create, ""));
#define HOTSWAP_CHECK(NAME, CLASS, DESCRIPTION)                                \
  cantFail(add(Kind::Check, NAME, DESCRIPTION, &CLASS::create, ""));
#define HOTSWAP_ANALYSIS(NAME, CLASS, DESCRIPTION)                             \
  cantFail(add(Kind::Analysis, NAME, DESCRIPTION, &createPrinter<CLASS>, ""));
#define HOTSWAP_PRINTER(NAME, CLASS, DESCRIPTION)                              \
  cantFail(add(Kind::Analysis, NAME, DESCRIPTION, &CLASS::create, ""));
#define HOTSWAP_ALIAS(NAME, PIPELINE, DESCRIPTION)                             \
  cantFail(registerAlias(NAME, PIPELINE, DESCRIPTION));
#include "BuiltinPasses.def"
  finishBuiltins();
}
