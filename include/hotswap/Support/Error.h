//===- hotswap/Support/Error.h - Error helpers ------------------*- C++ -*-===//
//
// The one way the library makes a plain error: a message, in lower case
// without a final period, naming what is wrong ("section '.text' at offset
// 0x1040 extends past end of file"). Errors that code branches on are typed
// (llvm::ErrorInfo subclasses next to the code that raises them).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_SUPPORT_ERROR_H
#define HOTSWAP_SUPPORT_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace hotswap {

/// An error carrying \p Msg (and no error code anybody should test).
inline llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// \p E with "\p Prefix: " in front of its message. Use it once per layer
/// that adds context (the file, the bundle entry, the kernel), never twice
/// for the same context.
inline llvm::Error prefixError(const llvm::Twine &Prefix, llvm::Error E) {
  if (!E)
    return E;
  return makeError(Prefix + ": " + llvm::toString(std::move(E)));
}

} // namespace hotswap

#endif // HOTSWAP_SUPPORT_ERROR_H
