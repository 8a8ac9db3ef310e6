//===- lib/Object/InputFile.cpp - An input held open ----------------------===//

#include "hotswap/Object/InputFile.h"

#include "hotswap/Object/BundleMagic.h"
#include "hotswap/Support/Error.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Process.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using namespace hotswap;

namespace {

/// What a file of mode \p Mode (st_mode) is, for messages.
const char *fileKind(mode_t Mode) {
  if (S_ISFIFO(Mode))
    return "a FIFO";
  if (S_ISCHR(Mode))
    return "a character device";
  if (S_ISBLK(Mode))
    return "a block device";
  if (S_ISSOCK(Mode))
    return "a socket";
  if (S_ISDIR(Mode))
    return "a directory";
  return "not a regular file";
}

/// Whether \p Head starts as an input of some kind this library reads.
bool startsLikeAnInput(StringRef Head) {
  return Head.starts_with("\x7f"
                          "ELF") ||
         startsAsBundle(Head);
}

/// Reads the pipe or device \p FD to its end (see InputFile::open).
Expected<std::unique_ptr<MemoryBuffer>> readStream(int FD, StringRef Name) {
  SmallVector<char, 0> Bytes;
  constexpr size_t Chunk = 64u << 10;
  bool Probed = false;
  for (;;) {
    if (Bytes.size() >= InputFile::MaxStreamBytes)
      return makeError("more than " + Twine(InputFile::MaxStreamBytes >> 30) +
                       " GiB from a pipe or device: write it to a file "
                       "first");
    const size_t At = Bytes.size();
    Bytes.resize_for_overwrite(At + Chunk);
    ssize_t N;
    do
      N = ::read(FD, Bytes.data() + At, Chunk);
    while (N < 0 && errno == EINTR);
    if (N < 0)
      return makeError(
          std::error_code(errno, std::generic_category()).message());
    Bytes.truncate(At + N);
    if (N == 0)
      break;
    // A stream that goes on past its first bytes must look like an input
    // (small ones are left to the readers, which say what is wrong).
    if (!Probed && Bytes.size() > InputFile::StreamProbeBytes) {
      Probed = true;
      if (!startsLikeAnInput(StringRef(Bytes.data(), Bytes.size())))
        return makeError("a pipe or device whose first " +
                         Twine(InputFile::StreamProbeBytes >> 10) +
                         " KiB are not the start of an ELF file or an "
                         "offload bundle: not read further");
    }
  }
  return MemoryBuffer::getMemBufferCopy(StringRef(Bytes.data(), Bytes.size()),
                                        Name);
}

} // namespace

