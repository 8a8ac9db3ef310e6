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

#include <optional>

namespace hotswap {

/// Bytes that go at Offset of the output.
struct OutputPiece {
  uint64_t Offset = 0;
  llvm::ArrayRef<uint8_t> Bytes;
  /// Set when Bytes are bytes of the input, at this offset of it: a writer
  /// with the input's file at hand copies them in the kernel instead.
  std::optional<uint64_t> InputOffset;
  /// Bytes that are final only once OutputImage::BeforeLate has run (a
  /// digest still being computed while the rest is written).
  bool Late = false;
};

/// An output as pieces over a file of zeros, in order (where two overlap,
/// the later wins). The pieces point into the model (section contents), its
/// Layout (rebuilt tables), the input, or Owned, so they live no longer
/// than those.
struct OutputPieces {
  std::vector<OutputPiece> Pieces;
  /// Buffers pieces point into (the ELF headers, ...).
  std::vector<std::vector<uint8_t>> Owned;

  /// Copies every piece into \p Out, which must hold them all (and be zero
  /// where none goes).
  void applyTo(llvm::MutableArrayRef<uint8_t> Out) const;
  /// Adds \p Sub's pieces placed at \p At of this output, taking its owned
  /// buffers; \p SubInputAt is where Sub's input lies in this output's
  /// input (nullopt: it is not part of it, so its input pieces are plain
  /// bytes here).
  void append(OutputPieces Sub, uint64_t At,
              std::optional<uint64_t> SubInputAt);
};

/// Renders \p Obj into \p Out, which must be \p L.FileSize bytes.
void writeObject(const Object &Obj, const Layout &L,
                 llvm::MutableArrayRef<uint8_t> Out);

/// \p Obj laid out as \p L, as pieces: the input's first \p L.BaseLength
/// bytes (an input piece at offset 0), then what differs from them. Only
/// the headers are rendered; section contents are referred to where they
/// are. The way to write an output without holding it in memory (see
/// OutputFile.h).
OutputPieces renderPieces(const Object &Obj, const Layout &L);

/// Lays \p Obj out once and renders it into a new buffer.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
writeObjectToBuffer(const Object &Obj);

} // namespace hotswap

#endif // HOTSWAP_OBJECT_WRITER_H
