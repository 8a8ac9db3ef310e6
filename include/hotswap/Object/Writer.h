//===- hotswap/Object/Writer.h - Serialization ------------------*- C++ -*-===//
//
// The second of the writer's two phases: renders an Object into bytes along
// the Layout computed for it (Layout.h). Pure: it reads the model and the
// input bytes the model was read from (Object::input()), and opens no file;
// writing to a path goes through OutputFile.h.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_WRITER_H
#define HOTSWAP_OBJECT_WRITER_H

#include "hotswap/Object/Layout.h"

namespace hotswap {

/// A range of output bytes.
struct ByteRange {
  uint64_t Offset = 0;
  uint64_t Size = 0;
};

/// Renders \p Obj into \p Out, which must be \p L.FileSize bytes.
void writeObject(const Object &Obj, const Layout &L,
                 llvm::MutableArrayRef<uint8_t> Out);

/// Renders only what differs from the input's first \p L.BaseLength bytes:
/// \p Out must already hold those bytes, and zeros after them, in every range
/// not returned (e.g. copied there by the kernel; see OutputFile.h). The
/// bytes outside the returned ranges are left untouched (and, in a freshly
/// mapped buffer, never faulted in).
std::vector<ByteRange> writeObjectOverBase(const Object &Obj, const Layout &L,
                                           llvm::MutableArrayRef<uint8_t> Out);

/// Lays \p Obj out once and renders it into a new buffer.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
writeObjectToBuffer(const Object &Obj);

} // namespace hotswap

#endif // HOTSWAP_OBJECT_WRITER_H
