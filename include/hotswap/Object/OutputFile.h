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
// the whole file rendered in memory first. A caller that knows early that
// the output begins with the input's bytes may have them copied on a pool
// while it computes the rest (OutputFile::startHeadCopy), and write parts
// it finishes early before the rest (OutputFile::writeAhead).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_OUTPUTFILE_H
#define HOTSWAP_OBJECT_OUTPUTFILE_H

#include "hotswap/Object/InputFile.h"
#include "hotswap/Object/Writer.h"

#include <functional>
#include <memory>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

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

/// An output being written (see the file comment). The temporary exists
/// from create() on, so that bytes known before the rest -- the input's
/// head, which the output of a code object or host binary begins with --
/// can be copied while the caller still computes what follows them.
class OutputFile {
public:
  /// Prepares writing \p Path ("-": standard output). \p Source, when
  /// given, is the file whose bytes the image's input pieces are
  /// (OutputPiece::InputOffset into Source->bytes()): they are copied in the
  /// kernel from its descriptor. Fails when the temporary cannot be made.
  static llvm::Expected<OutputFile> create(llvm::StringRef Path,
                                           const InputFile *Source = nullptr);
  OutputFile(OutputFile &&);
  /// Without commit(): stops the head copy and removes the temporary.
  ~OutputFile();

  /// Starts copying the source's first \p Length bytes to the same offsets
  /// of the temporary, in the kernel, as a task of \p Pool. False (nothing
  /// started) where there is no temporary or source file. commit() then
  /// writes over what the image has elsewhere there: the bytes are the
  /// image's whatever it holds.
  bool startHeadCopy(uint64_t Length, llvm::ThreadPoolInterface &Pool);

  /// Whether writeAhead() may be called: the output is a temporary file.
  bool canWriteAhead() const;
  /// Writes \p Pieces now, on the calling thread (the head copy may run
  /// meanwhile): bytes the caller knows before the rest, beyond the head
  /// (a library's new bundles while later ones are still being made). The
  /// image commit() is given then leaves those bytes out (where none of its
  /// pieces goes beyond the head, the file keeps what is there). At most one
  /// thread at a time. False when the write failed (a full disk): nothing
  /// more is written ahead, and commit() fails with the reason, as it does
  /// for its own writes.
  bool writeAhead(OutputPieces Pieces);

  /// The first part of commit(), for a caller with other work to do while
  /// the Late pieces of \p Image are not final yet (a digest another file's
  /// run may compute along with its own): writes every piece before the
  /// first Late one (all of them when there is none), without calling
  /// BeforeLate. commit(), given the same image, then writes only the rest.
  /// Does nothing for an output that is not a temporary file (standard
  /// output, a device): commit() writes all of it.
  llvm::Error writeUntilLate(const OutputImage &Image);

  /// Writes \p Image (what writeUntilLate() left of it) and puts it in
  /// place of the destination.
  llvm::Error commit(const OutputImage &Image);

private:
  OutputFile();
  struct State;
  std::unique_ptr<State> S;
};

/// The suffix of the temporary an output is written to before it is renamed
/// over its destination (NAME.tmpXXXXXXX, X a random hex digit).
inline constexpr llvm::StringLiteral TemporarySuffix = ".tmp%%%%%%%";

/// Whether \p FileName (no directory) is the name of such a temporary: one
/// this tool is writing (another run's, in the same tree) or one a killed
/// run left behind; never an input.
bool isTemporaryName(llvm::StringRef FileName);

/// OutputFile::create(Path, Source), then commit(Image).
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
