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

/// Bytes that go at Offset of the output.
struct OutputPiece {
  uint64_t Offset = 0;
  llvm::ArrayRef<uint8_t> Bytes;
};

/// What an output holds besides a prefix of its input: pieces in order
/// (where two overlap, the later wins). The pieces point into the model
/// (section contents), its Layout (rebuilt tables) or Headers, so they live
/// no longer than those.
struct OutputPieces {
  std::vector<OutputPiece> Pieces;
  /// The ELF header and header tables the pieces point into.
  std::vector<uint8_t> Headers;

  /// Copies every piece into \p Out, which must hold them all.
  void applyTo(llvm::MutableArrayRef<uint8_t> Out) const;
};

/// Renders \p Obj into \p Out, which must be \p L.FileSize bytes.
void writeObject(const Object &Obj, const Layout &L,
                 llvm::MutableArrayRef<uint8_t> Out);

/// Everything of \p Obj that is not the input's first \p L.BaseLength bytes,
/// as pieces to write over them (with zeros everywhere else): the way to
/// write an output without holding it in memory (see OutputFile.h). Only the
/// headers are rendered; section contents are referred to where they are.
OutputPieces renderPieces(const Object &Obj, const Layout &L);

/// Lays \p Obj out once and renders it into a new buffer.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
writeObjectToBuffer(const Object &Obj);

} // namespace hotswap

#endif // HOTSWAP_OBJECT_WRITER_H
