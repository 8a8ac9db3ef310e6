//===- lib/Pipeline/BundleStream.h - Bundles written early -----*- C++ -*-===//
//
// Private to the Pipeline layer (Hosts.cpp). A host binary's new bundles go
// into one new section, whose place in the output file is known before any
// code object runs (HostBinary::newSectionFileOffset); each bundle's place
// in it follows from the sizes of the changed bundles before it. So, while
// later code objects still run, the bundles whose code objects have all
// ended are laid out and written into the output in order (WriteAheadFn),
// by the thread of the run that ended last, instead of all of them after the
// last run on one thread; their code objects' models are let go once
// written, and the input's pages they lie in handed back (writing a bundle
// reads the small pieces of its code objects' input bytes through the
// input's mapping, which maps 2 MiB at a time where the page cache holds
// the file in huge pages: not handed back, they would make the process
// hold most of a library). A bundle with a code object that failed, and every
// bundle after it, is left to be written with the rest. The bytes are the same
// either way: Hosts.cpp checks the placement against placeBundles() and the
// layout's.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_PIPELINE_BUNDLESTREAM_H
#define HOTSWAP_LIB_PIPELINE_BUNDLESTREAM_H

#include "Rewrite.h"

#include "llvm/ADT/DenseMap.h"

#include <mutex>

namespace hotswap {
namespace pipeline {

class BundleStream {
public:
  /// \p Plans' new bundles go at \p SectionAt of the output, written with
  /// \p Write. Made before the runs start (the runs with an error before
  /// they start are never waited for).
  /// \p Release: PipelineOptions::ReleaseInput, for the input bytes a
  /// written bundle's pieces were read from.
  BundleStream(std::vector<BundlePlan> &Plans, uint64_t SectionAt,
               WriteAheadFn Write,
               std::function<void(llvm::ArrayRef<uint8_t>)> Release);

  /// Called as each run ends (runCodeObjects' Ended), on its thread.
  void ended(const CodeObjectRun &Run);

  /// After the runs: how many bundles, from the first, were settled (each
  /// written, or found unchanged), and for each that changed its size and
  /// offset in the new section. Then, the error that stopped them, if any.
  size_t settled() const { return Settled; }
  std::optional<uint64_t> size(size_t Bundle) const { return Sizes[Bundle]; }
  std::optional<uint64_t> offset(size_t Bundle) const {
    return Offsets[Bundle];
  }
  /// Why restore would not give a written bundle's input back from it
  /// (NewBundle::NotRestorable).
  const std::optional<std::string> &notRestorable(size_t Bundle) const {
    return NotRestorable[Bundle];
  }
  llvm::Error takeError() { return std::move(Err); }
  uint64_t sectionAt() const { return SectionAt; }

private:
  /// Lays out and writes bundle \p B; false when it is left to the end.
  bool settle(size_t B);

  std::vector<BundlePlan> &Plans;
  const uint64_t SectionAt;
  const WriteAheadFn Write;
  const std::function<void(llvm::ArrayRef<uint8_t>)> Release;
  llvm::DenseMap<const CodeObjectRun *, size_t> BundleOf;

  std::mutex Lock;
  std::vector<size_t> Left; // runs of each bundle yet to end
  size_t Settled = 0;
  bool Writing = false, Stopped = false;
  // Written by the one thread writing (Writing).
  uint64_t Placed = 0; // bytes of the new section so far
  std::vector<std::optional<uint64_t>> Sizes, Offsets;
  std::vector<std::optional<std::string>> NotRestorable;
  llvm::Error Err = llvm::Error::success();
};

} // namespace pipeline
} // namespace hotswap

#endif
