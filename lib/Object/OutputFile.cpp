//===- lib/Object/OutputFile.cpp - Atomic file output ---------------------===//

#include "hotswap/Object/OutputFile.h"

#include "hotswap/Support/Error.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileOutputBuffer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

using namespace llvm;
using namespace hotswap;

static Error errnoError(int E) {
  return makeError(std::error_code(E, std::generic_category()).message());
}

/// The fast way: the base copied by the kernel from \p Source, then only
/// what differs written, into a temporary next to \p Path that replaces it
/// by rename. Returns false when it does not apply (the system refuses the
/// copy before anything was copied); the caller then writes everything.
static Expected<bool> writeByCopying(StringRef Path, const OutputImage &Image,
                                     const InputFile &Source) {
  int InFD = *Source.descriptor();
  if (Error E = Source.checkUnchanged())
    return std::move(E);

  int OutFD;
  SmallString<128> Tmp;
  if (std::error_code EC = sys::fs::createUniqueFile(
          Path + ".tmp%%%%%%%", OutFD, Tmp, sys::fs::OF_None,
          sys::fs::all_read | sys::fs::all_write | sys::fs::all_exe))
    return makeError(EC.message());
  bool Keep = false;
  auto Cleanup = make_scope_exit([&] {
    if (OutFD >= 0)
      sys::Process::SafelyCloseFileDescriptor(OutFD);
    if (!Keep)
      sys::fs::remove(Tmp);
  });
  if (std::error_code EC = sys::fs::resize_file(OutFD, Image.Size))
    return makeError(EC.message());

  loff_t InOff = 0, OutOff = 0;
  while (static_cast<uint64_t>(InOff) < Image.BaseLength) {
    ssize_t N = ::copy_file_range(InFD, &InOff, OutFD, &OutOff,
                                  Image.BaseLength - InOff, 0);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      // Not supported here (old kernel, other file systems): write it all.
      if (N < 0 && InOff == 0 &&
          (errno == ENOSYS || errno == EXDEV || errno == EINVAL ||
           errno == EOPNOTSUPP))
        return false;
      return errnoError(N < 0 ? errno : EIO);
    }
  }

  // What differs, written piece by piece from where it lies in memory
  // (the file is zeros after the base until then).
  const OutputPieces Pieces = Image.Pieces();
  for (const OutputPiece &P : Pieces.Pieces) {
    uint64_t Done = 0;
    while (Done < P.Bytes.size()) {
      ssize_t N = ::pwrite(OutFD, P.Bytes.data() + Done, P.Bytes.size() - Done,
                           static_cast<off_t>(P.Offset + Done));
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0)
        return errnoError(N < 0 ? errno : EIO);
      Done += static_cast<uint64_t>(N);
    }
  }
  // The copy came from the descriptor: make sure the file did not change
  // while it was copied.
  if (Error E = Source.checkUnchanged())
    return std::move(E);
  int FD = OutFD;
  OutFD = -1;
  if (std::error_code EC = sys::Process::SafelyCloseFileDescriptor(FD))
    return makeError(EC.message());
  if (std::error_code EC = sys::fs::rename(Tmp, Path))
    return makeError(EC.message());
  Keep = true;
  return true;
}

void OutputImage::renderInto(MutableArrayRef<uint8_t> Out) const {
  memcpy(Out.data(), Base.data(), BaseLength);
  memset(Out.data() + BaseLength, 0, Out.size() - BaseLength);
  Pieces().applyTo(Out);
}

Error hotswap::writeFileAtomically(StringRef Path, const OutputImage &Image,
                                   const InputFile *Source) {
  if (Image.BaseLength > Image.Base.size() || Image.BaseLength > Image.Size)
    return makeError("internal error: output base is larger than its input");
  // Only a regular file (or none yet) is replaced by rename: anything else
  // (/dev/null, a FIFO, a terminal) is written to, which FileOutputBuffer
  // does, and a directory is its error.
  sys::fs::file_status St;
  bool RegularOrMissing = sys::fs::status(Path, St) ||
                          St.type() == sys::fs::file_type::regular_file;
  bool CanCopy = Source && Source->descriptor() && Path != "-" &&
                 Source->bytes().data() == Image.Base.data() &&
                 Source->bytes().size() == Image.Base.size() &&
                 RegularOrMissing;
  if (CanCopy) {
    Expected<bool> Done = writeByCopying(Path, Image, *Source);
    if (!Done)
      return Done.takeError();
    if (*Done)
      return Error::success();
  }
  // FileOutputBuffer writes a temporary file next to Path and renames it on
  // commit(); on any error the temporary is removed and Path is untouched.
  Expected<std::unique_ptr<FileOutputBuffer>> FOB = FileOutputBuffer::create(
      Path, Image.Size, FileOutputBuffer::F_executable);
  if (!FOB)
    return FOB.takeError();
  Image.renderInto(MutableArrayRef<uint8_t>((*FOB)->getBufferStart(),
                                            (*FOB)->getBufferSize()));
  return (*FOB)->commit();
}

Error hotswap::writeObjectToFile(const Object &Obj, const Layout &L,
                                 StringRef Path, const InputFile *Source) {
  OutputImage Image;
  Image.Size = L.FileSize;
  Image.Base = Obj.input();
  Image.BaseLength = L.BaseLength;
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
