//===- hotswap/Code/CodeAppender.h - Where added code goes ------*- C++ -*-===//
//
// The one way a pass adds loaded bytes (code or the data that goes with it)
// to a code object. Every region appended during one run goes into the
// run's appended segment: one new PT_LOAD above every existing address,
// created by the first region and grown by each next one, its flags the
// union of what its regions need. Nothing loaded moves: regions only ever
// go above everything there is.
//
// Each region is a section of its own whose name says its purpose
// (`.hotswap.text` for entry stubs, `.hotswap.swap.*` for a replacement's
// image, `.hotswap.clone.text` for kernels' copies, `.hotswap.patch.text` for
// the bodies of sites patched in place), so a reader finds what a region is by
// its name and never by guessing from bytes: the kernels analysis decodes only
// `.hotswap.text` as stubs, whatever else lies beside it.
//
// The first region of a run starts at the first free page
// (Object::firstFreeAddress); each next one at the end of the segment so
// far, aligned as it asks. One exception: an image whose alignment would
// leave more than a page of zeros in the file between the segment's end
// and its start gets a segment of its own, at the same address.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_CODEAPPENDER_H
#define HOTSWAP_CODE_CODEAPPENDER_H

#include "hotswap/Object/Object.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace hotswap {
namespace code {

/// The section of entry stubs: the kernels analysis decodes its slots.
inline constexpr llvm::StringLiteral StubSectionName = ".hotswap.text";

/// What a region appended to a code object holds.
enum class CodePurpose : uint8_t {
  /// Kernel-entry stubs and the prefetch guard after them
  /// (synth-trampolines); the kernels analysis decodes these.
  EntryStubs,
  /// A replacement code object's image, one region per PT_LOAD of it
  /// (swap-kernels).
  SwapImage,
  /// Relocated copies of kernels and the prefetch guard after them
  /// (clone-kernels).
  Clones,
  /// The bodies of sites patched in place (patch-insns<place=site>) and
  /// the prefetch guard after them (InPlace.h).
  SiteBodies,
  /// Code or data a pass plugin adds (hotswap/Passes/PassPlugin.h): the
  /// library reads nothing of it; the plugin finds its regions again by
  /// their section names (and keeps its invariant from them).
  PluginCode,
  /// Zero-filled counters code writes to (instrument): NOBITS, at the end
  /// of the run's segment, which becomes writable.
  Counters,
  /// A metadata note section written anew because the changes outgrew the
  /// old one (code::commitMetadata): SHT_NOTE, led to by the PT_NOTE that led
  /// to the old one.
  Metadata,
};

/// The section of kernels' copies.
inline constexpr llvm::StringLiteral CloneSectionName = ".hotswap.clone.text";
/// The section of the bodies of sites patched in place.
inline constexpr llvm::StringLiteral SiteBodySectionName =
    ".hotswap.patch.text";
/// The section of instrument's counters.
inline constexpr llvm::StringLiteral CounterSectionName = ".hotswap.counters";
/// The section of a metadata note written anew.
inline constexpr llvm::StringLiteral NoteSectionName = ".hotswap.note";

/// The section name of a region of \p Purpose with section flags \p Flags
/// (SHF_*): `.hotswap.text` for stubs; `.hotswap.swap.text`, `.data`,
/// `.rodata` or `.bss` (NOBITS) for an image; `.hotswap.clone.text` for
/// copies; `.hotswap.patch.text` for the bodies of sites patched in place;
/// `.hotswap.plugin.text`, `.data` or `.rodata` for a plugin's;
/// `.hotswap.counters` for counters; `.hotswap.note` for a metadata note.
llvm::StringRef regionSectionName(CodePurpose Purpose, uint64_t Flags,
                                  bool NoBits = false);

/// One PT_LOAD of an image placed whole (appendImage).
struct ImageLoad {
  uint64_t VAddr = 0;
  uint64_t FileSize = 0;
  uint64_t MemSize = 0;
  uint32_t Flags = 0; // PF_*
  llvm::ArrayRef<uint8_t> Bytes;
};

class CodeAppender {
public:
  /// The appender of \p Obj in this run: it continues the run's appended
  /// segment if a pass made one already.
  explicit CodeAppender(Object &Obj);

  /// The address a region aligned to \p Align (a power of two) would start
  /// at if appended now: a pass that encodes addresses into its bytes asks
  /// first, then appends at exactly that address. Error when no address
  /// space is left.
  llvm::Expected<uint64_t> nextAddress(uint64_t Align) const;

  /// Appends \p Bytes as a region of \p Purpose at nextAddress(\p Align),
  /// in a section with flags \p SectionFlags (SHF_ALLOC is implied); of
  /// type SHT_NOTE for CodePurpose::Metadata, else SHT_PROGBITS.
  llvm::Expected<Section &> append(CodePurpose Purpose, uint64_t Align,
                                   uint64_t SectionFlags,
                                   std::vector<uint8_t> Bytes);

  /// Appends \p Size zero bytes that take no file space (a NOBITS section)
  /// as a region of \p Purpose at nextAddress(\p Align), with section flags
  /// \p SectionFlags (SHF_ALLOC is implied). A region with file bytes
  /// appended after it in the same run makes them file bytes (zeros).
  llvm::Expected<Section &> appendZeroed(CodePurpose Purpose, uint64_t Align,
                                         uint64_t SectionFlags, uint64_t Size);
  /// Replaces the bytes of \p S, a region this run appended, by \p Bytes
  /// of any size. Only the last region of the run's segment may change its
  /// size (nothing loaded moves); an error names \p S otherwise.
  llvm::Error replace(Section &S, std::vector<uint8_t> Bytes);

  /// Places \p Loads, an image's PT_LOADs in address order starting at
  /// \p Start (their first address aligned down to \p Align), so that each
  /// keeps its address modulo \p Align: one section per load with file
  /// bytes, one NOBITS section for what it has beyond them. Returns the
  /// delta added to every address (modulo 2^64). \p What names the image
  /// in errors.
  llvm::Expected<uint64_t> appendImage(llvm::ArrayRef<ImageLoad> Loads,
                                       uint64_t Start, uint64_t Align,
                                       llvm::StringRef What);

private:
  /// Adds \p Sec (whose address and size are set) to the run's segment,
  /// making the segment first if there is none.
  Section &place(std::unique_ptr<Section> Sec, uint32_t SegmentFlags,
                 uint64_t SegmentAlign);

  Object &Obj;
  /// The run's appended segment, once there is one.
  Segment *Seg = nullptr;
};

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_CODEAPPENDER_H
