//===- lib/Pipeline/Run.cpp - Library entry points ------------------------===//
//
// runPipeline and runPipelineOnFile: read, run on every code object of the
// input (whatever kind it is), write the same kind back. A file input is
// kept open for the write, so the bytes the output shares with it are
// copied by the kernel.
//
//===----------------------------------------------------------------------===//

#include "Rewrite.h"

#include "hotswap/Object/InputFile.h"
#include "hotswap/Object/OutputFile.h"
#include "hotswap/Support/Error.h"

#include "llvm/Support/FileSystem.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;

Expected<std::unique_ptr<MemoryBuffer>>
hotswap::runPipeline(MemoryBufferRef Input, StringRef Pipeline,
                     const PipelineOptions &Opts, RunSummary *Summary) {
  // Pipeline errors first, whatever the input.
  Expected<PipelineText> Text = PipelineText::create(Pipeline, Opts);
  if (!Text)
    return Text.takeError();
  const PipelineText &P = *Text;
  if (Error E = P.checkRestoreAlone())
    return std::move(E);
  ArrayRef<uint8_t> In(
      reinterpret_cast<const uint8_t *>(Input.getBufferStart()),
      Input.getBufferSize());
  RunSummary S;
  Expected<Rewritten> R = rewriteInput(In, P, Opts, S);
  if (Summary)
    *Summary = S;
  if (!R)
    return R.takeError();
  OutputImage Image = R->image();
  auto Buf = WritableMemoryBuffer::getNewUninitMemBuffer(
      Image.Size, Input.getBufferIdentifier());
  if (!Buf)
    return makeError("cannot allocate " + Twine(Image.Size) +
                     " bytes for the output");
  Image.renderInto(MutableArrayRef<uint8_t>(
      reinterpret_cast<uint8_t *>(Buf->getBufferStart()), Image.Size));
  return std::unique_ptr<MemoryBuffer>(std::move(Buf));
}

/// Whether the output file may be made before the run ends: a file to
/// write, passes that transform, and enough bytes for it to matter. Then,
/// with a pool, the input's bytes the output begins with are copied into it
/// meanwhile (OutputFile::startHeadCopy), and a library's new bundles are
/// written as they are done (OutputFile::writeAhead; on one thread too, so
/// that the models they come from go as soon as they are written).
static bool mayWriteAhead(StringRef OutPath, const PipelineText &P,
                          uint64_t InputSize) {
  constexpr uint64_t WriteAheadFrom = 64 << 20;
  return !OutPath.empty() && OutPath != "-" && !P.canonical().empty() &&
         !P.restores() && InputSize >= WriteAheadFrom;
}

Error hotswap::runPipelineOnFile(StringRef InPath, StringRef OutPath,
                                 StringRef Pipeline,
                                 const PipelineOptions &Opts,
                                 RunSummary *Summary) {
  Expected<PipelineText> Text = PipelineText::create(Pipeline, Opts);
  if (!Text)
    return Text.takeError();
  const PipelineText &P = *Text;
  if (Error E = P.checkRestoreAlone())
    return E;
  // Rewriting in place needs a file to replace: a FIFO or a device would
  // block or be consumed, never rewritten.
  if (!OutPath.empty() && OutPath != "-" && InPath != "-") {
    sys::fs::file_status St;
    bool Same = false;
    if (!sys::fs::status(InPath, St) &&
        St.type() != sys::fs::file_type::regular_file &&
        St.type() != sys::fs::file_type::directory_file &&
        !sys::fs::equivalent(InPath, OutPath, Same) && Same)
      return createFileError(
          InPath, makeError("not a regular file: it cannot be rewritten in "
                            "place"));
  }
  Expected<InputFile> In = InputFile::open(InPath);
  if (!In)
    return createFileError(InPath, In.takeError());
  RunSummary S;
  // The bytes are this function's own: a host's bundles are released from
  // memory as they are done.
  PipelineOptions O = Opts;
  O.ReleaseInput = [&In](ArrayRef<uint8_t> B) { In->release(B); };
  // A large output that begins with the input's bytes: the kernel copies
  // them into the output file on the pool while the code objects run.
  std::optional<OutputFile> Out;
  StartHeadFn StartHead;
  if (mayWriteAhead(OutPath, P, In->bytes().size()))
    StartHead = [&](uint64_t Length) -> WriteAheadFn {
      Expected<OutputFile> F = OutputFile::create(OutPath, &*In);
      if (!F) {
        // Made again at the end, which reports why it cannot be (only if
        // there is something to write).
        consumeError(F.takeError());
        return {};
      }
      Out.emplace(std::move(*F));
      if (Opts.ThreadPool)
        Out->startHeadCopy(Length, *Opts.ThreadPool);
      if (!Out->canWriteAhead())
        return {};
      return [&Out](OutputPieces Pieces) {
        return Out->writeAhead(std::move(Pieces));
      };
    };
  Expected<Rewritten> R = rewriteInput(In->bytes(), P, O, S, StartHead);
  if (Summary)
    *Summary = S;
  if (!R)
    return R.takeError();
  if (OutPath.empty())
    return Error::success();
  // Rewriting a file in place that nothing changed would only touch it.
  if (!S.OutputChanged && OutPath != "-" &&
      sys::fs::equivalent(InPath, OutPath))
    return Error::success();
  if (!Out) {
    Expected<OutputFile> F = OutputFile::create(OutPath, &*In);
    if (!F)
      return createFileError(OutPath == "-" ? "<stdout>" : OutPath,
                             F.takeError());
    Out.emplace(std::move(*F));
  }
  if (Error E = Out->commit(R->image()))
    return createFileError(OutPath == "-" ? "<stdout>" : OutPath, std::move(E));
  return Error::success();
}
