//===- lib/Passes/VerifyChecks.cpp - What verify checks -------------------===//

#include "hotswap/Passes/VerifyChecks.h"

#include "llvm/Support/Regex.h"

#include <mutex>

using namespace llvm;
using namespace hotswap;

json::Value VerifyProblem::toJSON() const {
  return json::Object{{"check", Check}, {"where", Where}, {"message", Message}};
}

void VerifyProblems::add(std::string Where, std::string Message) {
  Out.push_back({Check, std::move(Where), std::move(Message)});
}

void VerifyProblems::push_back(std::string Message) {
  std::string Where = subjectOf(Message);
  add(std::move(Where), std::move(Message));
}

std::string hotswap::subjectOf(StringRef Message) {
  static const Regex Subject("^((kernel|section|symbol table|symbol|stub) "
                             "'[^']*'|PT_LOADs? at 0x[0-9a-f]+|"
                             "image of the replacement '[^']*')");
  SmallVector<StringRef, 2> M;
  if (!Subject.match(Message, &M))
    return "";
  return M[1].str();
}

namespace hotswap {
/// Defined with the built-in checks (Verify.cpp).
void addBuiltinVerifyChecks(
    function_ref<void(StringRef, VerifyCheckFn, bool)> Add);
} // namespace hotswap

namespace {
struct RegisteredCheck {
  std::string Name;
  VerifyCheckFn Fn;
  bool NeedsKernels;
};

class Registry {
public:
  Registry() {
    addBuiltinVerifyChecks(
        [this](StringRef Name, VerifyCheckFn Fn, bool NeedsKernels) {
          add(Name, std::move(Fn), NeedsKernels);
        });
  }
  void add(StringRef Name, VerifyCheckFn Fn, bool NeedsKernels) {
    std::lock_guard<std::mutex> G(Lock);
    for (RegisteredCheck &C : Checks)
      if (C.Name == Name) {
        C = {Name.str(), std::move(Fn), NeedsKernels};
        return;
      }
    Checks.push_back({Name.str(), std::move(Fn), NeedsKernels});
  }
  std::vector<RegisteredCheck> snapshot() {
    std::lock_guard<std::mutex> G(Lock);
    return Checks;
  }

private:
  std::mutex Lock;
  std::vector<RegisteredCheck> Checks;
};

Registry &registry() {
  static Registry R;
  return R;
}
} // namespace

void hotswap::registerVerifyCheck(StringRef Name, VerifyCheckFn Check,
                                  bool NeedsKernels) {
  registry().add(Name, std::move(Check), NeedsKernels);
}

std::vector<std::string> hotswap::verifyCheckNames() {
  std::vector<std::string> Names;
  for (const RegisteredCheck &C : registry().snapshot())
    Names.push_back(C.Name);
  return Names;
}

std::vector<VerifyProblem> hotswap::runVerifyChecks(const VerifyContext &Ctx) {
  std::vector<VerifyProblem> Out;
  for (const RegisteredCheck &C : registry().snapshot()) {
    if (C.NeedsKernels && !Ctx.Kernels)
      continue;
    VerifyProblems P(Out, C.Name);
    C.Fn(Ctx, P);
  }
  return Out;
}
