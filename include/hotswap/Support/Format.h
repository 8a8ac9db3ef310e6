//===- hotswap/Support/Format.h - Message formatting ------------*- C++ -*-===//
//
// Numbers in messages: offsets, addresses and sizes in lower-case hex with a
// 0x prefix ("0x1f00"), as LLVM's ELF tools print them.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_SUPPORT_FORMAT_H
#define HOTSWAP_SUPPORT_FORMAT_H

#include <cstdint>
#include <string>

namespace hotswap {

/// "0x" followed by \p V in lower-case hex.
std::string hex(uint64_t V);

} // namespace hotswap

#endif // HOTSWAP_SUPPORT_FORMAT_H
