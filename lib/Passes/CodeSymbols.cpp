//===- lib/Passes/CodeSymbols.cpp - Where .symtab says code is ------------===//

#include "hotswap/Passes/CodeSymbols.h"

#include "hotswap/Passes/CloneRecord.h"
#include "hotswap/Passes/SwapRecord.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"

using namespace llvm;
using namespace hotswap;

CodeSymbols::CodeSymbols(const Object &Obj) {
  if (const SymbolTable *T = Obj.symtab())
    T->forEachOfType(ELF::STT_FUNC, [&](const Symbol &S) {
      Functions[S.Name].push_back(S.Value);
    });
}

std::optional<uint64_t> CodeSymbols::swappedCodeOf(const KernelInfo &K,
                                                   uint64_t CodeEntry) const {
  SmallString<128> Name(K.Name);
  Name += SwapSymbolSuffix;
  auto It = Functions.find(Name);
  if (It == Functions.end() || It->second.empty())
    return std::nullopt;
  for (uint64_t V : It->second)
    if (V == CodeEntry)
      return V;
  return It->second.back();
}

bool CodeSymbols::isSwapAt(const KernelInfo &K, uint64_t Code) const {
  SmallString<128> Name(K.Name);
  Name += SwapSymbolSuffix;
  auto It = Functions.find(Name);
  return It != Functions.end() && llvm::is_contained(It->second, Code);
}

bool CodeSymbols::isCloneOf(const KernelInfo &K, uint64_t CodeEntry) const {
  SmallString<128> Name(K.Name);
  Name += CloneSymbolSuffix;
  auto It = Functions.find(Name);
  return It != Functions.end() && llvm::is_contained(It->second, CodeEntry);
}

std::optional<CodeSymbols::Claim>
CodeSymbols::disagreement(const KernelInfo &K, uint64_t CodeEntry) const {
  if (isCloneOf(K, CodeEntry))
    return std::nullopt;
  if (std::optional<uint64_t> Swapped = swappedCodeOf(K, CodeEntry)) {
    if (*Swapped != CodeEntry)
      return Claim{*Swapped, true};
    return std::nullopt;
  }
  auto It = Functions.find(K.Name);
  if (It != Functions.end())
    for (uint64_t V : It->second)
      if (V != CodeEntry)
        return Claim{V, false};
  return std::nullopt;
}

std::optional<uint64_t> CodeSymbols::codeOf(const KernelInfo &K) const {
  if (isCloneOf(K, K.CodeEntry))
    return K.CodeEntry;
  if (std::optional<uint64_t> Swapped = swappedCodeOf(K, K.CodeEntry))
    return Swapped;
  auto It = Functions.find(K.Name);
  if (It != Functions.end() && !It->second.empty())
    return It->second.front();
  return std::nullopt;
}
