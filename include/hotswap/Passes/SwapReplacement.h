//===- hotswap/Passes/SwapReplacement.h - swap-kernels' FILE ----*- C++ -*-===//
//
// The replacement code object of swap-kernels<with=FILE>: read, validated
// (a linked code object with kernels and PT_LOADs in order, no dynamic
// relocations: moved by a delta, its data would hold stale addresses),
// analysed (its kernels) and digested (SHA-256) once per file, then shared,
// read-only, by every code object of a run and every thread: get() returns
// the copy already read while any pass still holds it and the file has the
// same identity (device, inode, size, modification time).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_SWAPREPLACEMENT_H
#define HOTSWAP_PASSES_SWAPREPLACEMENT_H

#include "hotswap/Object/Object.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/SwapRecord.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

struct SwapReplacement {
  /// One PT_LOAD of the file.
  struct Load {
    uint64_t VAddr = 0;
    uint64_t FileSize = 0;
    uint64_t MemSize = 0;
    uint32_t Flags = 0;
    llvm::ArrayRef<uint8_t> Bytes;
  };

  /// FILE, read once: the copy another pass read already when the file is
  /// still the same, else read anew. Errors name the file.
  static llvm::Expected<std::shared_ptr<const SwapReplacement>>
  get(llvm::StringRef Path);

  /// Reads \p Bytes (the contents of \p Path) as a replacement.
  static llvm::Expected<std::shared_ptr<const SwapReplacement>>
  read(std::unique_ptr<llvm::MemoryBuffer> Bytes, llvm::StringRef Path);

  /// Owns the file's bytes. Only its header is read once shared.
  std::unique_ptr<Object> Obj;
  std::optional<KernelsAnalysis::Result> Kernels;
  /// The digest \p D of the file's bytes, as swap records carry it: the
  /// SHA-256 made when the file was read; the MD5 (records written before
  /// the record family) made when first asked for.
  const std::string &digest(SwapDigest D) const;
  std::vector<Load> Loads;
  /// The delta is a multiple of this (the largest p_align, at least a page).
  uint64_t Align = 0x1000;
  /// The first PT_LOAD's address, aligned down to Align: where the image
  /// starts.
  uint64_t Start = 0;
  llvm::StringMap<size_t> ByName;
  /// Function symbols (address, size) by name.
  llvm::StringMap<std::pair<uint64_t, uint64_t>> Functions;
  /// Variables the host can reach (exported STT_OBJECT other than kernel
  /// descriptors, HIP's translation-unit markers and its empty constant
  /// __HIP_Coordinates<...>::x/y/z).
  std::vector<std::string> Variables;

private:
  /// The analyses of Kernels (kept: the result may refer to them).
  AnalysisManager AM;
  std::string SHA256;
  mutable std::once_flag MD5Once;
  mutable std::string MD5;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_SWAPREPLACEMENT_H
