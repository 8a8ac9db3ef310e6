//===- hotswap/Passes/SwapRecord.h - What swap-kernels did ------*- C++ -*-===//
//
// swap-kernels (SwapKernels.h) leaves two traces in a code object besides the
// code it appends and the descriptors and metadata it rewrites:
//
//   * `<kernel>.swap`, an STT_FUNC GLOBAL DEFAULT symbol of .symtab at the
//     code the kernel now runs (debuggers name the dispatch by it, as they do
//     with `<kernel>.stub`);
//   * one line per swapped kernel in `.hotswap.swaps`, record lines of the
//     record family (RecordLines.h): a JSON object saying which kernel,
//     from which file (as named in with=, and the SHA-256 of its bytes),
//     where the replacement's descriptor and code are in the appended image,
//     and the image's segments (address, file and memory sizes, SHA-256 of
//     their bytes). `llvm-readelf -p .hotswap.swaps` shows it; print<kernels>
//     and verify read it. A kernel swapped twice has two lines: the one whose
//     code the kernel runs is current. Lines written before the record
//     family carry MD5s instead ("from_md5", "md5"); they are read and
//     checked with MD5.
//
// verifySwaps() is verify's part for swapped kernels: each current record's
// image is intact where it was put (its bytes' digests), the kernel's
// descriptor is the replacement's (but for what its stub needs: the entry,
// INST_PREF_SIZE, the SGPR granule), the metadata agrees with it, and each
// `.swap` symbol names the code of a record.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_SWAPRECORD_H
#define HOTSWAP_PASSES_SWAPRECORD_H

#include "hotswap/Object/Object.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/RecordLines.h"
#include "hotswap/Passes/VerifyChecks.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace hotswap {

inline constexpr llvm::StringLiteral SwapRecordSectionName = ".hotswap.swaps";
/// Their record lines (RecordLines.h).
inline constexpr RecordKind SwapRecords{
    SwapRecordSectionName, RecordNoteType::Swaps, "swapped kernels"};
/// `<kernel>.swap`: the symbol at a swapped kernel's code.
inline constexpr llvm::StringLiteral SwapSymbolSuffix = ".swap";

/// The digest a swap record's file and segments carry: SHA-256, or MD5 in
/// lines written before the record family.
enum class SwapDigest { SHA256, MD5 };

/// "SHA-256" or "MD5".
llvm::StringRef swapDigestName(SwapDigest D);

/// The digest \p D of \p Bytes in lowercase hex.
std::string swapDigestHex(SwapDigest D, llvm::ArrayRef<uint8_t> Bytes);

/// One PT_LOAD of a replacement's image, where it was put.
struct SwapSegment {
  uint64_t Addr = 0;
  uint64_t FileSize = 0;
  uint64_t MemSize = 0;
  /// The digest (the record's kind) of its FileSize bytes, lowercase hex.
  std::string Digest;

  bool operator==(const SwapSegment &O) const {
    return Addr == O.Addr && FileSize == O.FileSize && MemSize == O.MemSize &&
           Digest == O.Digest;
  }
};

/// One swapped kernel.
struct SwapRecord {
  std::string Kernel;
  /// The replacement file as with= named it, and the digest of its bytes.
  std::string From;
  SwapDigest Algorithm = SwapDigest::SHA256;
  std::string FromDigest;
  /// Where the replacement's descriptor and code are, in the image.
  uint64_t Descriptor = 0;
  uint64_t Code = 0;
  std::vector<SwapSegment> Image;
};

/// The records of \p Obj, in order (none without the section). Fails, with
/// the line, on a line that is not such a record.
llvm::Expected<std::vector<SwapRecord>> readSwapRecords(const Object &Obj);

/// Appends \p Records to `.hotswap.swaps`, creating it when needed. Fails
/// when a section of that name is loaded or has no file contents.
llvm::Error appendSwapRecords(Object &Obj, llvm::ArrayRef<SwapRecord> Records);

/// The record of the code \p K runs now (the last one for K with K's code
/// entry), or null.
const SwapRecord *currentSwap(llvm::ArrayRef<SwapRecord> Records,
                              const KernelInfo &K);

/// The descriptor swap-kernels gives the kernel \p K when it runs the code
/// of the replacement descriptor \p Repl: \p Repl entered where \p K is
/// entered now and, when that is through a stub, with INST_PREF_SIZE
/// clamped to the stub and the SGPR granule at least \p K's (what its
/// scratch pair needs).
amdgpu::KernelDescriptor swappedDescriptor(const amdgpu::TargetInfo &T,
                                           const amdgpu::KernelDescriptor &Repl,
                                           const KernelInfo &K);

/// Where the metadata values the runtime reads of a kernel disagree with
/// its descriptor \p KD (segment sizes, wavefront size, dynamic stack),
/// one "metadata 'KEY' is A but its descriptor says B" each: what verify
/// reports of a swapped kernel, and why swap-kernels refuses a replacement.
std::vector<std::string>
metadataDisagreements(const amdgpu::KernelMD &MD,
                      const amdgpu::KernelDescriptor &KD);

/// What is wrong with the swapped kernels of \p Obj (see the file comment),
/// one line each, appended to \p Problems.
void verifySwaps(const Object &Obj, const KernelsAnalysis::Result &R,
                 VerifyProblems &Problems);

} // namespace hotswap

#endif // HOTSWAP_PASSES_SWAPRECORD_H
