//===- hotswap/Passes/VerifyCode.h - Check decoded code against facts -*- C++
//-*-===//
//
// verify-code[<only=REGEX>] (check)
//   Checks the code analysis (CodeAnalysis.h) of every selected function
//   against facts it did not use, and reports what it covers:
//
//   * decode coverage: bytes inside functions that decoded, and every
//     function that did not decode in full, with the reason;
//   * graph consistency (re-derived from the instructions, not from the
//     graph builder's own bookkeeping): blocks tile the decoded
//     instructions, every edge lands on the first instruction of a block,
//     a taken or jump edge on the branch's target, a fall-through edge on
//     the next instruction;
//   * ABI: the registers live at a kernel's entry are among those the ABI
//     sets at wave launch (the descriptor's user and system SGPRs, the
//     work-item ID VGPRs it enables, EXEC);
//   * register counts: no register of a kernel is ever live above the
//     metadata's .sgpr_count / .vgpr_count / .agpr_count.
//
//   A graph inconsistency, an ABI or a register-count violation fails the
//   run (each with the kernel and registers concerned); code that cannot
//   be decoded or followed is reported as an exception with its reason.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_VERIFYCODE_H
#define HOTSWAP_PASSES_VERIFYCODE_H

#include "hotswap/Pass/Pass.h"

#include <memory>
#include <string>

namespace hotswap {

class VerifyCodePass : public Pass {
public:
  /// \p Hazards: also check the code against the hazard rules of its
  /// target (Code/Hazards.h): compiled code should break none.
  explicit VerifyCodePass(std::string Only, bool Hazards = false);
  ~VerifyCodePass() override;
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);

  llvm::StringRef name() const override { return "verify-code"; }
  void printPipeline(llvm::raw_ostream &OS) const override;
  bool isTransform() const override { return false; }
  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) override;

private:
  std::string Only;
  bool Hazards = false;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_VERIFYCODE_H
