//===- examples/cxx-custom-pass/main.cpp - Embedding libhotswap -----------===//
//
// Usage: cxx-custom-pass IN OUT [PIPELINE]
//
// Registers a pass of its own, "count-kernels", which reads the kernels
// analysis and reports through a callback of this program; then runs
// PIPELINE (default "trampoline,count-kernels,stub-syms") from IN to OUT and
// lists the kernels of the result. Warnings arrive through
// PipelineOptions::Warn; errors are llvm::Error values printed here.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Hotswap.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>

using namespace llvm;

namespace {

/// Counts kernels and how many of them are entered through a stub; warns
/// about every kernel that is not. Reads only: the object is unchanged.
class CountKernelsPass : public hotswap::Pass {
public:
  using ReportFn = std::function<void(size_t Kernels, size_t Stubbed)>;
  explicit CountKernelsPass(ReportFn Report) : Report(std::move(Report)) {}

  StringRef name() const override { return "count-kernels"; }
  bool isTransform() const override { return false; }

  Expected<hotswap::PreservedAnalyses> run(hotswap::Object &Obj,
                                           hotswap::AnalysisManager &AM,
                                           hotswap::PassContext &Ctx) override {
    auto R = AM.getResult<hotswap::KernelsAnalysis>(Obj);
    if (!R)
      return R.takeError();
    size_t Stubbed = 0;
    for (const hotswap::KernelInfo &K : R->Kernels) {
      if (K.hasStub())
        ++Stubbed;
      else
        Ctx.Warn("kernel '" + K.Name + "' is not entered through a stub");
    }
    Report(R->Kernels.size(), Stubbed);
    return hotswap::PreservedAnalyses::all();
  }

private:
  ReportFn Report;
};

int fail(const Twine &Msg) {
  errs() << "cxx-custom-pass: error: " << Msg << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4)
    return fail("usage: cxx-custom-pass IN OUT [PIPELINE]");
  StringRef In = argv[1], Out = argv[2];
  StringRef Pipeline =
      argc == 4 ? argv[3] : "trampoline,count-kernels,stub-syms";

  hotswap::PassBuilder PB;
  auto Factory = [](StringRef Params)
      -> Expected<std::unique_ptr<hotswap::Pass>> {
    if (!Params.empty())
      return createStringError("count-kernels takes no parameters");
    return std::make_unique<CountKernelsPass>([](size_t N, size_t Stubbed) {
      outs() << "count-kernels: " << N << " kernels, " << Stubbed
             << " entered through a stub\n";
    });
  };
  if (Error E = PB.registerPass("count-kernels",
                                "count kernels and stubbed kernels", Factory))
    return fail(toString(std::move(E)));

  hotswap::PipelineOptions Opts;
  Opts.Builder = &PB;
  Opts.Warn = [](const Twine &Msg) {
    outs() << "warning: " << Msg << "\n";
  };
  if (Error E = hotswap::runPipelineOnFile(In, Out, Pipeline, Opts))
    return fail(toString(std::move(E)));

  // Inspect the result. The analyzed object borrows Buf: keep Buf alive.
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(
      Out, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!Buf)
    return fail("'" + Out + "': " + Buf.getError().message());
  Expected<hotswap::AnalyzedObject> A = hotswap::analyzeKernels(**Buf);
  if (!A)
    return fail(toString(A.takeError()));
  for (const hotswap::KernelInfo &K : A->Kernels.Kernels) {
    outs() << "kernel " << K.Name << ": entry "
           << format_hex(K.Entry, 0) << ", code "
           << format_hex(K.CodeEntry, 0);
    if (K.hasStub())
      outs() << " (through the stub at " << format_hex(K.EntryStub->Addr, 0)
             << ")";
    outs() << "\n";
  }
  return 0;
}
