//===- hotswap/Passes/CodeSymbols.h - Where .symtab says code is -*- C++
//-*-===//
//
// verify checks that a kernel's stub leads where the symbol table says the
// kernel's code is; a pass that wraps a kernel must agree with it, or the
// output of an input verify accepts would fail verify. One predicate for
// both: a `<name>.clone` function symbol at the code the kernel runs (the
// copy clone-kernels made), else the kernel's `<name>.swap` function
// symbols once swap-kernels swapped it (the one at its code, else the
// last), else every function symbol named like the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_CODESYMBOLS_H
#define HOTSWAP_PASSES_CODESYMBOLS_H

#include "hotswap/Object/Object.h"
#include "hotswap/Passes/Kernels.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <vector>

namespace hotswap {

class CodeSymbols {
public:
  /// Indexes the function symbols of \p Obj's .symtab (none without one).
  explicit CodeSymbols(const Object &Obj);

  /// Where the symbol table puts the code of \p K when that is not
  /// \p CodeEntry (Swapped: by a `.swap` symbol); nullopt when it agrees
  /// or says nothing.
  struct Claim {
    uint64_t Addr;
    bool Swapped;
  };
  std::optional<Claim> disagreement(const KernelInfo &K,
                                    uint64_t CodeEntry) const;
  /// Where the symbol table puts the code of \p K at all (its swapped code,
  /// else its function symbol), or nullopt.
  std::optional<uint64_t> codeOf(const KernelInfo &K) const;
  /// Whether a `<name>.swap` function symbol of \p K is at \p Code.
  bool isSwapAt(const KernelInfo &K, uint64_t Code) const;

private:
  /// STT_FUNC values by name (nearly always one).
  llvm::StringMap<llvm::SmallVector<uint64_t, 1>> Functions;
  /// Whether a `<name>.clone` symbol of \p K is at \p CodeEntry.
  bool isCloneOf(const KernelInfo &K, uint64_t CodeEntry) const;
  std::optional<uint64_t> swappedCodeOf(const KernelInfo &K,
                                        uint64_t CodeEntry) const;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_CODESYMBOLS_H
