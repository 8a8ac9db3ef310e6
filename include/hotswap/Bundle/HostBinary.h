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
// The new segment (the Object layer lays it out, see Object/Layout.h):
//   * p_align is the largest p_align of the input's PT_LOADs, at least
//     0x1000; p_vaddr is the lowest address so aligned above every loaded
//     address, p_offset is congruent to it and after the input's last byte;
//   * in an executable (ET_EXEC, or ET_DYN with PT_INTERP or DF_1_PIE), its
//     p_vaddr - p_offset equals the first PT_LOAD's, because Linux before
//     5.18 puts AT_PHDR at that difference plus e_phoff (the file then has a
//     gap of zeros before the segment, as large as the address space the
//     input's segments leave unbacked by the file: .bss and page gaps; and
//     p_align is lowered, down to 0x1000, until it divides that
//     difference). llvm-strip keeps the table in the segment but closes the
//     gap, so a stripped executable relies on Linux 5.18 or later;
//   * it holds one new section `.hip_fatbin` (SHF_ALLOC, 4096-aligned) with
//     the new bundles in bundle order, each at a multiple of 4096, then the
//     program header table.
// The old bundles stay where they are, unchanged unless
// HostRewriteOptions::ZeroOldBundles (the pipeline leaves those `restore`
// can rebuild as holes in the file it writes); a section that held replaced
// bundles only, and whose name contains ".hip_fat" (what roc-obj-ls looks for),
// is renamed `.hotswap.old_fatbin` so that tools find the new bundles.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_BUNDLE_HOSTBINARY_H
#define HOTSWAP_BUNDLE_HOSTBINARY_H

#include "hotswap/Object/Object.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace bundle {

/// The first two fields of every wrapper.
inline constexpr uint32_t HostWrapperMagic = 0x48495046; // "HIPF"
inline constexpr uint32_t HostWrapperVersion = 1;
inline constexpr uint64_t HostWrapperSize = 24;
/// The section clang puts wrappers in, and the one it puts bundles in.
inline constexpr llvm::StringLiteral HostWrapperSectionName =
    ".hipFatBinSegment";
inline constexpr llvm::StringLiteral HostBundleSectionName = ".hip_fatbin";
/// What a section that held only replaced bundles is renamed to.
inline constexpr llvm::StringLiteral HostOldBundleSectionName =
    ".hotswap.old_fatbin";

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

/// "R_X86_64_RELATIVE", "RELR", "absolute", "R_X86_64_64".
llvm::StringRef pointerKindName(PointerKind Kind);

struct HostWrapper {
  /// Address of the 24-byte record.
  uint64_t Addr = 0;
  /// Address of the bundle it points to.
  uint64_t BundleAddr = 0;
  PointerKind Kind = PointerKind::Absolute;
  /// Index into HostBinary::bundles().
  size_t Bundle = 0;
  /// Whether the pointer's value is (also) the 8 bytes at Addr + 8 in the
  /// file, which are then rewritten with it: always for Relr and Absolute;
  /// for relocations when the linker wrote the value there too (GNU ld).
  bool InPlace = false;
  /// PointerKind::Symbol: the relocation's symbol (in .dynsym, which is
  /// loaded and never changes) and its value.
  std::string SymbolName;
  uint64_t SymbolValue = 0;
};

struct HostBundle {
  uint64_t Addr = 0;
  /// The bundle's bytes (inside a loaded section of the input), sized as
  /// HIP sizes it: the header and every entry of an uncompressed bundle,
  /// the total size of a compressed one.
  llvm::ArrayRef<uint8_t> Bytes;
  /// A compressed bundle (CCOB version 2 or 3).
  bool Compressed = false;
};

/// Where placeBundles() put the new bundles.
struct PlacedBundles {
  /// The new section's index; unset when no bundle changed.
  std::optional<uint32_t> Section;
  /// Per bundle, the new copy's offset in that section (unset: unchanged).
  std::vector<std::optional<uint64_t>> Offsets;
};

struct HostRewriteOptions {
  /// Fill the old bundles with zeros (they stay where they are; nothing
  /// points to them any more).
  bool ZeroOldBundles = false;
  /// Per bundle (or empty): the old bundles the caller leaves as holes in
  /// the file it writes, which ZeroOldBundles leaves alone.
  std::vector<bool> LeftAsHoles;
};

class HostBinary {
public:
  /// Finds the wrappers of \p Host (read with ReadOptions::AllowHost) and
  /// the bundles they point to, validating everything; each problem is one
  /// error naming the wrapper's address and what is wrong:
  ///   * a host that is not ELF64 little-endian x86-64, ET_EXEC or ET_DYN;
  ///   * a `.hipFatBinSegment` without file contents, outside every
  ///     file-backed PT_LOAD, or whose size is not a multiple of 24;
  ///   * a wrapper with a wrong magic or version;
  ///   * a bundle pointer with no dynamic relocation in an ET_DYN file, with
  ///     a relocation other than R_X86_64_RELATIVE or R_X86_64_64 against a
  ///     symbol defined in a section, relocated twice, or a dynamic
  ///     relocation anywhere else in the record;
  ///   * a malformed .rela.dyn / .relr.dyn (sizes, a RELR bitmap first);
  ///   * a pointer outside every file-backed PT_LOAD or outside every
  ///     section with file contents;
  ///   * a bundle that does not parse, that does not fit in its section,
  ///     a compressed bundle of version 1 (it has no total size, so HIP
  ///     cannot size it; version 1 is refused, not sized by decompressing);
  ///   * two bundles that overlap without being the same, or a bundle over
  ///     a wrapper.
  /// Wrappers are listed in section then address order; bundles by first
  /// use. A host without `.hipFatBinSegment` has no wrappers and no bundles.
  /// Relocations are read from every SHF_ALLOC SHT_RELA / SHT_RELR section
  /// (`.rela.dyn`, `.rela.plt`, `.relr.dyn`). The result refers to \p Host,
  /// which must outlive it and is the only object replaceBundles accepts.
  ///
  /// \p ReadBundle, when set, is called with each bundle's bytes once its
  /// header was read (analyze reads no more of them): a caller holding a
  /// large input in memory may hand their pages back.
  static llvm::Expected<HostBinary>
  analyze(const Object &Host,
          llvm::function_ref<void(llvm::ArrayRef<uint8_t>)> ReadBundle = {});

