//===- lib/Pass/Statistics.cpp - Per-pass counters ------------------------===//

#include "hotswap/Pass/Statistics.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace llvm;
using namespace hotswap;

void Statistics::add(StringRef Pass, StringRef Name, StringRef Description,
                     uint64_t N) {
  for (Entry &E : Entries)
    if (E.Pass == Pass && E.Name == Name) {
      E.Value += N;
      return;
    }
  Entries.push_back({Pass.str(), Name.str(), Description.str(), N});
}

void Statistics::merge(const Statistics &Other) {
  for (const Entry &E : Other.Entries)
    add(E.Pass, E.Name, E.Description, E.Value);
}

uint64_t Statistics::get(StringRef Pass, StringRef Name) const {
  for (const Entry &E : Entries)
    if (E.Pass == Pass && E.Name == Name)
      return E.Value;
  return 0;
}

void Statistics::print(raw_ostream &OS) const {
  OS << "===" << std::string(73, '-') << "===\n"
     << "                          ... Statistics Collected ...\n"
     << "===" << std::string(73, '-') << "===\n\n";
  size_t PassW = 0;
  for (const Entry &E : Entries)
    PassW = std::max(PassW, E.Pass.size());
  for (const Entry &E : Entries)
    OS << format("%8llu", (unsigned long long)E.Value) << " "
       << left_justify(E.Pass, PassW) << " - " << E.Description << "\n";
}

void Statistics::printJSON(raw_ostream &OS) const {
  json::Object O;
  for (const Entry &E : Entries)
    O[E.Pass + "." + E.Name] = static_cast<int64_t>(E.Value);
  OS << formatv("{0:2}", json::Value(std::move(O))) << "\n";
}
