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

#include "hotswap/Object/Reader.h"
#include "hotswap/Object/OutputFile.h"
#include "hotswap/Object/Writer.h"
#include "hotswap/Passes/PassBuilder.h"
#include "hotswap/Pass/PassInstrumentation.h"
#include "hotswap/Pass/Statistics.h"
#include "hotswap/Passes/Kernels.h"

#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <memory>

namespace hotswap {

/// Library version, "MAJOR.MINOR.PATCH" (the CMake package version).
llvm::StringRef getVersionString();

/// How a pipeline runs. Every member is optional; a default-constructed
/// PipelineOptions behaves like `hotswap-opt -passes=...` without flags,
/// except that nothing is printed.
struct PipelineOptions {
  /// Receives every warning (e.g. stub-syms finding a stub's name taken by
  /// another symbol). Passes skipped because their invariant holds or their
  /// precondition is unmet are reported to Instrumentation->SkippedPass, not
  /// here. Called on the calling thread, during the run; the Twine is
  /// only valid during the call. Default: warnings are dropped.
  std::function<void(const llvm::Twine &)> Warn;
  /// Unmet preconditions and best-effort failures become errors instead of
  /// skipped passes and warnings (hotswap-opt --strict).
  bool Strict = false;
  /// Run `verify` after every pass that changed the object; the first
  /// failure ends the run with an error naming the pass (-verify-each).
  bool VerifyEach = false;
  /// Where print<...> passes write. Default: discarded.
  llvm::raw_ostream *PrintOut = nullptr;
  /// print<kernels> writes JSON instead of text (--kernels-format=json).
  bool JSON = false;
  /// Pass registry used to parse the pipeline. Default: a fresh PassBuilder
  /// with the built-in passes. To use passes of your own, register them on a
  /// PassBuilder (PassBuilder::registerPass) and point this at it; it must
  /// outlive the call.
  const PassBuilder *Builder = nullptr;
  /// Extra callbacks around every pass. Must outlive the call.
  PassInstrumentation *Instrumentation = nullptr;
  /// When set, receives the counters of the run (hotswap-opt -stats), also
  /// when the run fails.
  Statistics *StatsOut = nullptr;
  /// Workers for parallel work inside the run (SGPR scans of many kernels);
  /// null does everything on the calling thread. Output bytes never depend
  /// on it. The pool may be shared by concurrent runs; it must outlive the
  /// call.
  llvm::ThreadPoolInterface *ThreadPool = nullptr;
};

/// Parses \p Input as an AMDGPU code object, runs \p Pipeline (the text of
/// `-passes=`, e.g. "trampoline,stub-syms"; empty runs nothing) and returns
/// the bytes of the result in a new buffer.
///
/// Requires: nothing of \p Input beyond being readable for the duration of
/// the call (it need not be aligned or null-terminated).
/// Guarantees: on success the result is a complete code object; when no pass
/// changed anything it is byte-identical to \p Input. On failure the error
/// says which element of the pipeline, which pass or which part of the input
/// is at fault.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
runPipeline(llvm::MemoryBufferRef Input, llvm::StringRef Pipeline,
            const PipelineOptions &Opts = {});

/// Same, from file to file ("-" for stdin/stdout). \p OutPath may equal
/// \p InPath. The output is written to a temporary file and renamed over
/// \p OutPath only after everything succeeded: on any error \p OutPath is
/// left untouched (and not created). An empty \p OutPath runs the pipeline
/// without writing (useful for print<...> and verify).
llvm::Error runPipelineOnFile(llvm::StringRef InPath, llvm::StringRef OutPath,
                              llvm::StringRef Pipeline,
                              const PipelineOptions &Opts = {});

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
