//===- lib/Support/Error.cpp - Context that keeps the cause ---------------===//

#include "hotswap/Support/Error.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace hotswap;

char ContextError::ID;

void ContextError::log(raw_ostream &OS) const {
  OS << Context << ": ";
  Cause->log(OS);
}

Error hotswap::prefixError(const Twine &Prefix, Error E) {
  if (!E)
    return E;
  std::string Context = Prefix.str();
  return handleErrors(
      std::move(E), [&](std::unique_ptr<ErrorInfoBase> Cause) -> Error {
        return make_error<ContextError>(Context, std::move(Cause));
      });
}

const ErrorInfoBase &hotswap::errorCause(const ErrorInfoBase &E) {
  const ErrorInfoBase *Cur = &E;
  while (Cur->isA<ContextError>())
    Cur = &static_cast<const ContextError *>(Cur)->cause();
  return *Cur;
}
