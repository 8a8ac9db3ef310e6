//===- lib/Object/OutputFile.cpp - Atomic file output ---------------------===//
//
// Everything is written with write(2)/pwrite(2) (or copied by the kernel),
// never through a shared mapping of the output: a mapping faults (SIGBUS)
// when the file system runs out of space, a write returns ENOSPC, which
// becomes the run's error.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Object/OutputFile.h"

#include "hotswap/Support/Error.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <vector>

using namespace llvm;
using namespace hotswap;

namespace {

Error errnoError(int E) {
  return makeError(std::error_code(E, std::generic_category()).message());
}

/// Writes all of \p Bytes at \p Offset of \p FD (or, with Offset < 0, at
/// its current position).
Error writeAll(int FD, ArrayRef<uint8_t> Bytes, int64_t Offset) {
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

/// The file \p Path leads to through symbolic links (a link is followed,
/// never replaced); the path itself when it is not a link or does not
/// exist. The file at the end need not exist (a dangling link is written
/// through, as cp does).
Expected<std::string> followLinks(StringRef Path) {
  std::string Cur = Path.str();
  for (unsigned Hops = 0; Hops <= 40; ++Hops) {
    struct stat St;
    if (::lstat(Cur.c_str(), &St) != 0 || !S_ISLNK(St.st_mode))
      return Cur;
    char Buf[PATH_MAX];
    ssize_t N = ::readlink(Cur.c_str(), Buf, sizeof(Buf));
    if (N < 0)
      return errnoError(errno);
    if (static_cast<size_t>(N) >= sizeof(Buf))
      return errnoError(ENAMETOOLONG);
    StringRef Target(Buf, static_cast<size_t>(N));
    if (sys::path::is_absolute(Target)) {
      Cur = Target.str();
    } else {
      SmallString<256> P(sys::path::parent_path(Cur));
      sys::path::append(P, Target);
      Cur = std::string(P);
    }
  }
  return errnoError(ELOOP);
}

/// Gives \p FD (a new file) what the file \p Like has besides its bytes:
/// owner and group (when permitted), extended attributes (where the file
/// systems have them; best effort), then the mode, set-user-ID, set-group-ID
/// and sticky bits included (after chown, which clears them).
Error copyAttributes(int FD, const std::string &Like, const struct stat &St) {
  struct stat Now;
  if (::fstat(FD, &Now) != 0)
    return errnoError(errno);
  if ((Now.st_uid != St.st_uid || Now.st_gid != St.st_gid) &&
      ::fchown(FD, St.st_uid, St.st_gid) != 0 && errno != EPERM &&
      errno != EINVAL)
    return errnoError(errno);

  ssize_t ListSize = ::listxattr(Like.c_str(), nullptr, 0);
  if (ListSize > 0) {
    std::vector<char> Names(static_cast<size_t>(ListSize));
    ListSize = ::listxattr(Like.c_str(), Names.data(), Names.size());
    for (ssize_t I = 0; ListSize > 0 && I < ListSize;) {
      const char *Name = Names.data() + I;
      I += static_cast<ssize_t>(strlen(Name)) + 1;
      ssize_t Size = ::getxattr(Like.c_str(), Name, nullptr, 0);
      if (Size < 0)
        continue;
      std::vector<char> Value(static_cast<size_t>(Size));
      Size = ::getxattr(Like.c_str(), Name, Value.data(), Value.size());
      if (Size >= 0)
        (void)::fsetxattr(FD, Name, Value.data(), static_cast<size_t>(Size), 0);
    }
  }
  if (::fchmod(FD, St.st_mode & 07777) != 0)
    return errnoError(errno);
  return Error::success();
}

/// A temporary file next to the file it will replace: removed when this
/// goes away unless kept, and on SIGINT/SIGTERM/... meanwhile.
class TempFile {
public:
  static Expected<TempFile> create(const std::string &Target, unsigned Mode) {
    TempFile T;
    // No signal between creating the file and registering it for removal:
    // one that arrives meanwhile is delivered after (and removes it).
    sigset_t All, Old;
    sigfillset(&All);
    pthread_sigmask(SIG_BLOCK, &All, &Old);
    std::error_code EC = sys::fs::createUniqueFile(
        Target + ".tmp%%%%%%%", T.FD, T.Path, sys::fs::OF_None, Mode);
    if (!EC)
      sys::RemoveFileOnSignal(T.Path);
    pthread_sigmask(SIG_SETMASK, &Old, nullptr);
    if (EC) {
      T.Path.clear();
      return makeError(EC.message());
    }
    return std::move(T);
  }
  TempFile(TempFile &&O) : FD(O.FD), Path(std::move(O.Path)) {
    O.FD = -1;
    O.Path.clear();
  }
  ~TempFile() {
    if (FD >= 0)
      sys::Process::SafelyCloseFileDescriptor(FD);
    if (!Path.empty()) {
      sys::fs::remove(Path);
      sys::DontRemoveFileOnSignal(Path);
    }
  }
  int fd() const { return FD; }
  /// Closes the file and renames it over \p Target.
  Error keepAs(const std::string &Target) {
    int F = FD;
    FD = -1;
    if (std::error_code EC = sys::Process::SafelyCloseFileDescriptor(F))
      return makeError(EC.message());
    if (std::error_code EC = sys::fs::rename(Path, Target))
      return makeError(EC.message());
    sys::DontRemoveFileOnSignal(Path);
    Path.clear();
    return Error::success();
  }

private:
  TempFile() = default;
  int FD = -1;
  SmallString<128> Path;
};

/// Copies \p Length bytes at \p From of \p InFD to \p To of \p OutFD in
/// the kernel. False when the system refuses before anything was copied
/// (another file system, an old kernel): the caller writes them itself.
Expected<bool> copyInKernel(int InFD, uint64_t From, int OutFD, uint64_t To,
                            uint64_t Length) {
  loff_t InOff = static_cast<loff_t>(From), OutOff = static_cast<loff_t>(To);
  uint64_t Done = 0;
  while (Done < Length) {
    ssize_t N =
        ::copy_file_range(InFD, &InOff, OutFD, &OutOff, Length - Done, 0);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      if (N < 0 && Done == 0 &&
          (errno == ENOSYS || errno == EXDEV || errno == EINVAL ||
           errno == EOPNOTSUPP))
        return false;
      return errnoError(N < 0 ? errno : EIO);
    }
    Done += static_cast<uint64_t>(N);
  }
  return true;
}

/// Writes pieces at their offsets of a file, in order, gathering small
/// pieces that follow each other into one write: a library's provenance
/// records are ~90 000 pieces of one or two bytes (original bytes of edited
/// fields), and a system call each made writing them cost more than
/// copying the gigabytes around them.
class PieceWriter {
public:
  explicit PieceWriter(int FD) : FD(FD) {}

