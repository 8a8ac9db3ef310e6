//===- lib/Pipeline/BundleRecord.cpp - What a bundle was ------------------===//
//
// The record a rewritten bundle carries after its end (BundleRecord.h).
//
//===----------------------------------------------------------------------===//

#include "BundleRecord.h"

#include "hotswap/Support/Sha256.h"

#include "llvm/Support/Endian.h"

#include <cstring>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;

namespace {

constexpr char Magic[16] = {'H', 'O', 'T', 'S', 'W', 'A', 'P', '-',
                            'B', 'U', 'N', 'D', 'L', 'E', 0,   0};
constexpr uint32_t FormatVersion = 1;
constexpr uint32_t CompressedFlag = 1;
/// Where the checksum starts.
constexpr size_t ChecksumAt = BundleRecord::Size - 32;

SHA256Digest digestOf(ArrayRef<uint8_t> Bytes) { return Sha256::hash(Bytes); }

} // namespace

BundleRecord BundleRecord::of(ArrayRef<uint8_t> Input,
                              ArrayRef<uint8_t> Uncompressed, bool Compressed) {
  BundleRecord R;
  R.Compressed = Compressed;
  R.OriginalSize = Input.size();
  R.OriginalSHA256 = digestOf(Input);
  R.UncompressedSize = Uncompressed.size();
  R.UncompressedSHA256 = Compressed ? digestOf(Uncompressed) : R.OriginalSHA256;
  return R;
}

std::vector<uint8_t> BundleRecord::encode() const {
  std::vector<uint8_t> B(Size, 0);
  uint8_t *P = B.data();
  std::memcpy(P, Magic, sizeof(Magic));
  P += sizeof(Magic);
  support::endian::write32le(P, FormatVersion);
  support::endian::write32le(P + 4, Compressed ? CompressedFlag : 0);
  support::endian::write64le(P + 8, OriginalSize);
  std::memcpy(P + 16, OriginalSHA256.data(), 32);
  support::endian::write64le(P + 48, UncompressedSize);
  std::memcpy(P + 56, UncompressedSHA256.data(), 32);
  SHA256Digest Sum = digestOf(ArrayRef(B).take_front(ChecksumAt));
  std::memcpy(B.data() + ChecksumAt, Sum.data(), 32);
  return B;
}

std::optional<BundleRecord> BundleRecord::parse(ArrayRef<uint8_t> Trailing) {
  if (Trailing.size() != Size ||
      std::memcmp(Trailing.data(), Magic, sizeof(Magic)) != 0)
    return std::nullopt;
  SHA256Digest Sum = digestOf(Trailing.take_front(ChecksumAt));
  if (std::memcmp(Sum.data(), Trailing.data() + ChecksumAt, 32) != 0)
    return std::nullopt;
  const uint8_t *P = Trailing.data() + sizeof(Magic);
  const uint32_t Flags = support::endian::read32le(P + 4);
  if (support::endian::read32le(P) != FormatVersion ||
      (Flags & ~CompressedFlag) != 0)
    return std::nullopt;
  BundleRecord R;
  R.Compressed = Flags & CompressedFlag;
  R.OriginalSize = support::endian::read64le(P + 8);
  std::memcpy(R.OriginalSHA256.data(), P + 16, 32);
  R.UncompressedSize = support::endian::read64le(P + 48);
  std::memcpy(R.UncompressedSHA256.data(), P + 56, 32);
  return R;
}
