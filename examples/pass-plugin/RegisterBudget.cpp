//===- examples/pass-plugin/RegisterBudget.cpp - A pass plugin ------------===//
//
// register-budget<vgprs=N;sgprs=N>: refuses a code object one of whose
// kernels uses more registers than the budget (as its metadata says:
// .vgpr_count plus .agpr_count, .sgpr_count). A check: it reads the kernels
// analysis and changes nothing; a kernel over budget is an error, so the
// run fails and nothing is written. A site runs it in front of its
// pipeline to keep kernels that would lose occupancy out of a rewrite.
//
//   hotswap-opt -load-pass-plugin=libregister-budget.so \
//     -passes='register-budget<vgprs=64>,trampoline' in.co -o out.co
//
//===----------------------------------------------------------------------===//

#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/PassPlugin.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace hotswap;

namespace {

class RegisterBudgetPass : public PassInfoMixin<RegisterBudgetPass> {
public:
  static constexpr StringLiteral Name = "register-budget";

  /// "vgprs=N;sgprs=N", either or both.
  static Expected<std::unique_ptr<Pass>> create(StringRef Params) {
    auto P = std::make_unique<RegisterBudgetPass>();
    SmallVector<StringRef, 2> Parts;
    Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
    for (StringRef Part : Parts) {
      auto [Key, Value] = Part.split('=');
      std::optional<uint64_t> *Field = Key == "vgprs"   ? &P->VGPRs
                                       : Key == "sgprs" ? &P->SGPRs
                                                        : nullptr;
      uint64_t N;
      if (!Field)
        return makeError("unknown parameter '" + Part +
                         "' (known: vgprs=N, sgprs=N)");
      if (Value.getAsInteger(10, N))
        return makeError("'" + Key + "' needs a number, not '" + Value + "'");
      *Field = N;
    }
    if (!P->VGPRs && !P->SGPRs)
      return makeError("give a budget: vgprs=N, sgprs=N or both");
    return std::move(P);
  }

  void printPipeline(raw_ostream &OS) const override {
    OS << Name << "<";
    ListSeparator Sep(";");
    if (VGPRs)
      OS << Sep << "vgprs=" << *VGPRs;
    if (SGPRs)
      OS << Sep << "sgprs=" << *SGPRs;
    OS << ">";
  }
  bool isTransform() const override { return false; }

  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                  PassContext &Ctx) override {
    auto R = AM.getResult<KernelsAnalysis>(Obj);
    if (!R)
      return R.takeError();
    std::string Over;
    for (const KernelInfo &K : R->Kernels) {
      Ctx.Stats.add(Name, "kernels", "kernels checked");
      if (!K.MD) {
        Ctx.Warn("kernel '" + K.Name + "' has no metadata: not checked");
        continue;
      }
      uint64_t V = K.MD->VGPRCount.value_or(0) + K.MD->AGPRCount.value_or(0);
      uint64_t S = K.MD->SGPRCount.value_or(0);
      if (VGPRs && V > *VGPRs)
        Over += (Twine(Over.empty() ? "" : "; ") + "kernel '" + K.Name +
                 "' uses " + Twine(V) + " VGPRs, the budget is " +
                 Twine(*VGPRs))
                    .str();
      if (SGPRs && S > *SGPRs)
        Over += (Twine(Over.empty() ? "" : "; ") + "kernel '" + K.Name +
                 "' uses " + Twine(S) + " SGPRs, the budget is " +
                 Twine(*SGPRs))
                    .str();
    }
    if (!Over.empty())
      return makeError("over the register budget: " + Over);
    return PreservedAnalyses::all();
  }

private:
  std::optional<uint64_t> VGPRs, SGPRs;
};

Error registerPasses(PassBuilder &PB) {
  return PB.registerPass("register-budget",
                         "refuse kernels over a register budget "
                         "(vgprs=N;sgprs=N)",
                         &RegisterBudgetPass::create);
}

} // namespace

HOTSWAP_PASS_PLUGIN("register-budget", "1.0", registerPasses)
