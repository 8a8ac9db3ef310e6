//===- lib/Pipeline/InputDigest.h - An input's SHA-256, ahead -*- C++ -*-===//
//
// Private to the Pipeline layer. The provenance record holds the SHA-256 of
// the input a run changed: hashing a 385 MiB code object takes a quarter of
// a second even with the CPU's SHA extensions, and a whole library longer.
// When a thread pool has room it is computed on a pool thread while the
// passes run; either way its pages are handed back behind it
// (PipelineOptions::ReleaseInput), so hashing a file does not make the
// process hold all of it. A run that ends without needing the digest (the
// input did not change, an error) cancels it.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_PIPELINE_INPUTDIGEST_H
#define HOTSWAP_LIB_PIPELINE_INPUTDIGEST_H

#include "hotswap/Hotswap.h"
#include "hotswap/Support/Sha256.h"

#include <memory>

namespace hotswap {
namespace pipeline {

class InputDigest {
public:
  /// Hashes \p Input: on Opts.ThreadPool from now on when there is one,
  /// \p Input is large and the digest is \p Likely to be needed (an input
  /// with a provenance record has its original's digest in it already),
  /// else when get() asks. \p Release: whether Input is the input file's
  /// bytes, whose pages Opts.ReleaseInput may hand back.
  InputDigest(llvm::ArrayRef<uint8_t> Input, const PipelineOptions &Opts,
              bool Release, bool Likely = true);
  /// Cancels the hash if it runs, and waits for it to stop.
  ~InputDigest();
  InputDigest(const InputDigest &) = delete;
  InputDigest &operator=(const InputDigest &) = delete;

  /// The digest (waiting for the pool thread, or hashing here).
  Sha256::Digest get();

private:
  struct State;
  std::shared_ptr<State> S;
};

} // namespace pipeline
} // namespace hotswap

#endif
