//===- lib/Support/Format.cpp - Message formatting ------------------------===//

#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"

std::string hotswap::hex(uint64_t V) {
  return "0x" + llvm::utohexstr(V, /*LowerCase=*/true);
}
