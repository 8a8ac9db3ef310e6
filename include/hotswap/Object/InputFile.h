//===- hotswap/Object/InputFile.h - An input held open ----------*- C++ -*-===//
//
// The bytes of an input file together with the descriptor they were read
// from and the file's identity at that moment (device, inode, size,
// modification time). Whoever opens an input (the driver, runPipelineOnFile)
// keeps it for the whole run and hands it to the output code, which may then
// copy the bytes the output shares with the input in the kernel
// (copy_file_range) -- from this very descriptor, after checking that the
// file is still what was read. The writer itself never opens an input.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_INPUTFILE_H
#define HOTSWAP_OBJECT_INPUTFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem/UniqueID.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>

namespace hotswap {

/// The bytes of \p Path, a file that must be regular (a code object or
/// other file a pass reads, e.g. swap-kernels' replacement): anything else
/// (a FIFO, a device, a directory) is refused before a byte is read and
/// without waiting for a FIFO's writer.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readRegularFile(llvm::StringRef Path);

class InputFile {
public:
  /// Opens \p Path ("-" reads standard input, which has no descriptor to
  /// copy from) and reads its bytes (mapped when large). A pipe or device
  /// (standard input included) is read to its end, but refused once its
  /// first StreamProbeBytes are not the start of an ELF file or an offload
  /// bundle (plain or compressed), or once it passes MaxStreamBytes: no
  /// endless read of /dev/zero.
  static llvm::Expected<InputFile> open(llvm::StringRef Path);
  static constexpr uint64_t StreamProbeBytes = 64u << 10;
  static constexpr uint64_t MaxStreamBytes = uint64_t(4) << 30;

  InputFile(InputFile &&Other);
  InputFile &operator=(InputFile &&Other);
  ~InputFile();

  llvm::MemoryBufferRef buffer() const { return Buffer->getMemBufferRef(); }
  llvm::ArrayRef<uint8_t> bytes() const {
    return llvm::ArrayRef(
        reinterpret_cast<const uint8_t *>(Buffer->getBufferStart()),
        Buffer->getBufferSize());
  }
  /// The descriptor the bytes were read from, when it is a regular file
  /// that can serve as a copy source.
  std::optional<int> descriptor() const {
    return FD >= 0 ? std::optional<int>(FD) : std::nullopt;
  }
  /// Error unless the file behind descriptor() still has the identity it
  /// had when it was read (so its bytes are the ones the model holds).
  llvm::Error checkUnchanged() const;
  /// The file's mode bits (st_mode & 07777) when it is a regular file.
  std::optional<unsigned> permissions() const {
    return FD >= 0 ? std::optional<unsigned>(Mode) : std::nullopt;
  }
  /// Drops the pages of \p Bytes (which must lie in bytes()) from this
  /// process's memory when the input is mapped from its file: they are read
  /// again from the file if touched later. Nothing otherwise. Whole 2 MiB
  /// blocks of the file go, around Bytes too: where the page cache holds
  /// the file in 2 MiB folios, Linux maps a whole folio at each touch
  /// (whatever madvise says), so a read of a few bytes holds 2 MiB, which
  /// pages inside Bytes alone would not give back.
  void release(llvm::ArrayRef<uint8_t> Bytes) const;
  /// Whether release() is worth calling as bytes are done with: the input
  /// is mapped and of ReleaseFrom bytes or more. A smaller one's pages go
  /// when it is closed, at no cost; releasing them as they are read costs a
  /// madvise call and a TLB shootdown each (4% of the CPU time of a run over
  /// librocsparse0's 777 objects).
  bool worthReleasing() const;
  static constexpr uint64_t ReleaseFrom = 32u << 20;
  /// Gives up ownership of the buffer (the descriptor is closed).
  std::unique_ptr<llvm::MemoryBuffer> takeBuffer();

private:
  InputFile() = default;
  std::unique_ptr<llvm::MemoryBuffer> Buffer;
  int FD = -1;
  llvm::sys::fs::UniqueID ID;
  uint64_t Size = 0;
  llvm::sys::TimePoint<> MTime;
  unsigned Mode = 0;
};

} // namespace hotswap

#endif // HOTSWAP_OBJECT_INPUTFILE_H
