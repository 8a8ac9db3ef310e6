//===- lib/Object/PieceWriter.cpp - Pieces into a file --------------------===//
//
// One thread writes: ext4 (and most file systems) serialise writes to one
// file on its inode lock, so two threads writing parts of one output spin on
// it (measured: no faster, 40% more system time).
//
//===----------------------------------------------------------------------===//

#include "PieceWriter.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/ReleaseBatch.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

using namespace llvm;
using namespace hotswap;

Error hotswap::errnoError(int E) {
  return makeError(std::error_code(E, std::generic_category()).message());
}

Error hotswap::writeAll(int FD, ArrayRef<uint8_t> Bytes, int64_t Offset) {
  uint64_t Done = 0;
  while (Done < Bytes.size()) {
    // At most 1 GiB per call: Linux writes at most 0x7ffff000 bytes anyway.
    size_t Chunk = std::min<uint64_t>(Bytes.size() - Done, uint64_t(1) << 30);
    ssize_t N = Offset < 0 ? ::write(FD, Bytes.data() + Done, Chunk)
                           : ::pwrite(FD, Bytes.data() + Done, Chunk,
                                      static_cast<off_t>(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return errnoError(N < 0 ? errno : EIO);
    Done += static_cast<uint64_t>(N);
  }
  return Error::success();
}

int hotswap::zeroRange(int FD, uint64_t Offset, uint64_t Length) {
  if (Length == 0)
    return 0;
  // A hole where the file system makes one (the bytes read as zeros and
  // take no disk blocks), else zeros written.
  if (::fallocate(FD, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  static_cast<off_t>(Offset), static_cast<off_t>(Length)) == 0)
    return 0;
  static const uint8_t Zeros[64 * 1024] = {};
  for (uint64_t Done = 0; Done < Length;) {
    const uint64_t N = std::min<uint64_t>(Length - Done, sizeof(Zeros));
    if (Error E = writeAll(FD, ArrayRef(Zeros, N), int64_t(Offset + Done))) {
      consumeError(std::move(E));
      return errno ? errno : EIO;
    }
    Done += N;
  }
  return 0;
}

int hotswap::copyRange(int InFD, uint64_t From, int OutFD, uint64_t To,
                       uint64_t Length, uint64_t &Done) {
  loff_t InOff = static_cast<loff_t>(From), OutOff = static_cast<loff_t>(To);
  // The source's holes stay holes (a rewritten library's old bundles):
  // copy_file_range would store their zeros. Where the file system cannot
  // say (EINVAL, ENOSYS...), everything is data.
  bool Seek = true;
  for (uint64_t Copied = 0; Copied < Length;) {
    uint64_t Chunk = Length - Copied;
    if (Seek) {
      off_t Data = ::lseek(InFD, InOff, SEEK_DATA);
      if (Data < 0 && errno == ENXIO) // a hole up to the end of the file
        Data = static_cast<off_t>(InOff + Chunk);
      if (Data < 0) {
        Seek = false;
      } else if (Data > InOff) {
        const uint64_t Hole =
            std::min<uint64_t>(static_cast<uint64_t>(Data - InOff), Chunk);
        if (int E = zeroRange(OutFD, static_cast<uint64_t>(OutOff), Hole))
          return E;
        InOff += Hole;
        OutOff += Hole;
        Copied += Hole;
        Done += Hole;
        continue;
      } else {
        const off_t End = ::lseek(InFD, InOff, SEEK_HOLE);
        if (End > InOff)
          Chunk = std::min<uint64_t>(Chunk, static_cast<uint64_t>(End - InOff));
      }
    }
    ssize_t N = ::copy_file_range(InFD, &InOff, OutFD, &OutOff, Chunk, 0);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return N < 0 ? errno : EIO;
    Copied += static_cast<uint64_t>(N);
    Done += static_cast<uint64_t>(N);
  }
  return 0;
}

bool hotswap::kernelRefusesCopy(int E) {
  return E == ENOSYS || E == EXDEV || E == EINVAL || E == EOPNOTSUPP;
}

namespace {

/// copyRange when nothing stopped it; false when the kernel refused before
/// anything was copied (the caller writes the bytes itself).
Expected<bool> copyInKernel(int InFD, uint64_t From, int OutFD, uint64_t To,
                            uint64_t Length) {
  uint64_t Done = 0;
  const int E = copyRange(InFD, From, OutFD, To, Length, Done);
  if (E == 0)
    return true;
  if (Done == 0 && kernelRefusesCopy(E))
    return false;
  return errnoError(E);
}

/// Writes byte ranges at their offsets of a file, in order, gathering small
/// ones that follow each other into one write: a library's provenance
/// records are ~90 000 pieces of one or two bytes (original bytes of edited
/// fields), and a system call each made writing them cost more than
/// copying the gigabytes around them.
class Gatherer {
public:
  explicit Gatherer(int FD) : FD(FD) {}

  /// Ranges are gathered below this; larger ones written directly (and
  /// copied in the kernel from this size when they are the input's).
  static constexpr size_t SmallPiece = 64 * 1024;

  Error write(uint64_t Offset, ArrayRef<uint8_t> Bytes) {
    if (Bytes.size() < SmallPiece) {
      if (!Gathered.empty() && (Offset != GatheredAt + Gathered.size() ||
                                Gathered.size() + Bytes.size() > GatherLimit))
        if (Error E = flush())
          return E;
      if (Gathered.empty())
        GatheredAt = Offset;
      Gathered.insert(Gathered.end(), Bytes.begin(), Bytes.end());
      return Error::success();
    }
    if (Error E = flush())
      return E;
    return writeAll(FD, Bytes, static_cast<int64_t>(Offset));
  }

  /// Writes what is gathered (before anything else reaches the file, so
  /// that a later range still wins where two overlap).
  Error flush() {
    if (Gathered.empty())
      return Error::success();
    Error E = writeAll(FD, Gathered, static_cast<int64_t>(GatheredAt));
    Gathered.clear();
    return E;
  }

private:
  static constexpr size_t GatherLimit = 1024 * 1024;
  int FD;
  std::vector<uint8_t> Gathered;
  uint64_t GatheredAt = 0;
};

/// Zeros \p Length bytes at \p Offset of \p FD (a hole where it can be).
Error writeZeros(int FD, uint64_t Offset, uint64_t Length) {
  if (int E = zeroRange(FD, Offset, Length))
    return errnoError(E);
  return Error::success();
}

/// Whether \p P is bytes of \p Source that the kernel may copy.
bool copiable(const OutputPiece &P, const InputFile *Source) {
  if (!Source || !Source->descriptor() || !P.InputOffset)
    return false;
  ArrayRef<uint8_t> In = Source->bytes();
  return *P.InputOffset <= In.size() &&
         P.Bytes.size() <= In.size() - *P.InputOffset &&
         P.Bytes.data() == In.data() + *P.InputOffset;
}

/// Where the image \p Pieces goes over a file that holds its source's first
/// \p Head bytes: the leading pieces that are the source's bytes at their
/// own offsets, in increasing order (the input's bytes, split around the
/// holes a host's old bundles leave), lose what is there already; what the
/// file holds beyond them below Head is zeroed first, as holes (the pieces
/// after them are written over that).
Error skipHead(int FD, std::vector<OutputPiece> &Pieces,
               const InputFile *Source, uint64_t Head) {
  uint64_t Pos = 0;
  for (OutputPiece &P : Pieces) {
    if (!P.InputOffset || *P.InputOffset != P.Offset || P.Offset < Pos ||
        P.Offset >= Head || !copiable(P, Source))
      break;
    if (Error E = writeZeros(FD, Pos, P.Offset - Pos))
      return E;
    const uint64_t Kept = std::min<uint64_t>(P.Bytes.size(), Head - P.Offset);
    Pos = P.Offset + Kept;
    P.Offset += Kept;
    P.InputOffset = *P.InputOffset + Kept;
    P.Bytes = P.Bytes.drop_front(Kept);
  }
  return writeZeros(FD, Pos, Head - Pos);
}

/// The pages of the source's mapping that pieces written from memory read,
/// handed back behind them (ReleaseBatch.h): where the page cache holds the
/// file in 2 MiB folios, the few bytes each of a library's code objects has
/// among its pieces would otherwise map most of the library (650 MiB of
/// librocsparse.so.0.1's 1.25 GB).
class SourcePages {
public:
  explicit SourcePages(const InputFile *Source)
      : Source(Source && Source->worthReleasing() ? Source : nullptr),
        Batch(this->Source ? ReleaseBatch::ReleaseFn(
                                 [S = this->Source](ArrayRef<uint8_t> B) {
                                   S->release(B);
                                 })
                           : ReleaseBatch::ReleaseFn()) {}

  void read(const OutputPiece &P) {
    if (Source && P.InputOffset && P.Bytes.data() != nullptr &&
        P.Bytes.data() == Source->bytes().data() + *P.InputOffset)
      Batch.add(P.Bytes);
  }
  void release() { Batch.flush(); }

private:
  const InputFile *Source;
  ReleaseBatch Batch;
};

} // namespace

Error hotswap::writePieces(int FD, OutputPieces Pieces,
                           const std::function<void()> &BeforeLate,
                           const InputFile *Source, uint64_t Head,
                           bool &Copied) {
  if (Head != 0)
    if (Error E = skipHead(FD, Pieces.Pieces, Source, Head))
      return E;
  bool KernelRefuses = false;
  bool LateReady = !BeforeLate;
  Gatherer Out(FD);
  SourcePages Read(Source);
  for (const OutputPiece &P : Pieces.Pieces) {
    if (P.Late && !LateReady) {
      if (Error E = Out.flush())
        return E;
      BeforeLate();
      LateReady = true;
    }
    if (P.Bytes.empty())
      continue;
    if (!KernelRefuses && P.Bytes.size() >= Gatherer::SmallPiece &&
        copiable(P, Source)) {
      if (Error E = Out.flush())
        return E;
      if (!Copied)
        if (Error E = Source->checkUnchanged())
          return E;
      Expected<bool> C = copyInKernel(*Source->descriptor(), *P.InputOffset, FD,
                                      P.Offset, P.Bytes.size());
      if (!C)
        return C.takeError();
      if (*C) {
        Copied = true;
        continue;
      }
      KernelRefuses = true; // (then from memory, as every other piece)
    }
    if (Error E = Out.write(P.Offset, P.Bytes)) // (copied, or written)
      return E;
    Read.read(P);
  }
  Read.release();
  return Out.flush();
}
