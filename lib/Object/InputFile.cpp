//===- lib/Object/InputFile.cpp - An input held open ----------------------===//

#include "hotswap/Object/InputFile.h"

#include "hotswap/Support/Error.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Process.h"

#include <sys/mman.h>

using namespace llvm;
using namespace hotswap;

Expected<InputFile> InputFile::open(StringRef Path) {
  InputFile F;
  if (Path == "-") {
    ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getSTDIN();
    if (!B)
      return makeError(B.getError().message());
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
  // Size -1: LLVM stats the descriptor itself and reads pipes to the end.
  ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getOpenFile(
      sys::fs::convertFDToNativeFile(FD), Path, uint64_t(-1),
      /*RequiresNullTerminator=*/false);
  if (!B)
    return makeError(B.getError().message());
  F.Buffer = std::move(*B);
  if (St.type() != sys::fs::file_type::regular_file) {
    // A pipe or device: nothing to copy from later.
    sys::Process::SafelyCloseFileDescriptor(F.FD);
    F.FD = -1;
    return std::move(F);
  }
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
