//===- hotswap/Support/Record.h - Records inside bytes ----------*- C++ -*-===//
//
// A record of a file format (LLVM's ELF record types, object::ELF64LE::Ehdr,
// Shdr, Rela, Dyn, Nhdr, ...) seen where it lies in a byte buffer. The
// types are made of little-endian fields of alignment 1, so a record may sit
// at any offset; the caller checks that the whole record lies inside the
// bytes, with overflow-safe arithmetic, before it asks for it.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_SUPPORT_RECORD_H
#define HOTSWAP_SUPPORT_RECORD_H

#include "llvm/ADT/ArrayRef.h"

#include <cassert>
#include <cstdint>

namespace hotswap {

/// The record of type T at \p Off of \p B; the caller checked it is inside.
template <typename T>
const T &recordAt(llvm::ArrayRef<uint8_t> B, uint64_t Off) {
  static_assert(alignof(T) == 1, "records may sit at any offset");
  assert(Off <= B.size() && sizeof(T) <= B.size() - Off);
  return *reinterpret_cast<const T *>(B.data() + Off);
}

/// The record of type T at \p Off of \p B, to write; the caller checked it is
/// inside.
template <typename T>
T &mutableRecordAt(llvm::MutableArrayRef<uint8_t> B, uint64_t Off) {
  static_assert(alignof(T) == 1, "records may sit at any offset");
  assert(Off <= B.size() && sizeof(T) <= B.size() - Off);
  return *reinterpret_cast<T *>(B.data() + Off);
}

} // namespace hotswap

#endif // HOTSWAP_SUPPORT_RECORD_H
