//===- hotswap/Hotswap.h - Library entry points -----------------*- C++ -*-===//
//
// The embedding API of libhotswap: everything hotswap-opt does, callable from
// another program.
//
//   #include "hotswap/Hotswap.h"
//   auto Out = hotswap::runPipeline(In, "trampoline,stub-syms");
//   if (!Out) report(llvm::toString(Out.takeError()));
//
// Contract of every function declared here:
//   * Failures are returned as llvm::Error / llvm::Expected. The library never
//     prints, never exits and never aborts on bad input (malformed objects,
//     unknown passes, failed preconditions in strict mode).
//   * Warnings go to PipelineOptions::Warn, or are dropped when it is unset.
//   * Threads: any number of calls may run at once, on any threads, on
//     different inputs (of the same target or not). A run shares nothing
//     mutable with another: each has its own MC state; only immutable
//     per-target tables are shared. One PassBuilder may be used by
//     concurrent calls once its passes are registered. Output bytes never
//     depend on threads.
//   * Inputs are never modified; outputs are new buffers or new files.
//
// CMake: find_package(HotswapOpt 0.1 REQUIRED) and link HotswapOpt::hotswap
// (see examples/README.md). The C API is in hotswap-c.h.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_HOTSWAP_H
#define HOTSWAP_HOTSWAP_H

#include "hotswap/Bundle/Bundle.h"
#include "hotswap/Object/OutputFile.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Writer.h"
#include "hotswap/Pass/PassInstrumentation.h"
#include "hotswap/Pass/Statistics.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/PassBuilder.h"
#include "hotswap/Passes/PassPlugin.h"

#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <map>
#include <memory>

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

