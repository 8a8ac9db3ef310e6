//===- hotswap/Bundle/HostBinary.h - HIP host executables/libs --*- C++ -*-===//
//
// A HIP program or library is an x86-64 ELF whose `.hipFatBinSegment` holds
// one 24-byte __hip_fatbin_wrapper record per bundle registration
//   { u32 0x48495046 "HIPF", u32 1, u64 bundle address, u64 0 }
// and whose `.hip_fatbin` holds the offload bundles (plain or CCOB) the
// wrappers point to. The HIP runtime only follows each wrapper's pointer.
//
// analyze() finds every wrapper, where its pointer's value lives (a
// relocation's addend, the bytes in place, or both) and the bundle it
// points to (sized as HIP sizes it). replaceBundles() puts new bundles into
// a new last read-only PT_LOAD above every existing address, together with
// the program header table (moved there, one entry longer; PT_PHDR kept
// valid and inside it), and repoints every wrapper; nothing else that is
// loaded changes. Wrappers that shared a bundle keep sharing one.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_BUNDLE_HOSTBINARY_H
#define HOTSWAP_BUNDLE_HOSTBINARY_H

#include "hotswap/Object/Object.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace hotswap {
namespace bundle {

/// Where the value of a wrapper's bundle pointer comes from at load time.
enum class PointerKind {
  /// An R_X86_64_RELATIVE relocation (lld: 0 in place; GNU ld: the value in
  /// place too).
  Relative,
  /// A .relr.dyn entry; the value is in place.
  Relr,
  /// No relocation (non-PIE executable): the absolute value in place.
  Absolute,
  /// An R_X86_64_64 relocation against a symbol (`__hip_fatbin_<hash>` in
  /// -fgpu-rdc libraries); the addend is relative to the symbol's value.
  Symbol,
};

struct HostWrapper {
  /// Address of the 24-byte record.
  uint64_t Addr = 0;
  /// Address of the bundle it points to.
  uint64_t BundleAddr = 0;
  PointerKind Kind = PointerKind::Absolute;
  /// Index into HostBinary::bundles().
  size_t Bundle = 0;
};

struct HostBundle {
  uint64_t Addr = 0;
  /// The bundle's bytes (inside a loaded section of the input), sized as
  /// HIP sizes it: the header and every entry of an uncompressed bundle,
  /// the total size of a compressed one.
  llvm::ArrayRef<uint8_t> Bytes;
};

struct HostRewriteOptions {
  /// Fill the old bundles with zeros (they stay where they are; nothing
  /// points to them any more).
  bool ZeroOldBundles = false;
};

class HostBinary {
public:
  /// Finds the wrappers of \p Host (read with host ELF allowed; see
  /// ReadOptions) and the bundles they point to, validating everything: a
  /// host that is not ELF64 little-endian x86-64, a wrapper with a wrong
  /// magic or version, a pointer outside every file-backed PT_LOAD, a bundle
  /// that does not parse are errors. A host without wrappers has no bundles.
  static llvm::Expected<HostBinary> analyze(const Object &Host);

  llvm::ArrayRef<HostWrapper> wrappers() const { return Wrappers; }
  llvm::ArrayRef<HostBundle> bundles() const { return Bundles; }

  /// Changes \p Host (the object analyze() was given) so that bundle I is
  /// NewBundles[I] where that is set (unset: unchanged). When nothing is
  /// set, \p Host is not changed at all.
  llvm::Error replaceBundles(Object &Host,
                             llvm::ArrayRef<std::optional<std::vector<uint8_t>>>
                                 NewBundles,
                             const HostRewriteOptions &Opts = {}) const;

private:
  std::vector<HostWrapper> Wrappers;
  std::vector<HostBundle> Bundles;
};

} // namespace bundle
} // namespace hotswap

#endif // HOTSWAP_BUNDLE_HOSTBINARY_H
