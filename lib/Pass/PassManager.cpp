//===- lib/Pass/PassManager.cpp - Runs a pipeline -------------------------===//

#include "hotswap/Pass/PassManager.h"

#include "hotswap/Support/Error.h"

using namespace llvm;
using namespace hotswap;

Pass::~Pass() = default;

Error PassManager::run(Object &Obj, AnalysisManager &AM, PassContext &Ctx,
                       PassInstrumentation *PI) {
  for (size_t Position = 0; Position != Passes.size(); ++Position) {
    const std::unique_ptr<Pass> &P = Passes[Position];
    auto Skip = [&](StringRef Why) {
      if (PI)
        for (auto &CB : PI->SkippedPass)
          CB(*P, Why);
    };
    if (P->isTransform()) {
      Expected<bool> Holds = P->isSatisfied(Obj, AM, Ctx);
      if (!Holds)
        return Holds.takeError();
      if (*Holds) {
        std::string Why = "invariant holds";
        if (!P->invariantDescription().empty())
          Why += ": " + P->invariantDescription().str();
        Skip(Why);
        continue;
      }
      Ctx.UnfitNearness = 0;
      Expected<std::optional<std::string>> Unmet =
          P->unmetPrecondition(Obj, AM, Ctx);
      if (!Unmet)
        return Unmet.takeError();
      if (*Unmet) {
        // A pass that fits only some code objects is skipped on the others
        // even in strict mode: whoever runs the input checks it fit one.
        if (Ctx.Strict && !P->needsSomeCodeObject())
          return makeError("pass '" + P->name() + "' cannot run: " + **Unmet);
        if (P->needsSomeCodeObject()) {
          std::string Text;
          raw_string_ostream OS(Text);
          P->printPipeline(OS);
          Ctx.Unfit.push_back(
              {Position, std::move(Text), **Unmet, Ctx.UnfitNearness});
        }
        Skip("precondition not met: " + **Unmet);
        continue;
      }
    }
    if (PI)
      for (auto &CB : PI->BeforePass)
        CB(*P, Obj);
    // Count the pass's warnings: a best-effort pass that warned may leave
    // its invariant unmet.
    unsigned Warnings = 0;
    auto Warn = Ctx.Warn;
    Ctx.Warn = [&Warnings, &Warn](const Twine &Msg) {
      ++Warnings;
      Warn(Msg);
    };
    Expected<PreservedAnalyses> PA = P->run(Obj, AM, Ctx);
    Ctx.Warn = Warn;
    if (!PA)
      return PA.takeError();
    AM.invalidate(*PA);
    bool Changed = PA->modified();
    if (Ctx.CheckInvariants && Changed && P->isTransform() && !Warnings &&
        !P->invariantDescription().empty()) {
      Expected<bool> Holds = P->isSatisfied(Obj, AM, Ctx);
      if (!Holds)
        return Holds.takeError();
      if (!*Holds)
        return makeError("after pass '" + P->name() +
                         "': its invariant does not hold (" +
                         P->invariantDescription() + ")");
    }
    if (PI)
      for (auto &CB : PI->AfterPass)
        if (Error E = CB(*P, Obj, Changed))
          return E;
  }
  return Error::success();
}

void PassManager::printPipeline(raw_ostream &OS) const {
  bool First = true;
  for (const auto &P : Passes) {
    if (!First)
      OS << ",";
    First = false;
    P->printPipeline(OS);
  }
}