Expected<std::unique_ptr<MemoryBuffer>>
hotswap::readRegularFile(StringRef Path) {
  // O_NONBLOCK: a FIFO without a writer is refused, not waited for.
  int FD = ::open(Path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (FD < 0)
    return makeError(std::error_code(errno, std::generic_category()).message());
  struct stat St;
  if (::fstat(FD, &St) != 0) {
    std::error_code EC(errno, std::generic_category());
    ::close(FD);
    return makeError(EC.message());
  }
  if (!S_ISREG(St.st_mode)) {
    ::close(FD);
    return makeError(Twine(fileKind(St.st_mode)) + ", not a regular file");
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getOpenFile(
      sys::fs::convertFDToNativeFile(FD), Path, uint64_t(St.st_size),
      /*RequiresNullTerminator=*/false);
  ::close(FD);
  if (!B)
    return makeError(B.getError().message());
  return std::move(*B);
}

Expected<InputFile> InputFile::open(StringRef Path) {
  InputFile F;
  if (Path == "-") {
    Expected<std::unique_ptr<MemoryBuffer>> B = readStream(0, "<stdin>");
    if (!B)
      return B.takeError();
    F.Buffer = std::move(*B);
    return std::move(F);
  }
  int FD;
  if (std::error_code EC = sys::fs::openFileForRead(Path, FD))
    return makeError(EC.message());
  F.FD = FD;
  sys::fs::file_status St;
  if (std::error_code EC = sys::fs::status(FD, St))
    return makeError(EC.message());
  if (St.type() == sys::fs::file_type::directory_file)
    return makeError(std::make_error_code(std::errc::is_a_directory).message());
  if (St.type() != sys::fs::file_type::regular_file) {
    // A pipe or device: read to its end (bounded), nothing to copy from
    // later.
    Expected<std::unique_ptr<MemoryBuffer>> B = readStream(FD, Path);
    sys::Process::SafelyCloseFileDescriptor(F.FD);
    F.FD = -1;
    if (!B)
      return B.takeError();
    F.Buffer = std::move(*B);
    return std::move(F);
  }
  // Size -1: LLVM stats the descriptor itself.
  ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getOpenFile(
      sys::fs::convertFDToNativeFile(FD), Path, uint64_t(-1),
      /*RequiresNullTerminator=*/false);
  if (!B)
    return makeError(B.getError().message());
  F.Buffer = std::move(*B);
  F.ID = St.getUniqueID();
  F.Size = St.getSize();
  F.MTime = St.getLastModificationTime();
  F.Mode = St.permissions();
  return std::move(F);
}

InputFile::InputFile(InputFile &&Other)
    : Buffer(std::move(Other.Buffer)), FD(Other.FD), ID(Other.ID),
      Size(Other.Size), MTime(Other.MTime), Mode(Other.Mode) {
  Other.FD = -1;
}

InputFile &InputFile::operator=(InputFile &&Other) {
  if (this != &Other) {
    if (FD >= 0)
      sys::Process::SafelyCloseFileDescriptor(FD);
    Buffer = std::move(Other.Buffer);
    FD = Other.FD;
    ID = Other.ID;
    Size = Other.Size;
    MTime = Other.MTime;
    Mode = Other.Mode;
    Other.FD = -1;
  }
  return *this;
}

void InputFile::release(ArrayRef<uint8_t> Bytes) const {
  if (!Buffer || Buffer->getBufferKind() != MemoryBuffer::MemoryBuffer_MMap)
    return;
  const auto Begin = reinterpret_cast<uintptr_t>(Buffer->getBufferStart());
  const auto End = reinterpret_cast<uintptr_t>(Buffer->getBufferEnd());
  auto From = reinterpret_cast<uintptr_t>(Bytes.data());
  if (Bytes.empty() || From < Begin || From > End || Bytes.size() > End - From)
    return;
  // Blocks of the file (Begin is its offset 0, page-aligned).
  constexpr uint64_t Block = 2u << 20;
  const uint64_t Page = sys::Process::getPageSizeEstimate();
  const uintptr_t First = Begin + alignDown(From - Begin, Block);
  const uintptr_t Last = std::min<uintptr_t>(
      Begin + alignTo(From + Bytes.size() - Begin, Block), alignTo(End, Page));
  // A mapping of the file that was never written: the pages come back from
  // the file when touched again.
  if (First < Last)
    ::madvise(reinterpret_cast<void *>(First), Last - First, MADV_DONTNEED);
}

bool InputFile::worthReleasing() const {
  return Buffer && Buffer->getBufferKind() == MemoryBuffer::MemoryBuffer_MMap &&
         Buffer->getBufferSize() >= ReleaseFrom;
}

InputFile::~InputFile() {
  if (FD >= 0)
    sys::Process::SafelyCloseFileDescriptor(FD);
}

Error InputFile::checkUnchanged() const {
  if (FD < 0)
    return makeError("the input has no file to copy from");
  sys::fs::file_status St;
  if (std::error_code EC = sys::fs::status(FD, St))
    return makeError("cannot check the input file: " + EC.message());
  if (St.getUniqueID() != ID || St.getSize() != Size ||
      St.getSize() != Buffer->getBufferSize() ||
      St.getLastModificationTime() != MTime)
    return makeError("the input file changed while it was being rewritten");
  return Error::success();
}

std::unique_ptr<MemoryBuffer> InputFile::takeBuffer() {
  if (FD >= 0)
    sys::Process::SafelyCloseFileDescriptor(FD);
  FD = -1;
  return std::move(Buffer);
}
