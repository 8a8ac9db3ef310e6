//===- hotswap/Object/Reader.h - Validating ELF reader ----------*- C++ -*-===//
//
// Builds an Object from the bytes of an AMDGPU code object (or, when asked
// with ReadOptions::AllowHost, of an x86-64 host executable or shared
// library: a HIP fat binary, see Bundle/HostBinary.h). Every offset,
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

/// What the reader accepts besides AMDGPU code objects.
struct ReadOptions {
  /// Also accept e_machine EM_X86_64 (HIP host executables and shared
  /// libraries), validated like code objects. Off by default: a code-object
  /// read refuses x86-64 with a hint at 'llvm-objdump --offloading'.
  bool AllowHost = false;
};

/// Parses \p Buffer. The object borrows the buffer's bytes: the buffer must
/// outlive it (see the overload below).
llvm::Expected<std::unique_ptr<Object>>
readObject(llvm::MemoryBufferRef Buffer, const ReadOptions &Opts = {});

/// Parses \p Buffer and keeps it alive inside the object.
llvm::Expected<std::unique_ptr<Object>>
readObject(std::unique_ptr<llvm::MemoryBuffer> Buffer,
           const ReadOptions &Opts = {});

} // namespace hotswap

#endif // HOTSWAP_OBJECT_READER_H
