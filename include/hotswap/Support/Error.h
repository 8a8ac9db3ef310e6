//===- hotswap/Support/Error.h - Error helpers ------------------*- C++ -*-===//
//
// The one way the library makes a plain error: a message, in lower case
// without a final period, naming what is wrong ("section '.text' at offset
// 0x1040 extends past end of file"). Errors that code branches on are typed
// (llvm::ErrorInfo subclasses next to the code that raises them), and
// context added on the way up (the entry, the kernel) keeps them what they
// are: a ContextError holds its cause, whose kind, error code and file
// (a FileError's) callers still find with errorCause().
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_SUPPORT_ERROR_H
#define HOTSWAP_SUPPORT_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace hotswap {

/// An error carrying \p Msg (and no error code anybody should test).
inline llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// An error with context in front of it ("bundle entry 'hipv4-...'") and
/// the error it wraps, kept whole: its message follows the context, its
/// error code is the cause's.
class ContextError : public llvm::ErrorInfo<ContextError> {
public:
  static char ID;
  ContextError(std::string Context, std::unique_ptr<llvm::ErrorInfoBase> Cause)
      : Context(std::move(Context)), Cause(std::move(Cause)) {}
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override {
    return Cause->convertToErrorCode();
  }
  llvm::StringRef context() const { return Context; }
  /// The wrapped error (itself perhaps a ContextError).
  const llvm::ErrorInfoBase &cause() const { return *Cause; }

private:
  std::string Context;
  std::unique_ptr<llvm::ErrorInfoBase> Cause;
};

/// \p E with "\p Prefix: " in front of its message, kept as the cause of a
/// ContextError (each error of a list gets its own). Use it once per layer
/// that adds context (the file, the bundle entry, the kernel), never twice
/// for the same context.
llvm::Error prefixError(const llvm::Twine &Prefix, llvm::Error E);

/// What \p E is under all its context: the innermost cause.
const llvm::ErrorInfoBase &errorCause(const llvm::ErrorInfoBase &E);

} // namespace hotswap

#endif // HOTSWAP_SUPPORT_ERROR_H
