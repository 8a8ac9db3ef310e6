//===- hotswap/Pass/PassBuilder.h - Textual pipelines -----------*- C++ -*-===//
//
// Parses `-passes=` text into a PassManager. Grammar (LLVM's, flattened):
//   pipeline := element (',' element)*
//   element  := name | name '<' params '>'
// Names come from PassRegistry.def (transforms, checks, analyses for
// `print<analysis>`, pipeline aliases) and from passes registered by an
// embedding program. Errors carry the column of the offending element and
// never abort.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASS_PASSBUILDER_H
#define HOTSWAP_PASS_PASSBUILDER_H

#include "hotswap/Pass/PassManager.h"

#include "llvm/ADT/StringMap.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace hotswap {

using PassFactory =
    std::function<llvm::Expected<std::unique_ptr<Pass>>(llvm::StringRef Params)>;

class PassBuilder {
public:
  /// Registers every built-in pass, analysis printer and alias.
  PassBuilder();

  /// Makes \p Name usable in pipelines. Error if the name is taken.
  llvm::Error registerPass(llvm::StringRef Name, llvm::StringRef Description,
                           PassFactory Factory);
  /// `Name` expands to `Pipeline`.
  llvm::Error registerAlias(llvm::StringRef Name, llvm::StringRef Pipeline,
                            llvm::StringRef Description);

  /// Appends the passes of \p Text to \p PM.
  llvm::Error parsePassPipeline(PassManager &PM, llvm::StringRef Text) const;

  /// --print-passes.
  void printPassNames(llvm::raw_ostream &OS) const;

  struct Entry {
    std::string Name;
    std::string Description;
    enum Kind { Transform, Check, Analysis, Alias, Custom } K;
    PassFactory Factory;  // transforms, checks, custom, analyses (print<>)
    std::string Expansion; // aliases
  };

private:
  llvm::Error parseInto(PassManager &PM, llvm::StringRef Text,
                        llvm::StringRef Whole, size_t Base,
                        unsigned Depth) const;
  std::vector<Entry> Entries;
  llvm::StringMap<size_t> ByName;
  llvm::StringMap<size_t> AnalysisByName;
};

} // namespace hotswap

#endif // HOTSWAP_PASS_PASSBUILDER_H
