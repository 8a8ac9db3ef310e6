//===- hotswap/Object/OutputFile.h - Atomic file output ---------*- C++ -*-===//
//
// Writes a file atomically: into a temporary file next to the destination,
// renamed over it only when everything succeeded. On any error (a full disk
// included: nothing is written through a mapping, so it is ENOSPC, never
// SIGBUS) and on SIGINT/SIGTERM meanwhile, the temporary is removed and the
// destination is neither created nor changed. "-" writes to standard output.
// A destination that exists and is not a regular file (/dev/null, a FIFO, a
// terminal) is written to directly, never replaced.
//
// A destination that is a symbolic link is followed: the file it leads to
// is replaced and the link stays. An existing destination keeps its mode
// (set-user-ID and set-group-ID bits included), its owner and group (when
// the process may set them) and its extended attributes (where the file
// systems have them); the temporary is created with the destination's
// permission bits, never wider. A new file gets the input's permission bits
// (under the umask). Write-and-rename gives the destination a new inode:
// other hard links to the old file keep the old bytes.
//
// An output is pieces (Writer.h): the parts that are bytes of an input the
// caller holds open (InputFile) -- a code object's unchanged prefix, a
// bundle's unchanged entries -- are copied by the kernel from the input's
// descriptor (copy_file_range: no page faults, no copy through this
// process) after checking the input is unchanged; the rest is written piece
// by piece from where it lies in memory (the model's sections, the layout's
// rebuilt tables), so the output is never held in memory whole. Where the
// kernel refuses the copy (another file system) or there is no input file
// (standard input), input pieces are written from memory the same way. Only
// a destination that cannot seek (standard output, a FIFO, a device) gets
// the whole file rendered in memory first.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_OUTPUTFILE_H
#define HOTSWAP_OBJECT_OUTPUTFILE_H

#include "hotswap/Object/InputFile.h"
#include "hotswap/Object/Writer.h"

#include <functional>

namespace hotswap {

/// What to write: Size bytes, zeros where none of the pieces Pieces()
/// returns goes (called once, while the temporary file exists).
struct OutputImage {
  uint64_t Size = 0;
  std::function<OutputPieces()> Pieces;
  /// Called, when set, before the first piece marked Late is written (after
  /// the pieces before it: the input's bytes copied while, say, a digest is
  /// computed on another thread).
  std::function<void()> BeforeLate;

  /// Renders the whole image into \p Out (Size bytes).
  void renderInto(llvm::MutableArrayRef<uint8_t> Out) const;
};

/// Writes \p Image to \p Path atomically (see the file comment). With
/// \p Source, the input pieces that are its bytes (OutputPiece::InputOffset
/// into Source->bytes()) are copied in the kernel from its descriptor.
llvm::Error writeFileAtomically(llvm::StringRef Path, const OutputImage &Image,
                                const InputFile *Source = nullptr);

/// Writes \p Obj, laid out as \p L, to \p Path atomically. \p Source, when
/// given, must be the file \p Obj was read from.
llvm::Error writeObjectToFile(const Object &Obj, const Layout &L,
                              llvm::StringRef Path,
                              const InputFile *Source = nullptr);

/// Lays \p Obj out once, then writes it as above.
llvm::Error writeObjectToFile(const Object &Obj, llvm::StringRef Path,
                              const InputFile *Source = nullptr);

} // namespace hotswap

#endif // HOTSWAP_OBJECT_OUTPUTFILE_H
