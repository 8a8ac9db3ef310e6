//===- lib/Bundle/CompressedBundleReader.cpp - Read CCOB bundles ----------===//
//
// The header is validated here rather than by
// llvm::object::CompressedOffloadBundle, which reaches llvm_unreachable on an
// unknown version, allocates whatever uncompressed size the header claims,
// and checks the hash only when verbose. Decompression streams through zlib
// and zstd directly (llvm::compression only decompresses into a buffer of
// the final size, which a forged header would make us allocate): the output
// grows in steps as data really comes out, up to one byte more than the
// header's size, so that data longer than announced shows up as such.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MD5.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

#include <zlib.h>
#include <zstd.h>

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

namespace {

/// Where decompressed bytes go: grown in steps as the stream produces them,
/// so what a bundle costs in memory follows what it really holds, not what
/// its header (or a zstd frame's header: both are the file's word) claims.
/// One byte more than \p Claimed may be produced: filling it means the data
/// is longer than announced.
class Sink {
public:
  /// The buffer starts at four times the compressed bytes (at least
  /// 64 KiB), or at \p Expected, the size the data says it has (zstd
  /// frames), if that is less; then it doubles up to \p Claimed.
  Sink(uint64_t Claimed, uint64_t Compressed, std::optional<uint64_t> Expected)
      : Limit(Claimed + 1),
        Next(std::min(
            {Limit, Expected ? *Expected + 1 : Limit,
             std::max<uint64_t>(SaturatingMultiply<uint64_t>(Compressed, 4),
                                uint64_t(64) << 10)})) {}
  /// Room for more output; empty when Limit bytes were produced.
  MutableArrayRef<uint8_t> room() {
    if (Produced == Out.size() && Out.size() < Limit) {
      Out.resize(Next);
      Next = std::min<uint64_t>(Limit, Next * 2);
    }
    return MutableArrayRef<uint8_t>(Out).drop_front(Produced);
  }
  void produced(uint64_t N) { Produced += N; }
  uint64_t size() const { return Produced; }
  std::vector<uint8_t> take() {
    Out.resize(Produced);
    return std::move(Out);
  }

private:
  std::vector<uint8_t> Out;
  uint64_t Produced = 0;
  uint64_t Limit, Next;
};

/// zlib's name for a return code, as LLVM spells it in its errors.
const char *zlibCodeName(int Code) {
  switch (Code) {
  case Z_MEM_ERROR:
    return "zlib error: Z_MEM_ERROR";
  case Z_BUF_ERROR:
    return "zlib error: Z_BUF_ERROR";
  case Z_DATA_ERROR:
    return "zlib error: Z_DATA_ERROR";
  case Z_STREAM_ERROR:
    return "zlib error: Z_STREAM_ERROR";
  case Z_NEED_DICT:
    return "zlib error: Z_NEED_DICT";
  default:
    return "zlib error: unknown";
  }
}

/// One zlib stream (what compress2 writes), into \p Out. Bytes after the
/// end of the stream are ignored, as zlib's uncompress() ignores them.
Error inflateInto(ArrayRef<uint8_t> Stream, Sink &Out) {
  z_stream Z{};
  if (int R = inflateInit(&Z); R != Z_OK)
    return makeError(zlibCodeName(R));
  auto End = make_scope_exit([&] { inflateEnd(&Z); });
  constexpr uint64_t MaxChunk = std::numeric_limits<uInt>::max();
  uint64_t Consumed = 0;
  while (true) {
    MutableArrayRef<uint8_t> Room = Out.room();
    if (Room.empty())
      return Error::success(); // too long: the caller says so
    Z.next_in = const_cast<Bytef *>(Stream.data() + Consumed);
    Z.avail_in =
        static_cast<uInt>(std::min(Stream.size() - Consumed, MaxChunk));
    Z.next_out = Room.data();
    Z.avail_out = static_cast<uInt>(std::min<uint64_t>(Room.size(), MaxChunk));
    const uInt InBefore = Z.avail_in, OutBefore = Z.avail_out;
    int R = inflate(&Z, Z_NO_FLUSH);
    Consumed += InBefore - Z.avail_in;
    Out.produced(OutBefore - Z.avail_out);
    if (R == Z_STREAM_END)
      return Error::success();
    if (R == Z_BUF_ERROR && Consumed == Stream.size())
      // No more input, and the stream has not ended.
      return makeError(zlibCodeName(Z_DATA_ERROR));
    if (R != Z_OK && R != Z_BUF_ERROR)
      return makeError(zlibCodeName(R));
  }
}

/// A zstd stream of one or more frames, into \p Out. The window a frame
/// may ask for is bounded by the claimed size, so a forged frame header
/// cannot make zstd allocate more either.
Error unzstdInto(ArrayRef<uint8_t> Stream, uint64_t Claimed, Sink &Out) {
  ZSTD_DCtx *D = ZSTD_createDCtx();
  if (!D)
    return makeError("cannot create a zstd decompression context");
  auto Free = make_scope_exit([&] { ZSTD_freeDCtx(D); });
  // zstd's default limit is 2^27 (what its command line accepts without
  // --long=N); 2^31 is the most a frame may ask for on 64-bit hosts.
  const int WindowLog = std::clamp(
      static_cast<int>(Log2_64_Ceil(std::max<uint64_t>(Claimed, 1))), 27, 31);
  ZSTD_DCtx_setParameter(D, ZSTD_d_windowLogMax, WindowLog);
  ZSTD_inBuffer In{Stream.data(), Stream.size(), 0};
  size_t Hint = 1;
  while (true) {
    MutableArrayRef<uint8_t> Room = Out.room();
    if (Room.empty())
      return Error::success(); // too long: the caller says so
    if (In.pos == In.size && Hint == 0)
      return Error::success(); // every frame ended with the input
    ZSTD_outBuffer O{Room.data(), Room.size(), 0};
    const size_t InBefore = In.pos;
    Hint = ZSTD_decompressStream(D, &O, &In);
    Out.produced(O.pos);
    if (ZSTD_isError(Hint))
      return makeError(ZSTD_getErrorName(Hint));
    if (In.pos == In.size && Hint != 0 && O.pos == 0 && In.pos == InBefore)
      return makeError("the stream ends in the middle of a frame");
  }
}

/// The sum of the content sizes the zstd frames of \p Stream declare, when
/// every frame declares one and they all parse (else the stream itself will
/// say what is wrong).
std::optional<uint64_t> declaredContentSize(ArrayRef<uint8_t> Stream) {
  uint64_t Sum = 0;
  while (!Stream.empty()) {
    unsigned long long Size =
        ZSTD_getFrameContentSize(Stream.data(), Stream.size());
    size_t Frame = ZSTD_findFrameCompressedSize(Stream.data(), Stream.size());
    if (ZSTD_isError(Frame) || Frame > Stream.size())
      return std::nullopt;
    if (Size == ZSTD_CONTENTSIZE_ERROR || Size == ZSTD_CONTENTSIZE_UNKNOWN) {
      // A skippable frame holds no content; anything else is unknown.
      if (Stream.size() < 4 || (support::endian::read32le(Stream.data()) &
                                0xfffffff0u) != 0x184d2a50u)
        return std::nullopt;
      Size = 0;
    }
    std::optional<uint64_t> S = checkedAddUnsigned<uint64_t>(Sum, Size);
    if (!S)
      return std::nullopt;
    Sum = *S;
    Stream = Stream.drop_front(Frame);
  }
  return Sum;
}

} // namespace

