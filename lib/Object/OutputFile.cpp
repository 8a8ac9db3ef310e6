//===- lib/Object/OutputFile.cpp - Atomic file output ---------------------===//
//
// Everything is written with write(2)/pwrite(2) (or copied by the kernel),
// never through a shared mapping of the output: a mapping faults (SIGBUS)
// when the file system runs out of space, a write returns ENOSPC, which
// becomes the run's error.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Object/OutputFile.h"

#include "PieceWriter.h"

#include "hotswap/Support/Error.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/ThreadPool.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <mutex>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <vector>

using namespace llvm;
using namespace hotswap;

namespace {

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

/// LLVM's list of files to remove on a signal orders a registration
/// before its removal with atomics of its own, in LLVM's prebuilt code,
/// which ThreadSanitizer does not see: temporaries of runs on several
/// threads (hotswap-opt's inputs in turn) then read as a race there. Every
/// registration and removal takes this lock, which it does see.
std::mutex &signalListLock() {
  static std::mutex M;
  return M;
}

void removeOnSignal(StringRef Path) {
  std::lock_guard<std::mutex> G(signalListLock());
  sys::RemoveFileOnSignal(Path);
}

void keepOnSignal(StringRef Path) {
  std::lock_guard<std::mutex> G(signalListLock());
  sys::DontRemoveFileOnSignal(Path);
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
        Target + TemporarySuffix, T.FD, T.Path, sys::fs::OF_None, Mode);
    if (!EC)
      removeOnSignal(T.Path);
    pthread_sigmask(SIG_SETMASK, &Old, nullptr);
    if (EC) {
      T.Path.clear();
      // (Named: the output is in it, but it is the directory that refuses.)
      StringRef Dir = sys::path::parent_path(Target);
      return makeError("cannot create a temporary file in the directory '" +
                       (Dir.empty() ? StringRef(".") : Dir) +
                       "': " + EC.message());
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
      keepOnSignal(Path);
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
    keepOnSignal(Path);
    Path.clear();
    return Error::success();
  }

private:
  TempFile() = default;
  int FD = -1;
  SmallString<128> Path;
};

/// Renders the whole image in memory and writes it to \p FD from its
/// current position: for destinations that cannot seek (standard output, a
/// FIFO, a device).
Error writeStream(int FD, const OutputImage &Image) {
  // A window at a time, front to back: zeros where no piece goes, then
  // every piece that reaches into the window, in order (later ones
  // overwrite earlier ones, as renderInto applies them). A stream never
  // holds the whole output in memory (a 1.3 GB library took 2.6 GB).
  if (Image.BeforeLate)
    Image.BeforeLate();
  const OutputPieces P = Image.Pieces();
  constexpr uint64_t Window = 64 << 20;
  std::vector<uint8_t> Buf(std::min<uint64_t>(Window, Image.Size));
  for (uint64_t From = 0; From < Image.Size; From += Window) {
    const uint64_t N = std::min<uint64_t>(Window, Image.Size - From);
    memset(Buf.data(), 0, N);
    for (const OutputPiece &Pc : P.Pieces) {
      const uint64_t B = std::max<uint64_t>(Pc.Offset, From);
      const uint64_t E =
          std::min<uint64_t>(Pc.Offset + Pc.Bytes.size(), From + N);
      if (B < E)
        memcpy(Buf.data() + (B - From), Pc.Bytes.data() + (B - Pc.Offset),
               E - B);
    }
    if (Error E = writeAll(FD, ArrayRef<uint8_t>(Buf.data(), N), -1))
      return E;
  }
  return Error::success();
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
  if (BeforeLate)
    BeforeLate();
  const OutputPieces P = Pieces();
  // Zeros where no piece goes: all but what the first piece covers from
  // offset 0 (usually the whole input), which it is about to overwrite.
  // (An empty output may have no storage at all: memset of null is
  // undefined even for 0 bytes.)
  uint64_t Covered = 0;
  if (!P.Pieces.empty() && P.Pieces[0].Offset == 0)
    Covered = std::min<uint64_t>(P.Pieces[0].Bytes.size(), Out.size());
  if (Covered < Out.size())
    memset(Out.data() + Covered, 0, Out.size() - Covered);
  P.applyTo(Out);
}