  llvm::ArrayRef<HostWrapper> wrappers() const { return Wrappers; }
  llvm::ArrayRef<HostBundle> bundles() const { return Bundles; }

  /// Changes \p Host (the object analyze() was given) so that bundle I is
  /// NewBundles[I] where that is set (unset, or the same bytes: unchanged).
  /// \p NewBundles is empty or has one slot per bundle. Each new bundle must
  /// be what HIP sizes to exactly its bytes (an offload bundle with nothing
  /// after its last entry, or a CCOB of version 2 or 3). The new bundles go
  /// into one new section and segment (see the file comment); each wrapper
  /// of a replaced bundle is repointed where its pointer's value lives: the
  /// addend of its R_X86_64_RELATIVE relocation (and the bytes in place when
  /// the linker wrote the value there), the addend of its R_X86_64_64
  /// relocation (new address minus the symbol's value; the symbol is left
  /// alone), or the bytes in place (RELR, absolute). When nothing changes,
  /// \p Host is not changed at all; on error it is not changed either.
  llvm::Error
  replaceBundles(Object &Host,
                 llvm::ArrayRef<std::optional<std::vector<uint8_t>>> NewBundles,
                 const HostRewriteOptions &Opts = {}) const;

  /// What replaceBundles() does with the bundles' sizes only: the new
  /// section (one new bundle of Sizes[I] bytes for each set slot, same
  /// order, each at a multiple of 4096) is added with external contents
  /// (Section::setExternalContents), the wrappers are repointed, and the
  /// caller writes each new bundle at the returned offset of the section
  /// when it writes the object. Nothing is added when no slot is set.
  llvm::Expected<PlacedBundles>
  placeBundles(Object &Host, llvm::ArrayRef<std::optional<uint64_t>> Sizes,
               const HostRewriteOptions &Opts = {}) const;

  /// For a host that an earlier run of the caller rewrote, whose original
  /// ended at file offset \p From (its provenance record says so): takes
  /// the segment that run appended (the last PT_LOAD, all past \p From,
  /// holding the program header table and nothing but sections past
  /// \p From) out of the model, with its sections, and has the layout treat
  /// the input as \p From bytes long (Object::replaceAppended), so that
  /// placeBundles puts the new segment in its place rather than after it.
  /// Every bundle inside it (reclaimed()) must then be placed again, changed
  /// or not. False, with nothing changed, when the bytes past \p From are
  /// not that: another tool laid the file out again, or wrote there.
  llvm::Expected<bool> reclaimAppended(Object &Host, uint64_t From);
  /// Whether bundle \p I lay in the segment reclaimAppended() took out.
  bool reclaimed(size_t I) const {
    return I < Reclaimed.size() && Reclaimed[I];
  }

  /// Where placeBundles() puts the new section in the file computeLayout()
  /// makes of \p Host, known before the bundles' sizes (which do not move
  /// it), so that the caller may write each new bundle while later ones are
  /// still being made. The same as long as \p Host has no other new segment.
  llvm::Expected<uint64_t> newSectionFileOffset(const Object &Host) const;
  /// Where placeBundles() puts a changed bundle in the new section after
  /// \p Before bytes of those before it (at a multiple of 4096).
  static uint64_t nextBundleOffset(uint64_t Before);

private:
  /// One write into a section of the model.
  struct Edit {
    uint32_t Section;
    uint64_t Offset;
    std::vector<uint8_t> Bytes;
  };
  llvm::Expected<std::vector<Edit>>
  pointerEdits(const Object &Host, const std::vector<bool> &IsChanged,
               llvm::ArrayRef<uint64_t> NewAddr,
               const HostRewriteOptions &Opts) const;
  std::vector<uint32_t>
  sectionsToRename(const Object &Host,
                   const std::vector<bool> &IsChanged) const;

  /// Where a wrapper's pointer is stored, by section index and offset in
  /// that section.
  struct PointerSite {
    uint32_t WrapperSection = 0;
    uint64_t WrapperOffset = 0;
    /// The relocation entry (Relative, Symbol): its table and offset there.
    uint32_t RelocSection = 0;
    uint64_t RelocOffset = 0;
  };
  struct BundleSite {
    uint32_t Section = 0;
    uint64_t Offset = 0;
  };

  const Object *Source = nullptr;
  std::vector<HostWrapper> Wrappers;
  std::vector<HostBundle> Bundles;
  std::vector<PointerSite> PointerSites; // parallel to Wrappers
  std::vector<BundleSite> BundleSites;   // parallel to Bundles
  std::vector<bool> Reclaimed;           // parallel to Bundles, or empty
};

} // namespace bundle
} // namespace hotswap

#endif // HOTSWAP_BUNDLE_HOSTBINARY_H
