//===- lib/Pipeline/Rewrite.h - One input, any kind -------------*- C++ -*-===//
//
// Private to the Pipeline layer: runs a pipeline on the code objects of an
// input of any kind (code object, offload bundle, compressed bundle, HIP
// host binary) and says how to write the result: an ELF model to lay out
// (code objects, hosts) or new bytes (bundles), or nothing when the output
// is the input.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_PIPELINE_REWRITE_H
#define HOTSWAP_LIB_PIPELINE_REWRITE_H

#include "hotswap/Hotswap.h"
#include "hotswap/Object/Layout.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <vector>

namespace hotswap {
namespace pipeline {

/// The pipeline text and the registry that parses it (the caller's, or a
/// PassBuilder of our own).
class PipelineText {
public:
  PipelineText(llvm::StringRef Text, const PipelineOptions &Opts);
  /// A new PassManager for one code object (passes keep state per run).
  llvm::Expected<PassManager> parse() const;
  bool empty() const { return Text.empty(); }

private:
  std::string Text;
  std::optional<PassBuilder> Own;
  const PassRegistry *Registry;
};

/// The result of one input.
struct Rewritten {
  /// Set for code objects and hosts: the model to write, laid out.
  std::unique_ptr<Object> Model;
  std::optional<Layout> ModelLayout;
  /// Set for bundles that changed: their new bytes.
  std::optional<std::vector<uint8_t>> Bytes;

  /// The output's size and how to render it over the input's bytes (see
  /// OutputImage): the model's layout, the new bytes, or the input itself.
  OutputImage image(llvm::ArrayRef<uint8_t> Input) const;
};

/// Runs \p P on every code object of \p Input.
llvm::Expected<Rewritten> rewriteInput(llvm::ArrayRef<uint8_t> Input,
                                       const PipelineText &P,
                                       const PipelineOptions &Opts,
                                       RunSummary &Summary);

/// Runs \p P on one code object (the whole input, or a container's entry
/// with Opts already redirected by the caller) and lays it out. \p Unfit,
/// when given, receives the passes skipped because they do not fit the code
/// object (PassContext::Unfit).
llvm::Expected<Rewritten>
rewriteCodeObject(llvm::ArrayRef<uint8_t> Input, const PipelineText &P,
                  const PipelineOptions &Opts, bool &Changed,
                  std::vector<UnfitPass> *Unfit = nullptr);

/// runPassManager, handing on PassContext::Unfit to \p Unfit when given.
llvm::Error runPasses(Object &Obj, PassManager &PM, const PipelineOptions &Opts,
                      std::vector<UnfitPass> *Unfit);

/// Fails when a pass of \p P that needs some code object of the input fit
/// none of those that ran (RunSummary::Unfit).
llvm::Error checkPassesFit(const PipelineText &P, const RunSummary &Summary);

/// Runs \p P on every AMDGPU code object of the bundle \p Bytes (plain or
/// compressed). \p Where names the bundle in messages ("" for a bundle that
/// is the input). nullopt: nothing changed. With Opts.JSON, each entry's
/// print<...> JSON goes to \p JSONOut when given (a host collects those of
/// all its bundles into one array), else the bundle prints its own array.
llvm::Expected<std::optional<std::vector<uint8_t>>>
rewriteBundle(llvm::ArrayRef<uint8_t> Bytes, llvm::StringRef Where,
              const PipelineText &P, const PipelineOptions &Opts,
              RunSummary &Summary,
              std::vector<llvm::json::Value> *JSONOut = nullptr);

/// Prints \p Entries as one JSON array to Opts.PrintOut (nothing when there
/// are none).
void printJSONEntries(std::vector<llvm::json::Value> &Entries,
                      const PipelineOptions &Opts);

} // namespace pipeline
} // namespace hotswap

#endif // HOTSWAP_LIB_PIPELINE_REWRITE_H
