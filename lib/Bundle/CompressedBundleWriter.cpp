//===- lib/Bundle/CompressedBundleWriter.cpp - Write CCOB bundles ---------===//
//
// The header is written here, field by field in little-endian; the stream
// is llvm::compression's with the parameters clang-offload-bundler passes
// (zstd long-distance matching on), so that with clang's level and the same
// zstd the bytes are clang's.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/Endian.h"

#include <cstring>
#include <limits>

using namespace llvm;

namespace hotswap {
namespace bundle {

int defaultCompressionLevel(CompressionMethod Method) {
  return Method == CompressionMethod::Zlib
             ? compression::zlib::DefaultCompression
             : 3;
}

Expected<std::vector<uint8_t>> compressBundle(ArrayRef<uint8_t> Uncompressed,
                                              uint16_t Version,
                                              CompressionMethod Method,
                                              std::optional<int> Level) {
  if (Version == 1)
    return makeError("refusing to write a v1 compressed bundle: HIP 6.2 and "
                     "later read its uncompressed size as the total size");
  std::optional<uint64_t> HeaderSize = compressedBundleHeaderSize(Version);
  if (!HeaderSize)
    return makeError("cannot write compressed bundle version " +
                     Twine(Version) + " (only 2 and 3)");
  if (Method != CompressionMethod::Zlib && Method != CompressionMethod::Zstd)
    return makeError("unknown compression method " + Twine(uint16_t(Method)) +
                     " (known: 0 zlib, 1 zstd)");
  const StringRef Name = compressionMethodName(Method);
  const compression::Format Format = Method == CompressionMethod::Zlib
                                         ? compression::Format::Zlib
                                         : compression::Format::Zstd;
  if (const char *Reason = compression::getReasonIfUnsupported(Format))
    return makeError("cannot compress with " + Name + ": " + Reason);
  const int L = Level.value_or(defaultCompressionLevel(Method));
  const int MinLevel = Method == CompressionMethod::Zlib ? 0 : -5;
  const int MaxLevel = Method == CompressionMethod::Zlib ? 9 : 22;
  if (L < MinLevel || L > MaxLevel)
    return makeError(Name + " compression level " + Twine(L) +
                     " is out of range (" + Twine(MinLevel) + " to " +
                     Twine(MaxLevel) + ")");
  const uint64_t Uncompressed64 = Uncompressed.size();
  constexpr uint64_t U32Max = std::numeric_limits<uint32_t>::max();
  if (Version == 2 && Uncompressed64 > U32Max)
    return makeError("uncompressed size " + hex(Uncompressed64) +
                     " does not fit in a v2 header (32 bits)");

  SmallVector<uint8_t, 0> Stream;
  compression::compress(
      compression::Params(Format, L, /*Ldm=*/Method == CompressionMethod::Zstd),
      Uncompressed, Stream);
  const uint64_t Total = *HeaderSize + Stream.size();
  if (Version == 2 && Total > U32Max)
    return makeError("compressed size " + hex(Total) +
                     " does not fit in a v2 header (32 bits)");

  std::vector<uint8_t> Out(Total);
  uint8_t *P = Out.data();
  std::memcpy(P, CompressedBundleMagic.data(), CompressedBundleMagic.size());
  support::endian::write16le(P + 4, Version);
  support::endian::write16le(P + 6, uint16_t(Method));
  P += CompressedBundleCommonSize;
  if (Version == 2) {
    support::endian::write32le(P, uint32_t(Total));
    support::endian::write32le(P + 4, uint32_t(Uncompressed64));
    P += 8;
  } else {
    support::endian::write64le(P, Total);
    support::endian::write64le(P + 8, Uncompressed64);
    P += 16;
  }
  support::endian::write64le(P, compressedBundleHash(Uncompressed));
  std::memcpy(Out.data() + *HeaderSize, Stream.data(), Stream.size());
  return Out;
}

Expected<std::vector<uint8_t>>
recompressBundle(const DecompressedBundle &Original,
                 ArrayRef<uint8_t> NewUncompressed) {
  if (ArrayRef<uint8_t>(Original.Bytes) == NewUncompressed)
    return std::vector<uint8_t>(Original.Compressed.begin(),
                                Original.Compressed.end());
  return compressBundle(NewUncompressed, Original.Header.Version,
                        Original.Header.Method);
}

} // namespace bundle
} // namespace hotswap
