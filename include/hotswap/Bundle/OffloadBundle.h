//===- hotswap/Bundle/OffloadBundle.h - Uncompressed bundles ----*- C++ -*-===//
//
// clang-offload-bundler's binary format (little-endian):
//
//   "__CLANG_OFFLOAD_BUNDLE__"  u64 N
//   N x { u64 offset, u64 size, u64 id length, id bytes }   the header table
//   payloads, at their offsets (from the start of the bundle)
//
// clang lays it out in one pass: each entry's offset is the end of what came
// before (the header, then the previous payload) rounded up to -bundle-align
// (HIP: 4096), gaps are zero, and the file ends where the last payload ends.
// An empty entry (size 0: HIP's host entry) gets an offset like any other,
// so it shares the offset of the entry after it.
//
// parseOffloadBundle validates everything; the rules are at its declaration.
// rewriteOffloadBundle writes a bundle back with some payloads replaced, laid
// out as clang would with the input's alignment (rules at its declaration).
// LLVM 22 reads this format (llvm/Object/OffloadBundle.h) but cannot write it.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_BUNDLE_OFFLOADBUNDLE_H
#define HOTSWAP_BUNDLE_OFFLOADBUNDLE_H

#include "hotswap/Object/BundleMagic.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace bundle {

/// The first 24 bytes of every uncompressed bundle (no NUL).
inline constexpr llvm::StringLiteral OffloadBundleMagic =
    hotswap::OffloadBundleMagic;
/// Magic and entry count.
inline constexpr uint64_t OffloadBundlePrologueSize = 32;
/// Offset, size and id length of one entry, before its id.
inline constexpr uint64_t OffloadBundleEntryFieldsSize = 24;
/// HIP (ROCm 6.0 on) passes COMGR only the first 4096 bytes of a bundle to
/// find its entries: the whole header table must lie within them.
inline constexpr uint64_t MaxOffloadBundleHeaderSize = 4096;

/// One entry of a parsed bundle. ID and Payload point into the parsed bytes.
struct OffloadBundleEntry {
  /// The id exactly as stored ("hip-amdgcn-amd-amdhsa--gfx90a").
  llvm::StringRef ID;
  /// Position of the payload from the start of the bundle.
  uint64_t Offset = 0;
  uint64_t Size = 0;
  /// The Size bytes at Offset.
  llvm::ArrayRef<uint8_t> Payload;

  bool empty() const { return Size == 0; }
};

/// A parsed bundle. It borrows the bytes it was parsed from: they must
/// outlive it.
struct OffloadBundle {
  /// Everything handed to parseOffloadBundle, trailing bytes included.
  llvm::ArrayRef<uint8_t> Bytes;
  /// In header-table order.
  std::vector<OffloadBundleEntry> Entries;
  /// End of the header table (magic, count and every entry with its id).
  uint64_t HeaderSize = 0;
  /// End of the bundle: the largest offset + size of any entry (empty ones
  /// included), at least HeaderSize. This is how HIP sizes a bundle and
  /// where clang ends the file.
  uint64_t Size = 0;

  /// The bytes after Size (none in what clang writes).
  llvm::ArrayRef<uint8_t> trailingBytes() const {
    return Bytes.drop_front(Size);
  }

  /// The payload alignment the bundle was written with, as far as its
  /// offsets tell: the largest power of two that divides the offset of every
  /// entry with a payload (of every entry when none has one); 1 with no
  /// entries. A HIP bundle gives 4096, unless all its offsets happen to be
  /// multiples of a larger power of two (a single device entry at 0x2000),
  /// which is then kept too.
  uint64_t payloadAlignment() const;
};

/// "entry 1 ('hip-amdgcn-amd-amdhsa--gfx90a')", for messages: the id with
/// non-printable bytes escaped, cut after 80 characters.
std::string describeEntry(size_t Index, llvm::StringRef ID);