/// Where an output goes, and the temporary it is written into first.
struct OutputFile::State {
  enum class Kind { Stdout, Device, Temporary } K = Kind::Temporary;
  std::string Target;
  const InputFile *Source = nullptr;
  /// The destination's status, when it exists.
  std::optional<struct stat> Dest;
  std::optional<TempFile> Tmp;

  /// The head copy: running (Done valid) or finished.
  std::shared_future<void> HeadDone;
  std::atomic<bool> CancelHead{false};
  uint64_t HeadCopied = 0; // (set by the copying task)
  int HeadErrno = 0;
  /// writeAhead() copied from the source; why it failed.
  bool CopiedAhead = false;
  std::optional<Error> AheadFailed;
  /// After writeUntilLate(): the image's pieces, where the part it left
  /// begins, and what commit() needs to know of the part written.
  std::optional<OutputPieces> Started;
  size_t RestFrom = 0;
  uint64_t Head = 0;
  bool Copied = false;

  ~State() {
    CancelHead = true;
    if (HeadDone.valid())
      HeadDone.wait();
    // Never committed: the run failed for a reason of its own, which it
    // reports; that a write ahead failed too adds nothing.
    if (AheadFailed)
      consumeError(std::move(*AheadFailed));
  }

  /// Before the image's pieces are written into the temporary: fails with
  /// what failed ahead; waits for the head copy (setting Head, how much of
  /// the file it holds), and sizes the file to \p Size.
  Error prepare(uint64_t Size) {
    if (AheadFailed) {
      Error E = std::move(*AheadFailed);
      AheadFailed.reset();
      return E;
    }
    if (HeadDone.valid()) {
      HeadDone.wait();
      if (HeadErrno != 0 && !(HeadCopied == 0 && kernelRefusesCopy(HeadErrno)))
        return errnoError(HeadErrno);
      Head = std::min(HeadCopied, Size);
    }
    Copied = Head != 0 || CopiedAhead;
    if (std::error_code EC = sys::fs::resize_file(Tmp->fd(), Size))
      return makeError(EC.message());
    return Error::success();
  }

  /// Copies the source's first \p Length bytes, a slice at a time (so that
  /// a cancelled copy stops soon).
  void copyHead(uint64_t Length) {
    constexpr uint64_t Slice = 64 << 20;
    const int In = *Source->descriptor(), Out = Tmp->fd();
    while (HeadCopied < Length && !CancelHead) {
      const uint64_t N = std::min(Slice, Length - HeadCopied);
      if (int E = copyRange(In, HeadCopied, Out, HeadCopied, N, HeadCopied)) {
        HeadErrno = E;
        return;
      }
    }
  }
};

Expected<OutputFile> OutputFile::create(StringRef Path,
                                        const InputFile *Source) {
  OutputFile F;
  F.S = std::make_unique<State>();
  State &S = *F.S;
  S.Source = Source;
  if (Path == "-") {
    S.K = State::Kind::Stdout;
    return std::move(F);
  }
  Expected<std::string> Target = followLinks(Path);
  if (!Target)
    return Target.takeError();
  S.Target = std::move(*Target);
  struct stat Dest;
  if (::stat(S.Target.c_str(), &Dest) == 0)
    S.Dest = Dest;
  if (S.Dest && !S_ISREG(S.Dest->st_mode)) {
    S.K = State::Kind::Device;
    return std::move(F);
  }
  // A new file gets the input's permission bits (as llvm-objcopy does; the
  // umask applies), an existing one keeps its own. The temporary has them
  // from the start, never more.
  unsigned Mode = sys::fs::all_read | sys::fs::all_write | sys::fs::all_exe;
  if (S.Dest)
    Mode = S.Dest->st_mode & 0777;
  else if (Source && Source->permissions())
    Mode = *Source->permissions() & 0777;
  Expected<TempFile> Tmp = TempFile::create(S.Target, Mode);
  if (!Tmp)
    return Tmp.takeError();
  S.Tmp.emplace(std::move(*Tmp));
  return std::move(F);
}

OutputFile::OutputFile() = default;
OutputFile::OutputFile(OutputFile &&) = default;
OutputFile::~OutputFile() = default;

