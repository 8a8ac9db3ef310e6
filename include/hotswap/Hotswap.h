//===- hotswap/Hotswap.h - Library entry points -----------------*- C++ -*-===//
//
// The embedding API: run a textual pipeline on a code object held in memory
// or in a file. The library never prints and never exits: errors come back
// as llvm::Error, warnings through PipelineOptions::Warn.
//
//   auto Out = hotswap::runPipeline(In, "trampoline,stub-syms", {});
//   if (!Out) report(toString(Out.takeError()));
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_HOTSWAP_H
#define HOTSWAP_HOTSWAP_H

#include "hotswap/Pass/PassBuilder.h"
#include "hotswap/Pass/PassInstrumentation.h"
#include "hotswap/Pass/Statistics.h"

#include "llvm/Support/MemoryBuffer.h"

#include <functional>

namespace hotswap {

/// Library version, "MAJOR.MINOR.PATCH".
llvm::StringRef getVersionString();

struct PipelineOptions {
  /// Receives every warning (default: dropped).
  std::function<void(const llvm::Twine &)> Warn;
  /// Unmet preconditions and best-effort failures become errors.
  bool Strict = false;
  /// Run `verify` after every pass that changed the object.
  bool VerifyEach = false;
  /// Where print<...> passes write (default: discarded).
  llvm::raw_ostream *PrintOut = nullptr;
  bool JSON = false;
  /// Pass registry to parse with (default: the built-in passes). Use it to
  /// add passes of your own (PassBuilder::registerPass).
  const PassBuilder *Builder = nullptr;
  /// Extra instrumentation callbacks.
  PassInstrumentation *Instrumentation = nullptr;
  /// Receives the counters of the run (-stats).
  Statistics *StatsOut = nullptr;
};

/// Parses \p Input, runs \p Pipeline and returns the bytes of the result.
/// When nothing changed, the result is byte-identical to the input.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
runPipeline(llvm::MemoryBufferRef Input, llvm::StringRef Pipeline,
            const PipelineOptions &Opts = {});

/// Same, from file to file ("-" for stdin/stdout). \p OutPath may equal
/// \p InPath; it is replaced atomically and left untouched on any error.
/// An empty \p OutPath runs the pipeline without writing.
llvm::Error runPipelineOnFile(llvm::StringRef InPath, llvm::StringRef OutPath,
                              llvm::StringRef Pipeline,
                              const PipelineOptions &Opts = {});

/// Lower level: runs a parsed pipeline on a model (what the two functions
/// above do between reading and writing).
llvm::Error runPassManager(Object &Obj, PassManager &PM,
                           const PipelineOptions &Opts);

} // namespace hotswap

#endif // HOTSWAP_HOTSWAP_H
