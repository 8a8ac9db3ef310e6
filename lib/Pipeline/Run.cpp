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
  if (Error E = R->checkDone())
    return std::move(E);
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

/// What a file's rewrite keeps between start() and finish(): everything
/// the output's pieces point into, at stable addresses.
struct FileRewrite::State {
  std::optional<PipelineText> Text;
  std::optional<InputFile> In;
  PipelineOptions Opts;
  std::optional<Rewritten> R;
  OutputImage Image;
  std::optional<OutputFile> Out;
  std::string OutName; // for errors: the output's path, or "<stdout>"
};

FileRewrite::FileRewrite() : S(std::make_unique<State>()) {}
FileRewrite::FileRewrite(FileRewrite &&) = default;
FileRewrite &FileRewrite::operator=(FileRewrite &&) = default;
FileRewrite::~FileRewrite() = default;

Expected<FileRewrite> FileRewrite::start(StringRef InPath, StringRef OutPath,
                                         StringRef Pipeline,
                                         const PipelineOptions &Opts,
                                         RunSummary *Summary) {
  Expected<PipelineText> Text = PipelineText::create(Pipeline, Opts);
  if (!Text)
    return Text.takeError();
  if (Error E = Text->checkRestoreAlone())
    return std::move(E);
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
  Expected<InputFile> Opened = InputFile::open(InPath);
  if (!Opened)
    return createFileError(InPath, Opened.takeError());
  FileRewrite F;
  State &St = *F.S;
  St.Text.emplace(std::move(*Text));
  St.In.emplace(std::move(*Opened));
  const PipelineText &P = *St.Text;
  InputFile &In = *St.In;
  St.OutName = OutPath == "-" ? "<stdout>" : OutPath.str();
  RunSummary Sum;
  // The bytes are this function's own: a host's bundles are released from
  // memory as they are done, a large input's pages behind its digest.
  St.Opts = Opts;
  if (In.worthReleasing())
    St.Opts.ReleaseInput = [&In](ArrayRef<uint8_t> B) { In.release(B); };
  // A large output that begins with the input's bytes: the kernel copies
  // them into the output file on the pool while the code objects run.
  StartHeadFn StartHead;
  if (mayWriteAhead(OutPath, P, In.bytes().size()))
    StartHead = [&St, OutPath, &Opts](uint64_t Length) -> WriteAheadFn {
      Expected<OutputFile> Made = OutputFile::create(OutPath, &*St.In);
      if (!Made) {
        // Made again at the end, which reports why it cannot be (only if
        // there is something to write).
        consumeError(Made.takeError());
        return {};
      }
      St.Out.emplace(std::move(*Made));
      if (Opts.ThreadPool)
        St.Out->startHeadCopy(Length, *Opts.ThreadPool);
      if (!St.Out->canWriteAhead())
        return {};
      return [&St](OutputPieces Pieces) {
        return St.Out->writeAhead(std::move(Pieces));
      };
    };
  Expected<Rewritten> R = rewriteInput(In.bytes(), P, St.Opts, Sum, StartHead);
  if (Summary)
    *Summary = Sum;
  if (!R)
    return R.takeError();
  // Nothing to write; or rewriting a file in place that nothing changed
  // would only touch it.
  if (OutPath.empty() || (!Sum.OutputChanged && OutPath != "-" &&
                          sys::fs::equivalent(InPath, OutPath))) {
    St.Out.reset();
    if (Error E = R->checkDone())
      return std::move(E);
    return std::move(F);
  }
  if (!St.Out) {
    Expected<OutputFile> Made = OutputFile::create(OutPath, &In);
    if (!Made)
      return createFileError(St.OutName, Made.takeError());
    St.Out.emplace(std::move(*Made));
  }
  St.R.emplace(std::move(*R));
  St.Image = St.R->image();
  if (Error E = St.Out->writeUntilLate(St.Image))
    return createFileError(St.OutName, std::move(E));
  return std::move(F);
}

Error FileRewrite::finish() {
  State &St = *S;
  if (!St.Out)
    return Error::success();
  // (The bytes are in the temporary: a check that fails keeps nothing.)
  if (Error E = St.R ? St.R->checkDone() : Error::success()) {
    St.Out.reset();
    return E;
  }
  Error E = St.Out->commit(St.Image);
  St.Out.reset();
  if (E)
    return createFileError(St.OutName, std::move(E));
  return Error::success();
}

Error hotswap::runPipelineOnFile(StringRef InPath, StringRef OutPath,
                                 StringRef Pipeline,
                                 const PipelineOptions &Opts,
                                 RunSummary *Summary) {
  Expected<FileRewrite> F =
      FileRewrite::start(InPath, OutPath, Pipeline, Opts, Summary);
  if (!F)
    return F.takeError();
  return F->finish();
}