  /// Small pieces are gathered below this; larger ones written directly.
  static constexpr size_t SmallPiece = 64 * 1024;

  Error write(const OutputPiece &P) {
    if (P.Bytes.size() < SmallPiece) {
      if (!Gathered.empty() && (P.Offset != GatheredAt + Gathered.size() ||
                                Gathered.size() + P.Bytes.size() > GatherLimit))
        if (Error E = flush())
          return E;
      if (Gathered.empty())
        GatheredAt = P.Offset;
      Gathered.insert(Gathered.end(), P.Bytes.begin(), P.Bytes.end());
      return Error::success();
    }
    if (Error E = flush())
      return E;
    return writeAll(FD, P.Bytes, static_cast<int64_t>(P.Offset));
  }

  /// Writes what is gathered (before anything else reaches the file, so
  /// that a later piece still wins where two overlap).
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

/// Writes every piece of \p Image at its offset of \p FD: large input
/// pieces of \p Source copied in the kernel while it accepts to (\p Copied
/// says whether any was), the rest from memory.
Error writePieces(int FD, const OutputImage &Image, const InputFile *Source,
                  bool &Copied) {
  const OutputPieces Pieces = Image.Pieces();
  const bool CanCopy = Source && Source->descriptor();
  bool KernelRefuses = false;
  bool LateReady = !Image.BeforeLate;
  PieceWriter Out(FD);
  for (const OutputPiece &P : Pieces.Pieces) {
    if (P.Late && !LateReady) {
      if (Error E = Out.flush())
        return E;
      Image.BeforeLate();
      LateReady = true;
    }
    if (P.Bytes.empty())
      continue;
    const bool FromSource =
        CanCopy && !KernelRefuses && P.InputOffset &&
        P.Bytes.size() >= PieceWriter::SmallPiece &&
        *P.InputOffset <= Source->bytes().size() &&
        P.Bytes.size() <= Source->bytes().size() - *P.InputOffset &&
        P.Bytes.data() == Source->bytes().data() + *P.InputOffset;
    if (FromSource) {
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
      KernelRefuses = true;
    }
    if (Error E = Out.write(P))
      return E;
  }
  return Out.flush();
}

/// Renders the whole image in memory and writes it to \p FD from its
/// current position: for destinations that cannot seek (standard output, a
/// FIFO, a device).
Error writeStream(int FD, const OutputImage &Image) {
  std::unique_ptr<WritableMemoryBuffer> Buf =
      WritableMemoryBuffer::getNewUninitMemBuffer(Image.Size);
  if (!Buf)
    return makeError("cannot allocate " + Twine(Image.Size) +
                     " bytes for the output");
  MutableArrayRef<uint8_t> Out(
      reinterpret_cast<uint8_t *>(Buf->getBufferStart()), Image.Size);
  Image.renderInto(Out);
  return writeAll(FD, Out, -1);
}

/// A destination that exists and is not a regular file: written to, never
/// replaced (renaming over /dev/null would replace the system's).
Error writeInPlace(StringRef Path, const OutputImage &Image) {
  int FD = ::open(Path.str().c_str(), O_WRONLY | O_CLOEXEC);
  if (FD < 0)
    return errnoError(errno);
  auto Close = make_scope_exit([&] { ::close(FD); });
  return writeStream(FD, Image);
}

} // namespace

void OutputImage::renderInto(MutableArrayRef<uint8_t> Out) const {
  // (An empty output may have no storage at all: memset of null is
  // undefined even for 0 bytes.)
  if (!Out.empty())
    memset(Out.data(), 0, Out.size());
  if (BeforeLate)
    BeforeLate();
  Pieces().applyTo(Out);
}

Error hotswap::writeFileAtomically(StringRef Path, const OutputImage &Image,
                                   const InputFile *Source) {
  if (Path == "-")
    return writeStream(STDOUT_FILENO, Image);

  Expected<std::string> Target = followLinks(Path);
  if (!Target)
    return Target.takeError();
  struct stat Dest;
  bool Exists = ::stat(Target->c_str(), &Dest) == 0;
  if (Exists && !S_ISREG(Dest.st_mode))
    return writeInPlace(*Target, Image);

  // A new file gets the input's permission bits (as llvm-objcopy does; the
  // umask applies), an existing one keeps its own. The temporary has them
  // from the start, never more.
  unsigned Mode = sys::fs::all_read | sys::fs::all_write | sys::fs::all_exe;
  if (Exists)
    Mode = Dest.st_mode & 0777;
  else if (Source && Source->permissions())
    Mode = *Source->permissions() & 0777;
  Expected<TempFile> Tmp = TempFile::create(*Target, Mode);
  if (!Tmp)
    return Tmp.takeError();
  const int FD = Tmp->fd();
  if (std::error_code EC = sys::fs::resize_file(FD, Image.Size))
    return makeError(EC.message());

  // Piece by piece, from where each lies: the input's file (in the kernel)
  // or memory. The file is zeros where no piece goes.
  bool Copied = false;
  if (Error E = writePieces(FD, Image, Source, Copied))
    return E;
  if (Exists)
    if (Error E = copyAttributes(FD, *Target, Dest))
      return E;
  // Copies came from the descriptor: make sure the file did not change
  // while they were made.
  if (Copied)
    if (Error E = Source->checkUnchanged())
      return E;
  return Tmp->keepAs(*Target);
}

Error hotswap::writeObjectToFile(const Object &Obj, const Layout &L,
                                 StringRef Path, const InputFile *Source) {
  OutputImage Image;
  Image.Size = L.FileSize;
  Image.Pieces = [&] { return renderPieces(Obj, L); };
  return writeFileAtomically(Path, Image, Source);
}

Error hotswap::writeObjectToFile(const Object &Obj, StringRef Path,
                                 const InputFile *Source) {
  Expected<Layout> L = computeLayout(Obj);
  if (!L)
    return L.takeError();
  return writeObjectToFile(Obj, *L, Path, Source);
}
