//===- lib/Bundle/OffloadBundle.cpp - Uncompressed bundle model -----------===//
//
// What a parsed bundle can tell about itself, and how messages name entries.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/OffloadBundle.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace hotswap {
namespace bundle {

uint64_t OffloadBundle::payloadAlignment() const {
  bool AnyPayload =
      any_of(Entries, [](const OffloadBundleEntry &E) { return !E.empty(); });
  // The lowest set bit of the OR of the offsets is the largest power of two
  // dividing all of them. Offsets are never 0 in a parsed bundle.
  uint64_t Or = 0;
  for (const OffloadBundleEntry &E : Entries)
    if (!AnyPayload || !E.empty())
      Or |= E.Offset;
  return Or == 0 ? 1 : Or & (~Or + 1);
}

std::string describeEntry(size_t Index, StringRef ID) {
  constexpr size_t MaxShown = 80;
  std::string S;
  raw_string_ostream OS(S);
  OS << "entry " << Index << " ('";
  printEscapedString(ID.take_front(MaxShown), OS);
  if (ID.size() > MaxShown)
    OS << "...";
  OS << "')";
  return S;
}

} // namespace bundle
} // namespace hotswap