namespace hotswap {

/// Library version, "MAJOR.MINOR.PATCH" (the CMake package version).
llvm::StringRef getVersionString();

/// How a pipeline runs. Every member is optional; a default-constructed
/// PipelineOptions behaves like `hotswap-opt -passes=...` without flags,
/// except that nothing is printed.
///
/// Containers (offload bundles, compressed bundles, HIP host binaries) run
/// the pipeline once per code object they hold. Warn, PrintOut and StatsOut
/// then receive what each code object's run produced, on the calling
/// thread, in the order of the code objects in the container (with a
/// ThreadPool the runs may overlap; what they report never interleaves).
struct PipelineOptions {
  /// Receives every warning (e.g. stub-syms finding a stub's name taken by
  /// another symbol); in a container, prefixed with the entry it concerns.
  /// Passes skipped because their invariant holds or their precondition is
  /// unmet are reported to Instrumentation->SkippedPass, not here. Called on
  /// the calling thread; the Twine is only valid during the call. Default:
  /// warnings are dropped.
  std::function<void(const llvm::Twine &)> Warn;
  /// Unmet preconditions and best-effort failures become errors instead of
  /// skipped passes and warnings (hotswap-opt --strict).
  bool Strict = false;
  /// Run `verify` after every pass that changed the object, and check that
  /// the pass's invariant now holds (unless it warned: best-effort passes
  /// may leave it unmet); the first failure ends the run with an error
  /// naming the pass (-verify-each).
  bool VerifyEach = false;
  /// After every pass that changed the object but kept the kernels analysis
  /// up to date instead of having it recomputed, compare the kept result
  /// with a fresh one, field by field; a difference is an error naming the
  /// pass and the field (-verify-analysis-preservation; on in the test
  /// suite and the fuzzer).
  bool VerifyAnalysisPreservation = false;
  /// Where print<...> passes write. Default: discarded. In a container each
  /// code object's output follows a line naming its entry (text), or the
  /// outputs form one JSON array of objects with an "entry" member (JSON).
  llvm::raw_ostream *PrintOut = nullptr;
  /// print<kernels> writes JSON instead of text (--kernels-format=json).
  bool JSON = false;
  /// Pass registry used to parse the pipeline. Default: a fresh PassBuilder
  /// with the built-in passes. To use passes of your own, register them on a
  /// PassBuilder (PassBuilder::registerPass) and point this at it; it must
  /// outlive the call.
  const PassBuilder *Builder = nullptr;
  /// Extra callbacks around every pass. Must outlive the call. When set,
  /// the code objects of a container run one after the other on the calling
  /// thread (callbacks are never called concurrently), each preceded by a
  /// call of OnCodeObject.
  PassInstrumentation *Instrumentation = nullptr;
  /// Before the pipeline runs on a code object of a container, with the
  /// entry's name ("bundle entry 'hipv4-amdgcn-amd-amdhsa--gfx90a'").
  std::function<void(llvm::StringRef Entry)> OnCodeObject;
  /// After the pipeline ran on a code object of a container (successfully
  /// or not), with the code object's size in bytes: progress reports. Called
  /// on the threads of ThreadPool when it is set, possibly concurrently: the
  /// callee synchronises.
  std::function<void(uint64_t Bytes)> OnCodeObjectDone;
  /// When the code objects of a bundle are known, before any of them runs,
  /// with how many there are (progress reports: a host binary calls it once
  /// per bundle). Called on the calling thread.
  std::function<void(unsigned Count)> OnCodeObjectsFound;
  /// When set, receives the counters of the run (hotswap-opt -stats), also
  /// when the run fails: added to what it holds.
  Statistics *StatsOut = nullptr;
  /// Workers for parallel work inside the run: the code objects of a
  /// container (each then runs on its task's thread); a bare code object's
  /// run has none. Null does everything on the calling thread. Output bytes
  /// never depend on it. The pool may be shared by concurrent runs; it must
  /// outlive the call.
  llvm::ThreadPoolInterface *ThreadPool = nullptr;
  /// Containers: a code object whose run fails is left as it was and
  /// reported through Warn (and counted), instead of failing the whole run
  /// (hotswap-opt --keep-going).
  bool KeepGoing = false;
  /// HIP host binaries: the bundles the rewritten ones replace are read by
  /// no one. Those `restore` can make again from their new copies (proven
  /// as the output is made) are left as holes, zeros that take no disk
  /// blocks, either way; with this, the others are filled with zeros too,
  /// their bytes held in the provenance record (else they stay).
  bool ZeroOldBundles = false;
  /// Containers: called with input bytes the run has finished reading (each
  /// code object of a bundle once it ran; on the thread that ran it, so
  /// possibly concurrently), so that the caller may drop them from memory.
  /// runPipelineOnFile sets it, for an input of 32 MiB or more, to release
  /// those pages of the mapped input (InputFile::release, thread-safe),
  /// which keeps a large library's peak memory near what its new code
  /// objects add.
  std::function<void(llvm::ArrayRef<uint8_t>)> ReleaseInput;
  /// Count the kernels of every code object into RunSummary::Kernels, also
  /// when no pass of the pipeline looks at them (hotswap-opt --dry-run).
  bool CountKernels = false;
};

/// What a run found and did.
struct RunSummary {
  /// What the input is (detected from its content).
  bundle::InputKind Kind = bundle::InputKind::Unknown;
  /// Code objects the pipeline ran on (1 for a bare code object).
  unsigned CodeObjects = 0;
  /// Of those, how many some pass changed.
  unsigned Changed = 0;
  /// Kernels of the code objects whose run succeeded: counted when a pass
  /// computed the kernels analysis, or PipelineOptions::CountKernels.
  unsigned Kernels = 0;
  /// How many failed and were left as they were (KeepGoing).
  unsigned Failed = 0;
  /// Whether the output differs from the input at all.
  bool OutputChanged = false;
  /// Passes that need some code object of the input
  /// (Pass::needsSomeCodeObject) and were skipped on some, by position in
  /// the pipeline: on how many code objects, and the skip of the code object
  /// nearest to fitting, the first of those (its Why
  /// names the container entry). A pass skipped on every code object that
  /// ran fails the input.
  struct UnfitCount {
    unsigned CodeObjects = 0;
    UnfitPass First;
  };
  std::map<size_t, UnfitCount> Unfit;

