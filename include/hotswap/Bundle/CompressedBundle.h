//===- hotswap/Bundle/CompressedBundle.h - CCOB bundles ---------*- C++ -*-===//
//
// clang-offload-bundler -compress wraps a whole uncompressed bundle in one
// zlib or zstd stream behind a little-endian header:
//
//   v1 (20 bytes): "CCOB" u16 version u16 method u32 uncompressed u64 hash
//   v2 (24 bytes): "CCOB" u16 version u16 method u32 total u32 uncompressed
//                  u64 hash
//   v3 (32 bytes): "CCOB" u16 version u16 method u64 total u64 uncompressed
//                  u64 hash
//
// method 0 is zlib and 1 zstd (llvm::compression::Format); total is the size
// of the whole compressed bundle, header included; hash is the low 64 bits
// of the MD5 of the uncompressed bundle (llvm::MD5::MD5Result::low(): the
// first 8 bytes of the digest, read little-endian). Unlike LLVM, which
// checks the hash only when verbose, decompressBundle always checks it:
// COMGR caches code objects by it, so a wrong one can serve stale code.
//
// Compression level: clang 22 (since llvm-project#83605, LLVM 19) compresses
// with zstd level 3 and long-distance matching; zlib, only when LLVM lacks
// zstd, at level 6; --offload-compression-level / -compression-level /
// OFFLOAD_BUNDLER_COMPRESSION_LEVEL change the level, and earlier clangs used
// llvm::compression's defaults without long-distance matching. The header
// records neither the level nor long-distance matching, and other zstd or
// zlib versions may produce other bytes at the same level, so compressing a
// decompressed bundle again need not reproduce the input. (With clang 22's
// defaults and the same libzstd it does: compressBundle's defaults are
// clang's.) A caller that must write an unchanged bundle back byte for byte
// uses recompressBundle, which returns the original bytes when the
// uncompressed bundle did not change.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_BUNDLE_COMPRESSEDBUNDLE_H
#define HOTSWAP_BUNDLE_COMPRESSEDBUNDLE_H

