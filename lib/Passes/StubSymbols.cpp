//===- lib/Passes/StubSymbols.cpp - stub-syms -----------------------------===//

#include "hotswap/Passes/StubSymbols.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace llvm;
using namespace hotswap;

static std::string stubName(const KernelInfo &K) { return K.Name + ".stub"; }

/// Whether \p S is the symbol stub-syms would add for \p Stub.
static bool describesStub(const Symbol &S, const PoolStub &Stub) {
  return S.Type == ELF::STT_FUNC && S.Value == Stub.Addr &&
         S.Size == Stub.size();
}

Expected<bool> StubSymbolsPass::holds(Object &Obj, KernelsAnalysis::Result &R,
                                      AnalysisManager &AM, PassContext &Ctx) {
  SymbolTable *T = Obj.symtab();
  StringMap<Symbol> ByName;
  if (T)
    T->forEach([&](const Symbol &S) {
      if (StringRef(S.Name).ends_with(".stub"))
        ByName.try_emplace(S.Name, S);
    });
  bool AnyStub = false;
  for (const KernelInfo &K : R.Kernels) {
    if (!K.EntryStub)
      continue;
    AnyStub = true;
    // A name taken by a different symbol does not satisfy the invariant:
    // run() reports it again (an error with --strict).
    auto It = ByName.find(stubName(K));
    if (It == ByName.end() || !describesStub(It->second, *K.EntryStub))
      return false;
  }
  // Without any stub the invariant holds only vacuously: let the
  // precondition report it (a skip, or an error with --strict).
  return AnyStub;
}

Expected<std::optional<std::string>>
StubSymbolsPass::precondition(Object &Obj, KernelsAnalysis::Result &R,
                              AnalysisManager &AM, PassContext &Ctx) {
  bool Any = false;
  for (const KernelInfo &K : R.Kernels)
    Any |= K.hasStub();
  if (!Any)
    return std::optional<std::string>(
        "no kernel is entered through a stub (run trampoline first)");
  return std::nullopt;
}

Expected<PreservedAnalyses>
StubSymbolsPass::runOnKernels(Object &Obj, KernelsAnalysis::Result &R,
                              AnalysisManager &AM, PassContext &Ctx) {
  SymbolTable *T = Obj.symtab();
  if (!T) {
    Ctx.Warn("object has no .symtab (the ROCm loader finds kernels only "
             "there); creating one for the stub symbols");
    T = &Obj.createSymtab();
    Ctx.Stats.add(name(), "symtab-created", "symbol tables created");
  }
  // Writing the table partitions it (locals first). The reader refused a
  // table that is not partitioned if a relocation section refers to its
  // symbols by index (renumbering them would break it).
  //
  // Only the names this pass would add are looked up: the table may hold
  // millions of symbols (a Tensile object: 1.8M local labels), and a map
  // of every name cost more than the rest of the run. The first symbol of
  // a name wins, as SymbolTable::find has it.
  StringMap<std::optional<Symbol>> Existing;
  for (const KernelInfo &K : R.Kernels)
    if (K.EntryStub)
      Existing.try_emplace(stubName(K), std::nullopt);
  T->forEach([&](const Symbol &S) {
    if (!StringRef(S.Name).ends_with(".stub"))
      return;
    auto It = Existing.find(S.Name);
    if (It != Existing.end() && !It->second)
      It->second = S;
  });

  std::vector<Symbol> New;
  New.reserve(R.Kernels.size());
  for (const KernelInfo &K : R.Kernels) {
    if (!K.EntryStub)
      continue;
    const PoolStub &S = *K.EntryStub;
    std::string Name = stubName(K);
    // Every name to add is a key of Existing, which outlives the adds:
    // the new symbols' names point at its keys until the table copies them.
    auto It = Existing.find(Name);
    assert(It != Existing.end() && "every stub name was looked up");
    if (It->second) {
      const Symbol &Old = *It->second;
      if (describesStub(Old, S))
        continue;
      std::string Msg = "symbol '" + Name + "' already exists (value " +
                        hex(Old.Value) + ", size " + Twine(Old.Size).str() +
                        ") and is not the stub at " + hex(S.Addr) +
                        "; stub left unnamed";
      if (Ctx.Strict)
        return makeError(Msg);
      Ctx.Warn(Msg);
      Ctx.Stats.add(name(), "collisions", "stub names taken by other symbols");
      continue;
    }
    Symbol Sym;
    Sym.Name = It->getKey();
    Sym.Binding = ELF::STB_GLOBAL;
    Sym.Type = ELF::STT_FUNC;
    Sym.Other = ELF::STV_DEFAULT;
    Sym.Sec = S.Sec;
    Sym.Value = S.Addr;
    Sym.Size = S.size();
    New.push_back(std::move(Sym));
  }
  if (New.empty())
    return PreservedAnalyses::all();
  T->reserve(New.size());
  for (Symbol &S : New)
    T->add(std::move(S));
  Ctx.Stats.add(name(), "symbols", "stub symbols added", New.size());
  // Kernels are found through .kd OBJECT symbols: unaffected.
  return PreservedAnalyses::changedPreservingAll();
}