  /// Counts the skips of one code object (\p Entry names it in a
  /// container, empty for a bare code object).
  void addUnfit(llvm::ArrayRef<UnfitPass> Skips, llvm::StringRef Entry);
};

/// Runs \p Pipeline (the text of `-passes=`, e.g. "trampoline,stub-syms";
/// empty runs nothing) on every AMDGPU code object of \p Input -- a code
/// object, an offload bundle (plain or compressed) or a HIP host executable
/// or library, detected from its content -- and returns the bytes of the
/// result, of the same kind, in a new buffer. \p Summary, when given,
/// receives what was found and done.
///
/// Requires: nothing of \p Input beyond being readable for the duration of
/// the call (it need not be aligned or null-terminated).
/// Guarantees: on success the result is complete; when no pass changed
/// anything it is byte-identical to \p Input. On failure the error says
/// which element of the pipeline, which code object (entry), which pass or
/// which part of the input is at fault.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
runPipeline(llvm::MemoryBufferRef Input, llvm::StringRef Pipeline,
            const PipelineOptions &Opts = {}, RunSummary *Summary = nullptr);

/// Same, from file to file ("-" for stdin/stdout). \p OutPath may equal
/// \p InPath; when it does and nothing changed, the file is not touched.
/// The output is written to a temporary file and renamed over \p OutPath
/// only after everything succeeded: on any error \p OutPath is left
/// untouched (and not created); so on SIGINT and SIGTERM, through LLVM's
/// signal handlers, which the first temporary of the process installs on
/// its thread (with an alternate signal stack that AddressSanitizer fails
/// to free when a thread other than the main one ends: an embedder built
/// with it installs them on its main thread first, as llvm::InitLLVM
/// does). An empty \p OutPath runs the pipeline
/// without writing (useful for print<...> and verify). Errors opening the
/// input or writing the output are llvm::FileErrors naming that file; every
/// other error is about the input's contents.
llvm::Error runPipelineOnFile(llvm::StringRef InPath, llvm::StringRef OutPath,
                              llvm::StringRef Pipeline,
                              const PipelineOptions &Opts = {},
                              RunSummary *Summary = nullptr);

/// runPipelineOnFile in two steps, for a caller that rewrites many files
/// on one thread. The last bytes of a rewritten file's output are its
/// provenance record's digest of the input, which is computed last: start()
/// does everything but those bytes (reads, runs, writes the rest of the
/// output into its temporary file) and leaves the digest waiting; finish()
/// hashes what is left of it, writes the rest and puts the output in place.
/// Started before the previous file's finish(), a file's digest is taken
/// along by the thread that hashes that file's, in the CPU's second lane
/// (where it has the SHA extensions: two digests cost little more than
/// one), so that a run over many files hashes them two at a time even on one
/// thread. Output bytes are the same either way.
class FileRewrite {
public:
  /// Everything runPipelineOnFile does before the bytes that wait for the
  /// digest; \p Summary is filled in here. Errors are those of
  /// runPipelineOnFile, and the output is then not touched. \p Opts is
  /// copied; what it points to (streams, the pool, what its callbacks
  /// capture) must outlive finish().
  static llvm::Expected<FileRewrite> start(llvm::StringRef InPath,
                                           llvm::StringRef OutPath,
                                           llvm::StringRef Pipeline,
                                           const PipelineOptions &Opts = {},
                                           RunSummary *Summary = nullptr);
  FileRewrite(FileRewrite &&);
  FileRewrite &operator=(FileRewrite &&);
  /// Without finish(): the output is neither created nor changed.
  ~FileRewrite();

  /// Writes the rest of the output and puts it in place (nothing when
  /// start() found nothing to write). Once.
  llvm::Error finish();

private:
  FileRewrite();
  struct State;
  std::unique_ptr<State> S;
};

/// Lower level: runs a parsed pipeline on a model (what the two functions
/// above do between reading and writing). \p Obj is modified in place; on
/// error it may be partially transformed and should be discarded. Write it
/// with writeObjectToBuffer (hotswap/Object/Writer.h) or writeObjectToFile
/// (hotswap/Object/OutputFile.h).
llvm::Error runPassManager(Object &Obj, PassManager &PM,
                           const PipelineOptions &Opts);

/// The kernels of \p Obj as the `kernels` analysis sees them (what
/// print<kernels> prints): target, descriptors, entries, stubs, metadata.
///
/// The result refers into \p Obj (KernelInfo::KDSection, PoolStub::Sec,
/// Result::MetadataSection): it stays valid while \p Obj lives and is not
/// modified. Re-run it after running passes on \p Obj. Inside a pass, use
/// `AM.getResult<KernelsAnalysis>(Obj)` instead, which is cached.
llvm::Expected<KernelsAnalysis::Result> getKernels(Object &Obj);

/// A parsed code object together with its kernels (see analyzeKernels).
struct AnalyzedObject {
  /// The model; it borrows the bytes of the buffer it was read from.
  std::unique_ptr<Object> Obj;
  /// Refers into *Obj (which is heap-allocated: moving an AnalyzedObject
  /// keeps it valid).
  KernelsAnalysis::Result Kernels;
};

/// Parses \p Input and finds its kernels. The returned object borrows
/// \p Input's bytes: the buffer must outlive the result.
llvm::Expected<AnalyzedObject> analyzeKernels(llvm::MemoryBufferRef Input);

} // namespace hotswap

#endif // HOTSWAP_HOTSWAP_H
