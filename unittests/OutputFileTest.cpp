//===- unittests/OutputFileTest.cpp - Atomic output at the edges ----------===//
//
// writeFileAtomically where files are more than bytes: modes, owners,
// extended attributes, symbolic links, signals and file size limits. The
// image's Pieces() callback runs while the temporary exists, so tests look
// at the temporary from there.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Object/OutputFile.h"
#include "hotswap/Object/InputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "gtest/gtest.h"

#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

using namespace llvm;
using namespace hotswap;

namespace {

/// A fresh directory, removed with what it holds.
struct TempDir {
  SmallString<128> Path;
  TempDir() {
    EXPECT_FALSE(sys::fs::createUniqueDirectory("hotswap-output", Path));
  }
  ~TempDir() { sys::fs::remove_directories(Path); }
  std::string file(StringRef Name) const {
    SmallString<128> P(Path);
    sys::path::append(P, Name);
    return std::string(P);
  }
  /// Names in the directory, sorted.
  std::vector<std::string> list() const {
    std::vector<std::string> Names;
    std::error_code EC;
    for (sys::fs::directory_iterator I(Path, EC), E; I != E && !EC;
         I.increment(EC))
      Names.push_back(std::string(sys::path::filename(I->path())));
    llvm::sort(Names);
    return Names;
  }
};

const uint8_t Content[] = {'n', 'e', 'w', ' ', 'b', 'y', 't', 'e', 's'};

/// The image of Content, with \p During run while the temporary exists;
/// over \p Input's bytes (an input piece) when given.
OutputImage image(std::function<void()> During = {},
                  ArrayRef<uint8_t> Input = {}) {
  OutputImage I;
  I.Size = std::max<uint64_t>(sizeof(Content), Input.size());
  I.Pieces = [During, Input] {
    if (During)
      During();
    OutputPieces P;
    if (!Input.empty())
      P.Pieces.push_back({0, Input, uint64_t(0)});
    P.Pieces.push_back({0, ArrayRef<uint8_t>(Content), std::nullopt});
    return P;
  };
  return I;
}

void writeText(const std::string &Path, StringRef Text) {
  FILE *F = fopen(Path.c_str(), "wb");
  ASSERT_NE(F, nullptr);
  fwrite(Text.data(), 1, Text.size(), F);
  fclose(F);
}

std::string readText(const std::string &Path) {
  auto B = MemoryBuffer::getFile(Path);
  return B ? (*B)->getBuffer().str() : "<unreadable>";
}

/// "" for success, else the error's message.
std::string errorText(Error E) { return E ? toString(std::move(E)) : ""; }

struct stat statOf(const std::string &Path) {
  struct stat St = {};
  EXPECT_EQ(::stat(Path.c_str(), &St), 0) << Path;
  return St;
}

/// \p Dir's file "in", of \p Size bytes, byte I being \p Byte(I), opened
/// as an input.
Expected<InputFile> patternInput(const TempDir &Dir, size_t Size,
                                 function_ref<uint8_t(size_t)> Byte) {
  std::string Bytes(Size, '\0');
  for (size_t I = 0; I < Size; ++I)
    Bytes[I] = char(Byte(I));
  const std::string Path = Dir.file("in");
  writeText(Path, Bytes);
  return InputFile::open(Path);
}

/// The file at \p Path holds \p Want, no more.
void expectFileHolds(const std::string &Path,
                     const std::vector<uint8_t> &Want) {
  const std::string Got = readText(Path);
  ASSERT_EQ(Got.size(), Want.size());
  EXPECT_TRUE(std::equal(Want.begin(), Want.end(),
                         reinterpret_cast<const uint8_t *>(Got.data())));
}

/// The temporary next to \p Dir's files while it exists.
std::string temporaryIn(const TempDir &Dir) {
  for (const std::string &N : Dir.list())
    if (StringRef(N).contains(".tmp"))
      return Dir.file(N);
  return "";
}

TEST(OutputFile, ExistingFileKeepsModeOwnerAndAttributes) {
  TempDir D;
  const std::string Out = D.file("out.co");
  writeText(Out, "old");
  // A private, set-user-ID file of another owner (when we may give it one).
  const bool Root = geteuid() == 0;
  if (Root)
    ASSERT_EQ(::chown(Out.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(Out.c_str(), 04710), 0);
  const bool HasXattr =
      ::setxattr(Out.c_str(), "user.hotswap", "kept", 4, 0) == 0;

  mode_t TempMode = 0;
  ASSERT_EQ(errorText(writeFileAtomically(Out, image([&] {
                                            std::string T = temporaryIn(D);
                                            ASSERT_FALSE(T.empty());
                                            TempMode =
                                                statOf(T).st_mode & 07777;
                                          }))),
            "");

  EXPECT_EQ(readText(Out), "new bytes");
  const struct stat St = statOf(Out);
  EXPECT_EQ(St.st_mode & 07777, 04710u);
  // Never wider than the destination while it is being written.
  EXPECT_EQ(TempMode & ~0710u, 0u) << std::oct << TempMode;
  if (Root) {
    EXPECT_EQ(St.st_uid, 65534u);
    EXPECT_EQ(St.st_gid, 65534u);
  } else {
    EXPECT_EQ(St.st_uid, geteuid());
  }
  if (HasXattr) {
    char Value[16] = {};
    EXPECT_EQ(::getxattr(Out.c_str(), "user.hotswap", Value, sizeof(Value)), 4);
    EXPECT_STREQ(Value, "kept");
  }
  EXPECT_EQ(D.list(), std::vector<std::string>{"out.co"});
}

TEST(OutputFile, NewFileTakesTheInputsPermissions) {
  TempDir D;
  const std::string In = D.file("in.co");
  writeText(In, "input");
  ASSERT_EQ(::chmod(In.c_str(), 0640), 0);
  Expected<InputFile> F = InputFile::open(In);
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  ASSERT_EQ(errorText(writeFileAtomically(D.file("out.co"), image(), &*F)), "");
  mode_t Mask = ::umask(0);
  ::umask(Mask);
  EXPECT_EQ(statOf(D.file("out.co")).st_mode & 07777, 0640u & ~Mask);
}

TEST(OutputFile, SymbolicLinksAreFollowedAndKept) {
  TempDir D;
  ASSERT_FALSE(sys::fs::create_directory(D.file("lib")));
  const std::string Real = D.file("lib/libfoo.so.0.1");
  writeText(Real, "old");
  // libfoo.so -> lib/libfoo.so.0 -> libfoo.so.0.1 (relative links).
  ASSERT_EQ(::symlink("libfoo.so.0.1", D.file("lib/libfoo.so.0").c_str()), 0);
  ASSERT_EQ(::symlink("lib/libfoo.so.0", D.file("libfoo.so").c_str()), 0);
  ASSERT_EQ(errorText(writeFileAtomically(D.file("libfoo.so"), image())), "");
  EXPECT_EQ(readText(Real), "new bytes");
  struct stat L;
  ASSERT_EQ(::lstat(D.file("libfoo.so").c_str(), &L), 0);
  EXPECT_TRUE(S_ISLNK(L.st_mode));
  ASSERT_EQ(::lstat(D.file("lib/libfoo.so.0").c_str(), &L), 0);
  EXPECT_TRUE(S_ISLNK(L.st_mode));

  // A dangling link is written through: the file it names is created.
  ASSERT_EQ(::symlink("made.co", D.file("dangling").c_str()), 0);
  ASSERT_EQ(errorText(writeFileAtomically(D.file("dangling"), image())), "");
  EXPECT_EQ(readText(D.file("made.co")), "new bytes");
  ASSERT_EQ(::lstat(D.file("dangling").c_str(), &L), 0);
  EXPECT_TRUE(S_ISLNK(L.st_mode));

  // A loop is an error, and nothing is created.
  ASSERT_EQ(::symlink("loop-b", D.file("loop-a").c_str()), 0);
  ASSERT_EQ(::symlink("loop-a", D.file("loop-b").c_str()), 0);
  Error E = writeFileAtomically(D.file("loop-a"), image());
  EXPECT_EQ(toString(std::move(E)), "Too many levels of symbolic links");
  for (const std::string &N : D.list())
    EXPECT_FALSE(StringRef(N).contains(".tmp")) << N;
}

/// Runs \p Body in a child process and returns its wait status.
template <typename Fn> int inChild(Fn Body) {
  pid_t Pid = fork();
  if (Pid == 0) {
    Body();
    _exit(0);
  }
  int Status = 0;
  waitpid(Pid, &Status, 0);
  return Status;
}

// SIGINT, SIGTERM or SIGHUP while the temporary exists: it is removed, the
// destination is untouched, and the process still dies of the signal. With
// and without an input file to copy the unchanged prefix from.
TEST(OutputFile, SignalRemovesTheTemporary) {
  for (bool FromInput : {false, true})
    for (int Sig : {SIGINT, SIGTERM, SIGHUP}) {
      TempDir D;
      const std::string Out = D.file("out.co");
      writeText(Out, "old");
      writeText(D.file("in.co"), "input");
      int Status = inChild([&] {
        Expected<InputFile> F = InputFile::open(D.file("in.co"));
        if (!F)
          _exit(2);
        OutputImage I = image([Sig] { raise(Sig); },
                              FromInput ? F->bytes() : ArrayRef<uint8_t>());
        Error E = writeFileAtomically(Out, I, FromInput ? &*F : nullptr);
        consumeError(std::move(E));
      });
      SCOPED_TRACE("signal " + std::to_string(Sig) +
                   (FromInput ? ", from an input" : ""));
      ASSERT_TRUE(WIFSIGNALED(Status));
      EXPECT_EQ(WTERMSIG(Status), Sig);
      EXPECT_EQ(D.list(), (std::vector<std::string>{"in.co", "out.co"}));
      EXPECT_EQ(readText(Out), "old");
    }
}

// Past RLIMIT_FSIZE (with SIGXFSZ ignored, as the driver does) writing is an
// error like a full disk: no temporary left, the destination untouched.
TEST(OutputFile, FileSizeLimitIsAnError) {
  TempDir D;
  const std::string Out = D.file("out.co");
  writeText(Out, "old");
  int Status = inChild([&] {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit L = {4, 4};
    setrlimit(RLIMIT_FSIZE, &L);
    Error E = writeFileAtomically(Out, image());
    _exit(toString(std::move(E)) == "File too large" ? 0 : 1);
  });
  ASSERT_TRUE(WIFEXITED(Status));
  EXPECT_EQ(WEXITSTATUS(Status), 0);
  EXPECT_EQ(D.list(), std::vector<std::string>{"out.co"});
  EXPECT_EQ(readText(Out), "old");
}

// A destination that is not a regular file is written to, not replaced.
TEST(OutputFile, DevicesAreWrittenNotReplaced) {
  ASSERT_EQ(errorText(writeFileAtomically("/dev/null", image())), "");
  struct stat St;
  ASSERT_EQ(::stat("/dev/null", &St), 0);
  EXPECT_TRUE(S_ISCHR(St.st_mode));
  Error E = writeFileAtomically("/dev/full", image());
  EXPECT_EQ(toString(std::move(E)), "No space left on device");
}

// Pieces of every size, from the input file (copied in the kernel when
// large, gathered into one write when small) and from memory, overlapping:
// the file is what applying them in order gives, whichever way each went.
TEST(OutputFile, PiecesOfEverySizeOverlappingAsInOrder) {
  TempDir Dir;
  Expected<InputFile> Src = patternInput(
      Dir, 300000, [](size_t I) { return uint8_t(I * 7 + I / 251); });
  ASSERT_TRUE(bool(Src)) << toString(Src.takeError());
  ArrayRef<uint8_t> Bytes = Src->bytes();
  const size_t InSize = Bytes.size();
  std::vector<uint8_t> Mem(100000, 0xAB);

  OutputImage Image;
  Image.Size = 400000;
  Image.Pieces = [&] {
    OutputPieces P;
    P.Pieces.push_back({0, Bytes, uint64_t(0)}); // large: kernel copy
    // 20 000 one- and two-byte input pieces, one after the other, then a
    // memory piece over some of them, then input pieces over that.
    uint64_t At = 310000;
    for (uint64_t K = 0; K < 20000; ++K) {
      const uint64_t From = (K * 37) % (InSize - 2), N = 1 + K % 2;
      P.Pieces.push_back({At, Bytes.slice(From, N), From});
      At += N;
    }
    P.Pieces.push_back(
        {320000, ArrayRef<uint8_t>(Mem).take_front(5000), std::nullopt});
    P.Pieces.push_back({321000, Bytes.slice(5, 3), uint64_t(5)});
    P.Pieces.push_back({100, ArrayRef<uint8_t>(Mem), std::nullopt});
    P.Pieces.push_back({150, Bytes.slice(70000, 70000), uint64_t(70000)});
    return P;
  };
  std::vector<uint8_t> Want(Image.Size);
  Image.renderInto(Want);
  const std::string OutPath = Dir.file("out");
  ASSERT_EQ(errorText(writeFileAtomically(OutPath, Image, &*Src)), "");
  expectFileHolds(OutPath, Want);
}

// A Late piece's bytes may change until BeforeLate runs, which is after the
// pieces before it reached the file and before the Late one does.
TEST(OutputFile, LatePiecesAreWrittenAfterBeforeLate) {
  TempDir Dir;
  const std::string Path = Dir.file("out");
  std::vector<uint8_t> Tail(4, '?');
  std::string SeenBefore;
  OutputImage Image;
  Image.Size = sizeof(Content) + Tail.size();
  Image.Pieces = [&] {
    OutputPieces P;
    P.Pieces.push_back({0, ArrayRef<uint8_t>(Content), std::nullopt});
    OutputPiece Late{sizeof(Content), Tail, std::nullopt};
    Late.Late = true;
    P.Pieces.push_back(Late);
    return P;
  };
  Image.BeforeLate = [&] {
    SeenBefore = readText(temporaryIn(Dir));
    std::fill(Tail.begin(), Tail.end(), '!');
  };
  ASSERT_EQ(errorText(writeFileAtomically(Path, Image)), "");
  EXPECT_EQ(SeenBefore.substr(0, sizeof(Content)), "new bytes");
  EXPECT_EQ(readText(Path), "new bytes!!!!");
  // In memory too.
  std::fill(Tail.begin(), Tail.end(), '?');
  std::vector<uint8_t> Buf(Image.Size);
  Image.renderInto(Buf);
  EXPECT_EQ(std::string(Buf.begin(), Buf.end()), "new bytes!!!!");
}

// In two steps (FileRewrite): writeUntilLate() writes what comes before the
// first Late piece, over a head copy too, without running BeforeLate, and
// leaves the destination alone; commit() runs it, then writes the rest
// (later pieces still win where they overlap earlier ones). An image
// without a Late piece is all written by the first step.
TEST(OutputFile, WritingUntilLateLeavesTheRestToCommit) {
  TempDir Dir;
  Expected<InputFile> Src =
      patternInput(Dir, 1 << 20, [](size_t I) { return uint8_t(I % 251 + 1); });
  ASSERT_TRUE(bool(Src)) << toString(Src.takeError());
  ArrayRef<uint8_t> Bytes = Src->bytes();
  DefaultThreadPool Pool(hardware_concurrency(2));
  std::vector<uint8_t> Tail(8, '?');
  const std::vector<uint8_t> Over(3, 'o');
  for (bool WithLate : {true, false}) {
    SCOPED_TRACE(WithLate ? "with a Late piece" : "without one");
    unsigned BeforeLateCalls = 0;
    OutputImage Image;
    Image.Size = Bytes.size() + 100;
    Image.Pieces = [&] {
      OutputPieces P;
      P.Pieces.push_back({0, Bytes, uint64_t(0)});
      P.Pieces.push_back({10, ArrayRef<uint8_t>(Content), std::nullopt});
      OutputPiece Late{Bytes.size() + 20, Tail, std::nullopt};
      Late.Late = WithLate;
      P.Pieces.push_back(Late);
      // After the Late piece, over an earlier piece and the Late one.
      P.Pieces.push_back({12, Over, std::nullopt});
      P.Pieces.push_back({Bytes.size() + 26, Over, std::nullopt});
      return P;
    };
    Image.BeforeLate = [&] {
      ++BeforeLateCalls;
      std::fill(Tail.begin(), Tail.end(), '!');
    };
    std::fill(Tail.begin(), Tail.end(), '?');
    const std::string OutPath = Dir.file("out");
    Expected<OutputFile> F = OutputFile::create(OutPath, &*Src);
    ASSERT_TRUE(bool(F)) << toString(F.takeError());
    ASSERT_TRUE(F->startHeadCopy(Bytes.size(), Pool));
    ASSERT_EQ(errorText(F->writeUntilLate(Image)), "");
    EXPECT_EQ(BeforeLateCalls, 0u);
    EXPECT_FALSE(sys::fs::exists(OutPath));
    const std::string Early = readText(temporaryIn(Dir));
    ASSERT_EQ(Early.size(), Image.Size);
    EXPECT_EQ(Early.substr(10, 9), WithLate ? "new bytes" : "neoooytes");
    EXPECT_EQ(Early.substr(Bytes.size() + 20, 8),
              WithLate ? std::string(8, '\0') : "??????oo");

    ASSERT_EQ(errorText(F->commit(Image)), "");
    EXPECT_EQ(BeforeLateCalls, WithLate ? 1u : 0u);
    // The image with Tail as it is now.
    OutputImage Now = Image;
    Now.BeforeLate = {};
    std::vector<uint8_t> Want(Now.Size);
    Now.renderInto(Want);
    expectFileHolds(OutPath, Want);
    const std::string Got = readText(OutPath);
    EXPECT_EQ(Got.substr(10, 9), "neoooytes");
    EXPECT_EQ(Got.substr(Bytes.size() + 20, 8),
              WithLate ? "!!!!!!oo" : "??????oo");
    EXPECT_EQ(Dir.list(), (std::vector<std::string>{"in", "out"}));
    ASSERT_FALSE(sys::fs::remove(OutPath));
  }
}

// The head copy: the input's first bytes are copied into the temporary on
// a pool while the caller computes the rest; whatever the image turns out
// to begin with (all of the head, less of it, none, an image shorter than
// the head), the file is the image.
TEST(OutputFile, HeadCopyGivesTheImageWhateverItBeginsWith) {
  TempDir Dir;
  Expected<InputFile> Src = patternInput(Dir, 3 << 20, [](size_t I) {
    return uint8_t(I * 13 + I / 4093 + 1); // (never all zeros)
  });
  ASSERT_TRUE(bool(Src)) << toString(Src.takeError());
  ArrayRef<uint8_t> Bytes = Src->bytes();
  std::vector<uint8_t> Mem(70000, 0xAB);
  DefaultThreadPool Pool(hardware_concurrency(2));

  struct Case {
    const char *Name;
    uint64_t Size;
    std::function<OutputPieces()> Pieces;
  };
  const Case Cases[] = {
      {"the whole head, then more", Bytes.size() + 5000,
       [&] {
         OutputPieces P;
         P.Pieces.push_back({0, Bytes, uint64_t(0)});
         P.Pieces.push_back({1000, ArrayRef<uint8_t>(Mem), std::nullopt});
         P.Pieces.push_back({Bytes.size() + 10, Bytes.slice(7, 300), 7});
         return P;
       }},
      {"less of the head (zeros after it)", Bytes.size() + 100,
       [&] {
         OutputPieces P;
         P.Pieces.push_back({0, Bytes.take_front(1 << 20), uint64_t(0)});
         P.Pieces.push_back(
             {(2 << 20) + 5, ArrayRef<uint8_t>(Mem), std::nullopt});
         return P;
       }},
      {"not the head at all", 2 << 20,
       [&] {
         OutputPieces P;
         P.Pieces.push_back({4096, Bytes.slice(4096, 1 << 20), 4096});
         return P;
       }},
      {"shorter than the head", 1 << 20,
       [&] {
         OutputPieces P;
         P.Pieces.push_back({0, Bytes.take_front(1 << 20), uint64_t(0)});
         return P;
       }},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Name);
    OutputImage Image;
    Image.Size = C.Size;
    Image.Pieces = C.Pieces;
    std::vector<uint8_t> Want(Image.Size);
    Image.renderInto(Want);
    const std::string OutPath = Dir.file("out");
    Expected<OutputFile> F = OutputFile::create(OutPath, &*Src);
    ASSERT_TRUE(bool(F)) << toString(F.takeError());
    ASSERT_TRUE(F->startHeadCopy(Bytes.size(), Pool));
    ASSERT_EQ(errorText(F->commit(Image)), "");
    expectFileHolds(OutPath, Want);
  }
  EXPECT_EQ(Dir.list(), (std::vector<std::string>{"in", "out"}));
}

// Pieces written ahead, while the head is copied, beyond it (input bytes
// the kernel copies, memory, both in one call, out of order): the image
// committed after leaves them out and the file holds them, with zeros
// where neither goes, and the image's own pieces beyond the head where
// they go. Standard output cannot take pieces ahead.
// (test/Reliability/disk-full-write-ahead.test: a write ahead that fails.)
TEST(OutputFile, PiecesWrittenAheadStayUnderTheImage) {
  TempDir Dir;
  Expected<InputFile> Src = patternInput(
      Dir, 2 << 20, [](size_t I) { return uint8_t(I * 29 + I / 509 + 3); });
  ASSERT_TRUE(bool(Src)) << toString(Src.takeError());
  ArrayRef<uint8_t> Bytes = Src->bytes();
  const uint64_t In = Bytes.size();
  std::vector<uint8_t> Mem(50000, 0x5C);
  DefaultThreadPool Pool(hardware_concurrency(2));

  // Where everything goes, as one image.
  auto Ahead1 = [&] {
    OutputPieces P;
    P.Pieces.push_back({In + 8192, Bytes.slice(4096, 1 << 20), 4096});
    P.Pieces.push_back({In + 8192 + (1 << 20), Mem, std::nullopt});
    return P;
  };
  auto Ahead2 = [&] {
    OutputPieces P;
    P.Pieces.push_back({In + 4096, Bytes.take_front(100), uint64_t(0)});
    return P;
  };
  auto Rest = [&] {
    OutputPieces P;
    P.Pieces.push_back({0, Bytes, uint64_t(0)});
    P.Pieces.push_back(
        {10, ArrayRef<uint8_t>(Mem).take_front(7), std::nullopt});
    P.Pieces.push_back({In + (3 << 20), Mem, std::nullopt});
    return P;
  };
  const uint64_t Size = In + (3 << 20) + Mem.size() + 64;
  OutputImage Whole;
  Whole.Size = Size;
  Whole.Pieces = [&] {
    OutputPieces P = Rest();
    for (OutputPieces A : {Ahead1(), Ahead2()})
      llvm::append_range(P.Pieces, A.Pieces);
    return P;
  };
  std::vector<uint8_t> Want(Size);
  Whole.renderInto(Want);

  const std::string OutPath = Dir.file("out");
  Expected<OutputFile> F = OutputFile::create(OutPath, &*Src);
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  ASSERT_TRUE(F->canWriteAhead());
  ASSERT_TRUE(F->startHeadCopy(In, Pool));
  ASSERT_TRUE(F->writeAhead(Ahead1()));
  ASSERT_TRUE(F->writeAhead(Ahead2()));
  OutputImage Image;
  Image.Size = Size;
  Image.Pieces = Rest;
  ASSERT_EQ(errorText(F->commit(Image)), "");
  expectFileHolds(OutPath, Want);
  EXPECT_EQ(Dir.list(), (std::vector<std::string>{"in", "out"}));

  Expected<OutputFile> Stdout = OutputFile::create("-", &*Src);
  ASSERT_TRUE(bool(Stdout));
  EXPECT_FALSE(Stdout->canWriteAhead());
  EXPECT_FALSE(Stdout->writeAhead(Ahead2()));
}

// An output abandoned while its head is being copied (the run failed, or
// changed nothing in place): the copy stops, the temporary goes, the
// destination is untouched.
TEST(OutputFile, AbandonedHeadCopyLeavesNothing) {
  TempDir Dir;
  const std::string InPath = Dir.file("in"), OutPath = Dir.file("out");
  writeText(InPath, std::string(8 << 20, 'x'));
  writeText(OutPath, "old");
  Expected<InputFile> Src = InputFile::open(InPath);
  ASSERT_TRUE(bool(Src)) << toString(Src.takeError());
  DefaultThreadPool Pool(hardware_concurrency(2));
  {
    Expected<OutputFile> F = OutputFile::create(OutPath, &*Src);
    ASSERT_TRUE(bool(F)) << toString(F.takeError());
    ASSERT_TRUE(F->startHeadCopy(Src->bytes().size(), Pool));
    EXPECT_NE(temporaryIn(Dir), "");
  }
  EXPECT_EQ(Dir.list(), (std::vector<std::string>{"in", "out"}));
  EXPECT_EQ(readText(OutPath), "old");
  // Nowhere to copy from or to: nothing starts.
  Expected<OutputFile> Stdout = OutputFile::create("-", &*Src);
  ASSERT_TRUE(bool(Stdout));
  EXPECT_FALSE(Stdout->startHeadCopy(10, Pool));
  Expected<OutputFile> NoSource = OutputFile::create(OutPath);
  ASSERT_TRUE(bool(NoSource));
  EXPECT_FALSE(NoSource->startHeadCopy(10, Pool));
}

} // namespace
