//===- hotswap/Passes/Verify.h - verify -------------------------*- C++ -*-===//
//
// verify (check; also run by -verify-each)
//   Checks the model, never a serialised copy of it: the ELF structure
//   beyond what the reader validates (PT_LOADs sorted and disjoint, loaded
//   sections inside their segment, offsets congruent to addresses, section
//   header table last and aligned as the writer will lay it out, .symtab
//   partitioned with the right sh_info, string tables NUL-terminated) and,
//   for every kernel, that its entry is reachable: a stub is decoded with the
//   MC disassembler and emulated to the address it reaches, which must be
//   the kernel's own code (stub+256 must reach entry+256 for dual stubs,
//   and no descriptor may point at such a second half);
//   the scratch pair must lie above the live SGPRs and inside the declared
//   counts; INST_PREF_SIZE must not run past the stub; `.stub` symbols must
//   match their stubs. Every violation is reported, one line each naming the
//   kernel or symbol, the addresses involved and what was expected; the run
//   fails. These are the built-in checks (structure, provenance, kernels,
//   swaps); checks registered with registerVerifyCheck (VerifyChecks.h) run
//   after them. With --kernels-format=json the problems are printed as JSON
//   as well ({"verify": {"problems": [{check, where, message}]}}; a
//   container's JSON is all or none, so a failing one prints only the
//   error).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_VERIFY_H
#define HOTSWAP_PASSES_VERIFY_H

#include "hotswap/Pass/Pass.h"
#include "hotswap/Passes/VerifyChecks.h"

namespace hotswap {

class VerifyPass : public PassInfoMixin<VerifyPass> {
public:
  static constexpr llvm::StringLiteral Name = "verify";
  bool isTransform() const override { return false; }
  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) override;
};

/// Every problem verify finds in \p Obj (empty when it is valid): every
/// registered check (VerifyChecks.h) in order, with the caches of \p AM (its
/// MC state; the kernels are found afresh).
std::vector<VerifyProblem> verifyObject(Object &Obj, AnalysisManager &AM);
/// The same with analyses of its own.
std::vector<VerifyProblem> verifyObject(Object &Obj);

} // namespace hotswap

#endif // HOTSWAP_PASSES_VERIFY_H
