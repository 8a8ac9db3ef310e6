//===- hotswap/Pass/PassInstrumentation.h - Callbacks -----------*- C++ -*-===//
//
// Hooks the pass manager calls around every pass; the driver builds
// -debug-pass-manager, -print-after(-all), -time-passes and -verify-each on
// them, embedders can register their own.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASS_PASSINSTRUMENTATION_H
#define HOTSWAP_PASS_PASSINSTRUMENTATION_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>

namespace hotswap {

class Object;
class Pass;

struct PassInstrumentation {
  /// Before a pass runs (after its invariant was found not to hold).
  llvm::SmallVector<std::function<void(const Pass &, const Object &)>, 2>
      BeforePass;
  /// After a pass ran; \p Changed is false when it preserved everything.
  llvm::SmallVector<
      std::function<llvm::Error(const Pass &, Object &, bool Changed)>, 2>
      AfterPass;
  /// A pass was not run: its invariant holds or a precondition is unmet.
  llvm::SmallVector<std::function<void(const Pass &, llvm::StringRef Reason)>,
                    2>
      SkippedPass;
  /// Around the computation of an analysis (by name, "kernels"), whichever
  /// pass asked for it; nested analyses nest.
  llvm::SmallVector<std::function<void(llvm::StringRef Analysis)>, 2>
      BeforeAnalysis;
  llvm::SmallVector<std::function<void(llvm::StringRef Analysis)>, 2>
      AfterAnalysis;
};

} // namespace hotswap

#endif // HOTSWAP_PASS_PASSINSTRUMENTATION_H
