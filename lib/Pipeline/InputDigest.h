//===- lib/Pipeline/InputDigest.h - An input's SHA-256, ahead -*- C++ -*-===//
//
// Private to the Pipeline layer. The provenance record holds the SHA-256 of
// the input a run changed: hashing a 385 MiB code object takes a quarter of
// a second even with the CPU's SHA extensions, and a whole library longer.
// When a thread pool has room it is computed on a pool thread while the
// passes run; either way its pages are handed back behind it
// (PipelineOptions::ReleaseInput), so hashing a file does not make the
// process hold all of it. A thread that hashes one digest takes another
// that waits along, the two side by side (Sha256::updateBoth): a library
// and its code objects, or the files of one command. A run that ends
// without needing the digest (the input did not change, an error) cancels
// it.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_PIPELINE_INPUTDIGEST_H
#define HOTSWAP_LIB_PIPELINE_INPUTDIGEST_H

#include "hotswap/Hotswap.h"
#include "hotswap/Support/Sha256.h"

#include <memory>

namespace hotswap {
namespace pipeline {

struct DigestJob;

class InputDigest {
public:
  /// When the digest may be computed before get() asks for it.
  enum class Ahead {
    /// Never: it is likely not needed (an input with a provenance record
    /// has its original's digest in it already).
    No,
    /// Beside another digest that a thread hashes (two lanes).
    Along,
    /// Along, and on Opts.ThreadPool from now on when there is one and
    /// \p Input is large.
    Pool,
  };

  /// The digest of \p Input. \p Release: whether Input is the input file's
  /// bytes, whose pages Opts.ReleaseInput may hand back behind the hash.
  InputDigest(llvm::ArrayRef<uint8_t> Input, const PipelineOptions &Opts,
              bool Release, Ahead When);
  /// Cancels the hash if it runs, and waits for it to stop.
  ~InputDigest();
  InputDigest(const InputDigest &) = delete;
  InputDigest &operator=(const InputDigest &) = delete;

  /// The digest (waiting for the pool thread, or hashing here).
  Sha256::Digest get();

private:
  std::shared_ptr<DigestJob> S;
};

} // namespace pipeline
} // namespace hotswap

#endif