bool hotswap::isTemporaryName(StringRef FileName) {
  const size_t Random = TemporarySuffix.size() - TemporarySuffix.find('%');
  const StringRef Fixed =
      TemporarySuffix.take_front(TemporarySuffix.size() - Random); // ".tmp"
  if (FileName.size() <= Fixed.size() + Random)
    return false; // (a temporary has a name before its suffix)
  StringRef Tail = FileName.take_back(Random);
  return FileName.drop_back(Random).ends_with(Fixed) &&
         llvm::all_of(Tail, [](char C) {
           return (C >= '0' && C <= '9') || (C >= 'a' && C <= 'f');
         });
}

bool OutputFile::startHeadCopy(uint64_t Length, ThreadPoolInterface &Pool) {
  State &St = *S;
  if (!St.Tmp || !St.Source || !St.Source->descriptor() ||
      St.HeadDone.valid() || Length > St.Source->bytes().size())
    return false;
  // (Whether the source still holds the bytes the caller read is checked
  // by commit, after every copy.)
  St.HeadDone = Pool.async([&St, Length] { St.copyHead(Length); });
  return true;
}

bool OutputFile::canWriteAhead() const { return S->Tmp.has_value(); }

bool OutputFile::writeAhead(OutputPieces Pieces) {
  State &St = *S;
  if (!St.Tmp || St.AheadFailed)
    return false;
  if (Error E = writePieces(St.Tmp->fd(), std::move(Pieces), {}, St.Source,
                            /*Head=*/0, St.CopiedAhead)) {
    St.AheadFailed.emplace(std::move(E));
    return false;
  }
  return true;
}

/// The pieces of \p All from \p From to \p To (they point into All's
/// buffers, which must outlive them).
static OutputPieces slicePieces(const OutputPieces &All, size_t From,
                                size_t To) {
  OutputPieces P;
  P.Pieces.assign(All.Pieces.begin() + From, All.Pieces.begin() + To);
  return P;
}

Error OutputFile::writeUntilLate(const OutputImage &Image) {
  State &St = *S;
  if (St.K != State::Kind::Temporary || St.Started)
    return Error::success();
  if (Error E = St.prepare(Image.Size))
    return E;
  St.Started = Image.Pieces();
  const std::vector<OutputPiece> &All = St.Started->Pieces;
  St.RestFrom =
      llvm::find_if(All, [](const OutputPiece &P) { return P.Late; }) -
      All.begin();
  return writePieces(St.Tmp->fd(), slicePieces(*St.Started, 0, St.RestFrom), {},
                     St.Source, St.Head, St.Copied);
}

Error OutputFile::commit(const OutputImage &Image) {
  State &St = *S;
  if (St.K == State::Kind::Stdout)
    return writeStream(STDOUT_FILENO, Image);
  if (St.K == State::Kind::Device)
    return writeInPlace(St.Target, Image);

  const int FD = St.Tmp->fd();
  if (St.Started) {
    // The part writeUntilLate() left, from its first Late piece on.
    if (St.RestFrom != St.Started->Pieces.size() && Image.BeforeLate)
      Image.BeforeLate();
    if (Error E = writePieces(
            FD,
            slicePieces(*St.Started, St.RestFrom, St.Started->Pieces.size()),
            {}, St.Source, /*Head=*/0, St.Copied))
      return E;
  } else {
    if (Error E = St.prepare(Image.Size))
      return E;
    // Piece by piece, from where each lies: the input's file (in the
    // kernel) or memory. The file is zeros where no piece goes.
    if (Error E = writePieces(FD, Image.Pieces(), Image.BeforeLate, St.Source,
                              St.Head, St.Copied))
      return E;
  }
  if (St.Dest)
    if (Error E = copyAttributes(FD, St.Target, *St.Dest))
      return E;
  // Copies came from the descriptor: make sure the file did not change
  // while they were made.
  if (St.Copied)
    if (Error E = St.Source->checkUnchanged())
      return E;
  Error E = St.Tmp->keepAs(St.Target);
  St.Tmp.reset();
  return E;
}

Error hotswap::writeFileAtomically(StringRef Path, const OutputImage &Image,
                                   const InputFile *Source) {
  Expected<OutputFile> F = OutputFile::create(Path, Source);
  if (!F)
    return F.takeError();
  return F->commit(Image);
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
