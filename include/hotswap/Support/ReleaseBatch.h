//===- hotswap/Support/ReleaseBatch.h - Hand back read bytes ----*- C++ -*-===//
//
// Reading a large mapped input leaves its pages resident unless they are
// handed back (InputFile::release, PipelineOptions::ReleaseInput), and a
// release frees the whole 2 MiB blocks around what it is given, at the
// price of a system call and a TLB flush. Bytes read as many small spans --
// a code object's bytes and its record's, a bundle's entries -- are
// gathered here first into one window, which is handed back when the next
// span would make it larger than a batch: each block is then given back
// about once, not once per span in it (a gigabyte read in alternating spans
// made 100 000 releases).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_SUPPORT_RELEASEBATCH_H
#define HOTSWAP_SUPPORT_RELEASEBATCH_H

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstdint>
#include <functional>

namespace hotswap {

class ReleaseBatch {
public:
  using ReleaseFn = std::function<void(llvm::ArrayRef<uint8_t>)>;

  /// \p Release may be empty (then nothing is handed back); \p Batch is the
  /// largest window gathered.
  explicit ReleaseBatch(ReleaseFn Release, uint64_t Batch = 64u << 20)
      : Release(std::move(Release)), Batch(Batch) {}
  ReleaseBatch(const ReleaseBatch &) = delete;
  ReleaseBatch &operator=(const ReleaseBatch &) = delete;
  ~ReleaseBatch() { flush(); }

  /// \p Bytes were read (they lie in the mapping Release knows).
  void add(llvm::ArrayRef<uint8_t> Bytes) {
    if (!Release || Bytes.empty())
      return;
    const uint8_t *From = Bytes.data(), *To = Bytes.data() + Bytes.size();
    if (Begin) {
      const uint8_t *B = std::min(Begin, From), *E = std::max(End, To);
      if (uint64_t(E - B) <= Batch) {
        Begin = B;
        End = E;
        return;
      }
      flush();
    }
    Begin = From;
    End = To;
  }

  /// Hands back what is gathered.
  void flush() {
    if (Begin)
      Release(llvm::ArrayRef<uint8_t>(Begin, End));
    Begin = End = nullptr;
  }

private:
  ReleaseFn Release;
  uint64_t Batch;
  const uint8_t *Begin = nullptr, *End = nullptr;
};

} // namespace hotswap

#endif // HOTSWAP_SUPPORT_RELEASEBATCH_H
