//===- lib/Pipeline/BundleRecord.h - What a bundle was ----------*- C++ -*-===//
//
// Private to the Pipeline layer. The code objects of a bundle carry their
// own provenance records, but the bundle around them (header, entry ids,
// their order, padding; for a CCOB its compressed bytes) is covered by none
// of them. So a plain bundle or CCOB that is the input, when rewritten, is
// written with a bundle record after its last payload (inside the
// uncompressed bundle of a CCOB): where no bundle reader looks (clang, the
// HIP runtime and COMGR read the entries the header lists), 136 bytes:
//
//   u8[16] "HOTSWAP-BUNDLE\0\0"   u32 format version (1)   u32 flags (1: CCOB)
//   u64 size of the original input     u8[32] its SHA-256
//   u64 size of the original uncompressed bundle   u8[32] its SHA-256
//   u8[32] SHA-256 of the record's bytes before this field
//
// A rewrite of a bundle that has one keeps it (it leads to the very first
// input); `restore` checks the bundle it lays out against it before
// anything is written, and refuses a bundle without one.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_PIPELINE_BUNDLERECORD_H
#define HOTSWAP_LIB_PIPELINE_BUNDLERECORD_H

#include "hotswap/Passes/ProvenanceRecord.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace hotswap {
namespace pipeline {

struct BundleRecord {
  static constexpr size_t Size = 136;
  bool Compressed = false;
  uint64_t OriginalSize = 0;
  SHA256Digest OriginalSHA256{};
  uint64_t UncompressedSize = 0;
  SHA256Digest UncompressedSHA256{};

  /// The record of the input bundle \p Input (what it decompresses to:
  /// \p Uncompressed, the same bytes for a plain bundle).
  static BundleRecord of(llvm::ArrayRef<uint8_t> Input,
                         llvm::ArrayRef<uint8_t> Uncompressed, bool Compressed);
  /// The record \p Trailing (a bundle's bytes after its end) is, when it is
  /// exactly one with its checksum right.
  static std::optional<BundleRecord> parse(llvm::ArrayRef<uint8_t> Trailing);
  std::vector<uint8_t> encode() const;
};

} // namespace pipeline
} // namespace hotswap

#endif // HOTSWAP_LIB_PIPELINE_BUNDLERECORD_H
