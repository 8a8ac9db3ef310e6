//===- hotswap/Object/Reader.h - Validating ELF reader ----------*- C++ -*-===//
//
// Builds an Object from the bytes of an AMDGPU code object. Every offset,
// size, count, index and link read from the file is range-checked with
// overflow-safe arithmetic before use; any problem is one llvm::Error with a
// precise message. A misaligned section header table is accepted (fields are
// read with unaligned little-endian loads) so realign-shdrs can repair it.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_READER_H
#define HOTSWAP_OBJECT_READER_H

#include "hotswap/Object/Object.h"

namespace hotswap {

/// Parses \p Buffer. The object borrows the buffer's bytes: the buffer must
/// outlive it (see readObjectOwning).
llvm::Expected<std::unique_ptr<Object>> readObject(llvm::MemoryBufferRef Buffer);

/// Parses \p Buffer and keeps it alive inside the object.
llvm::Expected<std::unique_ptr<Object>>
readObject(std::unique_ptr<llvm::MemoryBuffer> Buffer);

} // namespace hotswap

#endif // HOTSWAP_OBJECT_READER_H