/// Parses and validates \p Bytes. Each problem has its own one-line message
/// naming the entry and the offsets involved:
///   * truncated magic, entry count, entry fields or id;
///   * an entry count larger than what fits in the bytes (24 bytes at least
///     per entry), checked before anything is allocated;
///   * an empty id, or an id that appears twice (clang keeps one of them);
///   * an offset of 0 in any entry (clang's reader stops at it and drops the
///     entries after it), or an entry extending past the end of \p Bytes;
///   * a payload inside the header table, or two payloads that overlap.
/// Empty entries have no bytes, so nothing can overlap them: they are
/// checked only for a non-zero offset that is not past the end (clang puts
/// HIP's empty host entry at the offset of the entry after it). Bytes after
/// the bundle's end are allowed and reported by trailingBytes().
llvm::Expected<OffloadBundle> parseOffloadBundle(llvm::ArrayRef<uint8_t> Bytes);

/// An entry to lay out: its id and its payload.
struct OffloadBundleInput {
  llvm::StringRef ID;
  llvm::ArrayRef<uint8_t> Payload;
};

/// Where everything of a bundle goes, without its payloads: the header
/// (magic, entry count, the entry table), then each payload at its offset,
/// zeros between them, Size bytes in all.
struct OffloadBundleLayout {
  std::vector<uint8_t> Header;
  std::vector<uint64_t> Offsets;
  uint64_t Size = 0;
};

/// Lays out \p Entries as clang-offload-bundler -bundle-align=\p Alignment
/// does: header table in the given order, then each payload at the end of
/// what precedes it rounded up to \p Alignment (a power of two), zero gaps,
/// no bytes after the last payload; empty payloads included, so an empty
/// entry shares the offset of the next one. Fails when the header table does
/// not fit in MaxOffloadBundleHeaderSize bytes (HIP could not read it), when
/// an id is empty or repeated, or when the layout would overflow.
llvm::Expected<std::vector<uint8_t>>
buildOffloadBundle(llvm::ArrayRef<OffloadBundleInput> Entries,
                   uint64_t Alignment);

/// For each entry of a bundle, in order: the payload that replaces it, or
/// std::nullopt to keep it.
using PayloadReplacements =
    llvm::ArrayRef<std::optional<llvm::ArrayRef<uint8_t>>>;

/// Whether \p Replacements changes a payload of \p Bundle: false when it is
/// empty or every slot is std::nullopt or holds the entry's own bytes.
bool replacesPayload(const OffloadBundle &Bundle,
                     PayloadReplacements Replacements);

/// Writes \p Bundle back with the payloads of \p Replacements (empty, or one
/// slot per entry).
///   * Nothing replaced (replacesPayload is false): the output is
///     Bundle.Bytes, byte for byte, trailing bytes included.
///   * Otherwise: buildOffloadBundle of the same ids in the same order (so
///     the header table has the same layout, byte for byte, except for the
///     offset and size fields) with Bundle.payloadAlignment(). In a bundle
///     clang wrote, the payloads before the first replaced one keep their
///     offsets. Trailing bytes are not part of the bundle and are
///     not written: zero bytes (a caller's slice that includes padding) are
///     dropped, anything else is an error, since what follows a bundle
///     cannot be moved safely without knowing what it is.
llvm::Expected<std::vector<uint8_t>>
rewriteOffloadBundle(const OffloadBundle &Bundle,
                     PayloadReplacements Replacements);

/// The layout rewriteOffloadBundle gives \p Bundle when the payload of
/// entry I is \p NewSizes[I] bytes (unset: its own), for writers that put
/// the payloads in place themselves (a rewritten code object composed
/// straight into the output). Same checks and errors as
/// rewriteOffloadBundle; the caller has checked a size is set.
llvm::Expected<OffloadBundleLayout>
layoutRewrittenBundle(const OffloadBundle &Bundle,
                      llvm::ArrayRef<std::optional<uint64_t>> NewSizes);

} // namespace bundle
} // namespace hotswap

#endif // HOTSWAP_BUNDLE_OFFLOADBUNDLE_H
