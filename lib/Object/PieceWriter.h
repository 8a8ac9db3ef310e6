//===- lib/Object/PieceWriter.h - Pieces into a file ------------*- C++ -*-===//
//
// Private to the Object layer (OutputFile.cpp): writing an output's pieces
// (Writer.h) at their offsets of a file descriptor. Pieces that are bytes of
// the input file are copied by the kernel (copy_file_range), the rest written
// with pwrite(2), small neighbours gathered into one call.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_OBJECT_PIECEWRITER_H
#define HOTSWAP_LIB_OBJECT_PIECEWRITER_H

#include "hotswap/Object/OutputFile.h"

#include "llvm/Support/Error.h"

namespace hotswap {

/// The error errno \p E names.
llvm::Error errnoError(int E);

/// Writes all of \p Bytes at \p Offset of \p FD (or, with Offset < 0, at
/// its current position).
llvm::Error writeAll(int FD, llvm::ArrayRef<uint8_t> Bytes, int64_t Offset);

/// Zeros \p Length bytes at \p Offset of \p FD, as a hole (no disk blocks)
/// where the file system makes one: 0, or the errno that stopped it.
int zeroRange(int FD, uint64_t Offset, uint64_t Length);

/// Copies \p Length bytes at \p From of \p InFD to \p To of \p OutFD in
/// the kernel (copy_file_range; the source's holes as holes, zeroRange),
/// adding to \p Done what it copied: 0, or the errno that stopped it.
int copyRange(int InFD, uint64_t From, int OutFD, uint64_t To, uint64_t Length,
              uint64_t &Done);

/// Whether errno \p E of copy_file_range means the kernel does not copy
/// between these files (another file system, an old kernel).
bool kernelRefusesCopy(int E);

/// Writes every piece of \p Pieces at its offset of \p FD, a regular file,
/// zeros (holes, zeroRange) where no piece goes within its first \p Head
/// bytes, which are its
/// source's (OutputFile's head copy); beyond them the file already reads
/// as zeros (or holds what was written ahead) where no piece goes. Large
/// input pieces of \p Source are copied in the kernel while it accepts to
/// (\p Copied says whether any was; the source is checked unchanged before
/// the first copy), the rest written from memory, small neighbours in one
/// call. Where pieces overlap, the later wins; pieces marked Late are
/// written after \p BeforeLate ran.
llvm::Error writePieces(int FD, OutputPieces Pieces,
                        const std::function<void()> &BeforeLate,
                        const InputFile *Source, uint64_t Head, bool &Copied);

} // namespace hotswap

#endif // HOTSWAP_LIB_OBJECT_PIECEWRITER_H