#include "hotswap/Object/BundleMagic.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace hotswap {
namespace bundle {

inline constexpr llvm::StringLiteral CompressedBundleMagic =
    hotswap::CompressedBundleMagic;
/// Magic, version and method: what every version starts with.
inline constexpr uint64_t CompressedBundleCommonSize = 8;

/// The values of the header's method field.
enum class CompressionMethod : uint16_t { Zlib = 0, Zstd = 1 };

/// "zlib", "zstd".
llvm::StringRef compressionMethodName(CompressionMethod Method);

/// 20, 24 or 32 for versions 1, 2 and 3; std::nullopt for other versions.
std::optional<uint64_t> compressedBundleHeaderSize(uint16_t Version);

/// The header fields, as stored.
struct CompressedBundleHeader {
  uint16_t Version = 0;
  CompressionMethod Method = CompressionMethod::Zstd;
  /// The total-size field (versions 2 and 3 only).
  std::optional<uint64_t> TotalSize;
  uint64_t UncompressedSize = 0;
  uint64_t Hash = 0;
  /// Where the compressed stream starts: 20, 24 or 32.
  uint64_t HeaderSize = 0;
};

/// Parses the header of the compressed bundle \p Bytes and checks it: the
/// magic, the header not truncated, a known version (1, 2, 3) and method
/// (0 zlib, 1 zstd), and, for versions 2 and 3, a total size equal to the
/// size of \p Bytes (the caller passes exactly one compressed bundle).
llvm::Expected<CompressedBundleHeader>
parseCompressedBundleHeader(llvm::ArrayRef<uint8_t> Bytes);

/// The low 64 bits of the MD5 of \p Uncompressed, as the header stores it.
uint64_t compressedBundleHash(llvm::ArrayRef<uint8_t> Uncompressed);

/// The default for decompressBundle's limit: 4 GiB, more than any bundle
/// seen in practice (version 3 exists for larger ones: raise the limit).
inline constexpr uint64_t DefaultMaxUncompressedBundleSize = uint64_t(1) << 32;

/// A decompressed bundle and what it came from.
struct DecompressedBundle {
  CompressedBundleHeader Header;
  /// The compressed bundle that was decompressed (borrowed: the bytes passed
  /// to decompressBundle).
  llvm::ArrayRef<uint8_t> Compressed;
  /// The uncompressed bundle, Header.UncompressedSize bytes.
  std::vector<uint8_t> Bytes;
};

/// decompressBundle refuses a header whose uncompressed size is more than
/// MaxCompressionRatio times the compressed stream (real bundles of code
/// objects compress 3 to 10 times), unless it is at most
/// MinUncompressedSizeLimit.
inline constexpr uint64_t MaxCompressionRatio = 1024;
inline constexpr uint64_t MinUncompressedSizeLimit = uint64_t(64) << 20;

/// The checks decompressBundle makes of a header's uncompressed size before
/// decompressing anything (\p StreamSize: the compressed bytes after the
/// header): at most \p MaxUncompressedSize, at most what the method can
/// expand the stream to, within MaxCompressionRatio, and addressable.
llvm::Error checkUncompressedSize(
    const CompressedBundleHeader &H, uint64_t StreamSize,
    uint64_t MaxUncompressedSize = DefaultMaxUncompressedBundleSize);

/// Decompresses the compressed bundle \p Bytes after
/// parseCompressedBundleHeader accepts it, and checks the result: its size must
/// be the header's uncompressed size (more or fewer bytes are each an error),
/// and its hash the header's. Before decompressing, the header's
/// uncompressed size must be at most \p MaxUncompressedSize, at most what
/// the method can expand the compressed bytes to (1032:1 for zlib, 32768:1 for
/// zstd), within MaxCompressionRatio (above) and, for zstd, equal to what
/// the frames declare when they declare it. Memory then follows what the
/// data really decompresses to (at most twice that, in steps, from four
/// times the compressed bytes or 64 KiB), never the size the header or a
/// frame claims. What the uncompressed bytes are is not checked
/// here: parse them with parseOffloadBundle.
llvm::Expected<DecompressedBundle> decompressBundle(
    llvm::ArrayRef<uint8_t> Bytes,
    uint64_t MaxUncompressedSize = DefaultMaxUncompressedBundleSize);

/// clang's compression level for \p Method: 3 for zstd, 6 for zlib.
int defaultCompressionLevel(CompressionMethod Method);

/// A compressed bundle of \p Uncompressed: a version \p Version header with
/// the sizes and the hash computed from the data, then one stream of
/// \p Method at \p Level (clang's default when not given), with zstd's
/// long-distance matching on as clang has it. Versions 2 and 3 only: version
/// 1 is refused (HIP 6.2 on reads its uncompressed-size field as the total
/// size), as are sizes version 2 cannot hold, a method LLVM was built
/// without, and a level out of the method's range (zlib 0 to 9, zstd -5 to
/// 22).
llvm::Expected<std::vector<uint8_t>>
compressBundle(llvm::ArrayRef<uint8_t> Uncompressed, uint16_t Version,
               CompressionMethod Method,
               std::optional<int> Level = std::nullopt);

/// What to write for a compressed bundle \p Original whose uncompressed
/// bundle is now \p NewUncompressed: Original.Compressed, byte for byte, when
/// NewUncompressed equals Original.Bytes; otherwise compressBundle at the
/// original's version and method with clang's level (so a version 1
/// original that changed is an error).
llvm::Expected<std::vector<uint8_t>>
recompressBundle(const DecompressedBundle &Original,
                 llvm::ArrayRef<uint8_t> NewUncompressed);

} // namespace bundle
} // namespace hotswap

#endif // HOTSWAP_BUNDLE_COMPRESSEDBUNDLE_H
