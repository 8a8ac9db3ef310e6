//===- hotswap/Support/Sha256.h - SHA-256 at the speed of the CPU -*- C++ -*-=//
//
// Every rewrite hashes its whole input for the provenance record, and a
// library's code objects are hashed once more each: on a 385 MiB code object
// llvm::SHA256 (portable C, ~370 MB/s here) was half of the run. x86-64 CPUs
// since 2016-2017 (Goldmont, Zen, Ice Lake) compute SHA-256 rounds in
// hardware (the SHA extensions); where the CPU has them this hashes with
// them (~5x faster), elsewhere it is llvm::SHA256. The digests are the
// same; unittests/Sha256Test.cpp compares the two over every length up to a
// few blocks and over large inputs split at random points.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_SUPPORT_SHA256_H
#define HOTSWAP_SUPPORT_SHA256_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/SHA256.h"

#include <array>
#include <cstdint>

namespace hotswap {

class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  /// \p Hardware false: always llvm::SHA256 (for tests and comparisons).
  explicit Sha256(bool Hardware = hasHardwareSha256());

  void update(llvm::ArrayRef<uint8_t> Data);
  /// The digest of everything updated so far; the object is then spent.
  Digest final();

  static Digest hash(llvm::ArrayRef<uint8_t> Data);

  /// Whether this CPU has the SHA extensions this class uses.
  static bool hasHardwareSha256();
  /// Whether this object hashes with them.
  bool usesHardware() const { return Hardware; }

private:
  void blocks(const uint8_t *Data, size_t N);

  bool Hardware;
  llvm::SHA256 Portable;
  uint32_t State[8];
  uint8_t Pending[64];
  size_t PendingSize = 0;
  uint64_t Length = 0;
};

} // namespace hotswap

#endif
