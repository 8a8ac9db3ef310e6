//===- hotswap/Support/Sha256.h - SHA-256 at the speed of the CPU -*- C++ -*-=//
//
// Every rewrite hashes its whole input for the provenance record, and a
// library's code objects are hashed once more each. x86-64 CPUs since
// 2016-2017 (Goldmont, Zen, Ice Lake) compute SHA-256 rounds in hardware
// (the SHA extensions): where the CPU has them this hashes with them (~1.8
// GB/s here, OpenSSL's speed; two messages side by side ~3.3 GB/s),
// elsewhere with portable code. Not
// llvm::SHA256 itself: it counts bytes in 32 bits and its length field
// overflows from 512 MiB, so its digest of librocsparse.so.0.1 (1.25 GB) is
// not the file's SHA-256. unittests/Sha256Test.cpp checks both paths
// against FIPS 180-4's examples, llvm::SHA256 below 512 MiB (every length
// up to five blocks, megabytes split at random points) and sha256sum's
// digest of 512 MiB.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_SUPPORT_SHA256_H
#define HOTSWAP_SUPPORT_SHA256_H

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>

namespace hotswap {

class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  /// \p Hardware false: the portable code even where the CPU has the
  /// extensions (for tests).
  explicit Sha256(bool Hardware = hasHardwareSha256());

  void update(llvm::ArrayRef<uint8_t> Data);
  /// The digest of everything updated so far; the object is then spent.
  Digest final();

  static Digest hash(llvm::ArrayRef<uint8_t> Data);

  /// X.update(DX) and Y.update(DY) at once: where both hash with the SHA
  /// extensions, the blocks of the two messages go through the CPU side by
  /// side (the rounds of one message wait on each other; two keep the unit
  /// busy: ~1.9x the bytes per second of one).
  static void updateBoth(Sha256 &X, llvm::ArrayRef<uint8_t> DX, Sha256 &Y,
                         llvm::ArrayRef<uint8_t> DY);

  /// Whether this CPU has the SHA extensions this class uses.
  static bool hasHardwareSha256();
  /// Whether this object hashes with them.
  bool usesHardware() const { return Hardware; }

private:
  void blocks(const uint8_t *Data, size_t N);

  bool Hardware;
  uint32_t State[8];
  uint8_t Pending[64];
  size_t PendingSize = 0;
  uint64_t Length = 0;
};

} // namespace hotswap

#endif
