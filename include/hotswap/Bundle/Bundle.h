//===- hotswap/Bundle/Bundle.h - What kind of input is this -----*- C++ -*-===//
//
// The Bundle layer reads and writes the containers AMDGPU code objects come
// in (formats: OffloadBundle.h, CompressedBundle.h, HostBinary.h; how the
// pipeline uses them: docs/ARCHITECTURE.md). This header says which
// container, if any, a buffer is, from its leading bytes alone:
//
//   \x7fELF, ELFCLASS64, little-endian, e_machine EM_AMDGPU   code object
//   \x7fELF, ELFCLASS64, little-endian, e_machine EM_X86_64   host ELF
//   "__CLANG_OFFLOAD_BUNDLE__"                                offload bundle
//   "CCOB"                                                    compressed one
//
// Nothing is validated beyond the magic: identification never fails, and the
// reader of the kind found says what else is wrong.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_BUNDLE_BUNDLE_H
#define HOTSWAP_BUNDLE_BUNDLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace hotswap {
namespace bundle {

enum class InputKind {
  /// ELF64 little-endian, EM_AMDGPU.
  CodeObject,
  /// ELF64 little-endian, EM_X86_64 (a HIP host executable or library).
  HostELF,
  /// clang-offload-bundler's uncompressed format.
  OffloadBundle,
  /// clang-offload-bundler's compressed format (CCOB).
  CompressedOffloadBundle,
  /// Anything else, including a truncated magic.
  Unknown,
};

/// The kind of \p Bytes, from its magic (and e_machine for ELF).
InputKind identifyInput(llvm::ArrayRef<uint8_t> Bytes);

/// "AMDGPU code object", "host ELF (x86-64)", "offload bundle",
/// "compressed offload bundle", "unknown input".
llvm::StringRef inputKindName(InputKind Kind);

/// inputKindName(identifyInput(Bytes)), with the version and compression
/// method of a compressed bundle when its first 8 bytes are there:
/// "compressed offload bundle (CCOB v3, zstd)", or "(CCOB v9, method 7)" for
/// values this library does not know.
std::string describeInput(llvm::ArrayRef<uint8_t> Bytes);

/// What a file holds, for walking a tree of installed files (hotswap-opt
/// -r): its kind, and whether it holds GPU code at all.
struct FileKind {
  InputKind Kind = InputKind::Unknown;
  /// A code object, a bundle of either format, or a host ELF with a
  /// `.hipFatBinSegment` or `.hip_fatbin` section. False for anything else:
  /// ordinary ELF programs and libraries, scripts, data.
  bool GPU = false;
};

/// The kind of the file open as \p FD, read cheaply: its first 64 bytes
/// and, for an ELF64 little-endian x86-64 file, its section header table and
/// section name table (pread; nothing else, however large the file). A file
/// whose headers do not hold together is not GPU code for this purpose
/// (rewriting it would say what is wrong). Errors are I/O errors.
llvm::Expected<FileKind> identifyFile(int FD);

} // namespace bundle
} // namespace hotswap

#endif // HOTSWAP_BUNDLE_BUNDLE_H
