//===- lib/Pass/AnalysisManager.cpp - Kept results against fresh ones -----===//

#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/STLExtras.h"

using namespace llvm;
using namespace hotswap;

Expected<std::optional<AnalysisManager::StaleResult>>
AnalysisManager::firstStaleResult(Object &Obj) {
  // By name: the report does not depend on where the keys live.
  std::vector<const Concept *> Kept;
  for (const auto &KV : Results)
    Kept.push_back(KV.second.get());
  llvm::sort(Kept, [](const Concept *A, const Concept *B) {
    return A->name() < B->name();
  });
  for (const Concept *C : Kept) {
    Expected<std::optional<std::string>> D = C->differenceFromFresh(Obj);
    if (!D)
      return prefixError("the " + C->name() +
                             " analysis it kept cannot be computed anew",
                         D.takeError());
    if (*D)
      return StaleResult{C->name().str(), std::move(**D)};
  }
  return std::nullopt;
}
