//===- lib/Bundle/CompressedBundleReader.cpp - Read CCOB bundles ----------===//
//
// The header is validated here rather than by
// llvm::object::CompressedOffloadBundle, which reaches llvm_unreachable on an
// unknown version, allocates whatever uncompressed size the header claims,
// and checks the hash only when verbose. Decompression itself is
// llvm::compression's, into a buffer one byte larger than the header's size
// so that data longer than announced shows up as such.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MD5.h"

#include <algorithm>

using namespace llvm;

namespace hotswap {
namespace bundle {

namespace {

/// The most bytes one compressed byte can expand to: deflate codes a
/// 258-byte match in 2 bits at best; a zstd RLE block stores up to 128 KiB
/// in 4 bytes.
uint64_t maxExpansion(CompressionMethod Method) {
  return Method == CompressionMethod::Zlib ? 1032 : 32768;
}

compression::Format llvmFormat(CompressionMethod Method) {
  return Method == CompressionMethod::Zlib ? compression::Format::Zlib
                                           : compression::Format::Zstd;
}

/// LLVM reports an output buffer that is too small with the library's own
/// words (zlib's uncompress() returns Z_BUF_ERROR only then).
bool isOutputFull(StringRef Msg) {
  return Msg == "zlib error: Z_BUF_ERROR" ||
         Msg == "Destination buffer is too small";
}

} // namespace

StringRef compressionMethodName(CompressionMethod Method) {
  switch (Method) {
  case CompressionMethod::Zlib:
    return "zlib";
  case CompressionMethod::Zstd:
    return "zstd";
  }
  return "unknown";
}

std::optional<uint64_t> compressedBundleHeaderSize(uint16_t Version) {
  switch (Version) {
  case 1:
    return 20;
  case 2:
    return 24;
  case 3:
    return 32;
  default:
    return std::nullopt;
  }
}

uint64_t compressedBundleHash(ArrayRef<uint8_t> Uncompressed) {
  MD5 Hash;
  Hash.update(Uncompressed);
  MD5::MD5Result Result;
  Hash.final(Result);
  return Result.low();
}

Expected<CompressedBundleHeader>
parseCompressedBundleHeader(ArrayRef<uint8_t> Bytes) {
  using support::endian::read16le;
  using support::endian::read32le;
  using support::endian::read64le;
  const uint64_t Size = Bytes.size();
  const size_t MagicSize = CompressedBundleMagic.size();
  if (!std::equal(Bytes.begin(),
                  Bytes.begin() + std::min(Size, uint64_t(MagicSize)),
                  CompressedBundleMagic.bytes_begin()))
    return makeError("not a compressed offload bundle: it does not start "
                     "with '" +
                     CompressedBundleMagic + "'");
  if (Size < CompressedBundleCommonSize)
    return makeError("compressed bundle truncated in its version and method "
                     "fields: " +
                     hex(Size) + " of " + hex(CompressedBundleCommonSize) +
                     " bytes");
  CompressedBundleHeader H;
  H.Version = read16le(Bytes.data() + 4);
  const uint16_t Method = read16le(Bytes.data() + 6);
  std::optional<uint64_t> HeaderSize = compressedBundleHeaderSize(H.Version);
  if (!HeaderSize)
    return makeError("unknown compressed bundle version " + Twine(H.Version) +
                     " (known: 1, 2, 3)");
  H.HeaderSize = *HeaderSize;
  if (Size < H.HeaderSize)
    return makeError("compressed bundle v" + Twine(H.Version) +
                     " header truncated: " + hex(Size) + " of " +
                     hex(H.HeaderSize) + " bytes");
  if (Method != uint16_t(CompressionMethod::Zlib) &&
      Method != uint16_t(CompressionMethod::Zstd))
    return makeError("unknown compression method " + Twine(Method) +
                     " (known: 0 zlib, 1 zstd)");
  H.Method = CompressionMethod(Method);
  const uint8_t *P = Bytes.data() + CompressedBundleCommonSize;
  switch (H.Version) {
  case 1:
    H.UncompressedSize = read32le(P);
    H.Hash = read64le(P + 4);
    break;
  case 2:
    H.TotalSize = read32le(P);
    H.UncompressedSize = read32le(P + 4);
    H.Hash = read64le(P + 8);
    break;
  default:
    H.TotalSize = read64le(P);
    H.UncompressedSize = read64le(P + 8);
    H.Hash = read64le(P + 16);
    break;
  }
  if (H.TotalSize && *H.TotalSize != Size)
    return makeError("total size field " + hex(*H.TotalSize) +
                     " does not match the compressed bundle's size " +
                     hex(Size));
  return H;
}

Expected<DecompressedBundle> decompressBundle(ArrayRef<uint8_t> Bytes,
                                              uint64_t MaxUncompressedSize) {
  Expected<CompressedBundleHeader> H = parseCompressedBundleHeader(Bytes);
  if (!H)
    return H.takeError();
  const StringRef Method = compressionMethodName(H->Method);
  if (const char *Reason =
          compression::getReasonIfUnsupported(llvmFormat(H->Method)))
    return makeError("cannot decompress " + Method + ": " + Reason);

  ArrayRef<uint8_t> Stream = Bytes.drop_front(H->HeaderSize);
  const uint64_t Claimed = H->UncompressedSize;
  if (Claimed > MaxUncompressedSize)
    return makeError("uncompressed size " + hex(Claimed) +
                     " is more than the limit of " + hex(MaxUncompressedSize) +
                     " bytes");
  std::optional<uint64_t> MaxProduced =
      checkedMulUnsigned<uint64_t>(Stream.size(), maxExpansion(H->Method));
  if (MaxProduced && Claimed > *MaxProduced)
    return makeError("uncompressed size " + hex(Claimed) + " is more than " +
                     Method + " can expand " + hex(Stream.size()) +
                     " compressed bytes to");
  if (Claimed >= SIZE_MAX)
    return makeError("uncompressed size " + hex(Claimed) +
                     " does not fit in memory");

  // One byte more than announced: filling it means the data is longer.
  std::vector<uint8_t> Out(size_t(Claimed) + 1);
  size_t Produced = Out.size();
  Error Err = H->Method == CompressionMethod::Zlib
                  ? compression::zlib::decompress(Stream, Out.data(), Produced)
                  : compression::zstd::decompress(Stream, Out.data(), Produced);
  const std::string TooLong = Method.str() +
                              " data decompresses to more than the header's "
                              "uncompressed size " +
                              hex(Claimed);
  if (Err) {
    std::string Msg = toString(std::move(Err));
    if (isOutputFull(Msg))
      return makeError(TooLong);
    return makeError("cannot decompress the " + Method + " data: " + Msg);
  }
  Out.resize(Produced);
  if (Out.size() > Claimed)
    return makeError(TooLong);
  if (Out.size() < Claimed)
    return makeError(Method + " data decompresses to " + hex(Out.size()) +
                     " bytes, not the header's uncompressed size " +
                     hex(Claimed));
  const uint64_t Hash = compressedBundleHash(Out);
  if (Hash != H->Hash)
    return makeError("hash " + hex(H->Hash) +
                     " in the header is not the hash of the decompressed "
                     "bundle, " +
                     hex(Hash) + " (low 64 bits of its MD5)");
  return DecompressedBundle{*H, Bytes, std::move(Out)};
}

} // namespace bundle
} // namespace hotswap
