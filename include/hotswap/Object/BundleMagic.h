//===- hotswap/Object/BundleMagic.h - What starts a container ---*- C++ -*-===//
//
// The magic strings that start the containers of code objects: a clang
// offload bundle and a compressed one (CCOB). The Bundle layer reads and
// writes the containers (OffloadBundle.h, CompressedBundle.h name these
// same strings) and tells every input kind apart (identifyInput); the
// readers of one code object (readObject, swap-kernels' FILE) and the
// input file's first look know a container by startsAsBundle, from here,
// so the magic is written down once.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_BUNDLEMAGIC_H
#define HOTSWAP_OBJECT_BUNDLEMAGIC_H

#include "llvm/ADT/StringRef.h"

namespace hotswap {

/// The first 24 bytes of every uncompressed offload bundle (no NUL).
inline constexpr llvm::StringLiteral OffloadBundleMagic =
    "__CLANG_OFFLOAD_BUNDLE__";
/// The first 4 bytes of every compressed offload bundle.
inline constexpr llvm::StringLiteral CompressedBundleMagic = "CCOB";

/// Whether \p Bytes start as an offload bundle, plain or compressed.
inline bool startsAsBundle(llvm::StringRef Bytes) {
  return Bytes.starts_with(OffloadBundleMagic) ||
         Bytes.starts_with(CompressedBundleMagic);
}

} // namespace hotswap

#endif // HOTSWAP_OBJECT_BUNDLEMAGIC_H
