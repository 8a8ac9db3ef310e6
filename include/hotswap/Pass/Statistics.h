//===- hotswap/Pass/Statistics.h - Per-pass counters ------------*- C++ -*-===//
//
// Named counters that passes increment (kernels seen, stubs added, ...), kept
// in first-use order so that `-stats` output is deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASS_STATISTICS_H
#define HOTSWAP_PASS_STATISTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hotswap {

class Statistics {
public:
  struct Entry {
    std::string Pass;
    std::string Name;
    std::string Description;
    uint64_t Value = 0;
  };
  /// Adds \p N to the counter (creating it on first use).
  void add(llvm::StringRef Pass, llvm::StringRef Name,
           llvm::StringRef Description, uint64_t N = 1);
  uint64_t get(llvm::StringRef Pass, llvm::StringRef Name) const;
  /// Adds every counter of \p Other (runs on several code objects).
  void merge(const Statistics &Other);
  const std::vector<Entry> &entries() const { return Entries; }
  /// LLVM `-stats` style table.
  void print(llvm::raw_ostream &OS) const;
  /// {"pass.name": value, ...}
  void printJSON(llvm::raw_ostream &OS) const;

private:
  std::vector<Entry> Entries;
};

} // namespace hotswap

#endif // HOTSWAP_PASS_STATISTICS_H