Error checkUncompressedSize(const CompressedBundleHeader &H,
                            uint64_t StreamSize, uint64_t MaxUncompressedSize) {
  const StringRef Method = compressionMethodName(H.Method);
  const uint64_t Claimed = H.UncompressedSize;
  if (Claimed > MaxUncompressedSize)
    return makeError("uncompressed size " + hex(Claimed) +
                     " is more than the limit of " + hex(MaxUncompressedSize) +
                     " bytes");
  std::optional<uint64_t> MaxProduced =
      checkedMulUnsigned<uint64_t>(StreamSize, maxExpansion(H.Method));
  if (MaxProduced && Claimed > *MaxProduced)
    return makeError("uncompressed size " + hex(Claimed) + " is more than " +
                     Method + " can expand " + hex(StreamSize) +
                     " compressed bytes to");
  // Real bundles compress a few times (code objects 3-10x); beyond this
  // ratio the header is taken for a decompression bomb.
  std::optional<uint64_t> Plausible =
      checkedMulUnsigned<uint64_t>(StreamSize, MaxCompressionRatio);
  if (Claimed > MinUncompressedSizeLimit && Plausible && Claimed > *Plausible)
    return makeError("uncompressed size " + hex(Claimed) + " is more than " +
                     Twine(MaxCompressionRatio) + " times the " +
                     hex(StreamSize) +
                     " compressed bytes: refused as a decompression bomb");
  if (Claimed >= SIZE_MAX)
    return makeError("uncompressed size " + hex(Claimed) +
                     " does not fit in memory");
  return Error::success();
}

Expected<DecompressedBundle> decompressBundle(ArrayRef<uint8_t> Bytes,
                                              uint64_t MaxUncompressedSize) {
  Expected<CompressedBundleHeader> H = parseCompressedBundleHeader(Bytes);
  if (!H)
    return H.takeError();
  const StringRef Method = compressionMethodName(H->Method);
  ArrayRef<uint8_t> Stream = Bytes.drop_front(H->HeaderSize);
  const uint64_t Claimed = H->UncompressedSize;
  if (Error E = checkUncompressedSize(*H, Stream.size(), MaxUncompressedSize))
    return std::move(E);
  const std::string TooLong = Method.str() +
                              " data decompresses to more than the header's "
                              "uncompressed size " +
                              hex(Claimed);
  auto tooShort = [&](uint64_t Size) {
    return makeError(Method + " data decompresses to " + hex(Size) +
                     " bytes, not the header's uncompressed size " +
                     hex(Claimed));
  };
  // zstd frames say what they hold: a mismatch is known before anything is
  // decompressed (zstd checks the frames keep their word).
  std::optional<uint64_t> Framed;
  if (H->Method == CompressionMethod::Zstd)
    if ((Framed = declaredContentSize(Stream))) {
      if (*Framed > Claimed)
        return makeError(TooLong);
      if (*Framed < Claimed)
        return tooShort(*Framed);
    }

  Sink Out(Claimed, Stream.size(), Framed);
  Error Err = H->Method == CompressionMethod::Zlib
                  ? inflateInto(Stream, Out)
                  : unzstdInto(Stream, Claimed, Out);
  if (Err)
    return prefixError("cannot decompress the " + Method + " data",
                       std::move(Err));
  if (Out.size() > Claimed)
    return makeError(TooLong);
  if (Out.size() < Claimed)
    return tooShort(Out.size());
  std::vector<uint8_t> Data = Out.take();
  const uint64_t Hash = compressedBundleHash(Data);
  if (Hash != H->Hash)
    return makeError("hash " + hex(H->Hash) +
                     " in the header is not the hash of the decompressed "
                     "bundle, " +
                     hex(Hash) + " (low 64 bits of its MD5)");
  return DecompressedBundle{*H, Bytes, std::move(Data)};
}

} // namespace bundle
} // namespace hotswap
