//===- hotswap/Passes/CodeAnalysis.h - Decoded code, per function -*- C++
//-*-===//
//
// code (analysis)
//   The object's functions (code::findFunctions: kernels through their
//   descriptors' code entries, device functions through STT_FUNC symbols)
//   and, per function on demand, its decoded instructions and control-flow
//   graph (code::buildCFG), register liveness (code::computeLiveness) and
//   the memory operations in flight (code::computeWaitCounts).
//
//   Function-level cache: a function's graph and liveness are computed on
//   first request and kept in the result until invalidate(F) drops that
//   function's alone (a pass that edits one function's code keeps the
//   others). The function list itself is an object-level result: a pass
//   that adds or moves functions does not preserve the analysis.
//
//   Nothing in the default pipeline requests this analysis: untouched
//   kernels are never decoded.
//
//   print<cfg;only=REGEX> and print<liveness;only=REGEX> print it
//   (CodePrinters.h); verify-code checks it against independent facts.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_CODEANALYSIS_H
#define HOTSWAP_PASSES_CODEANALYSIS_H

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CFG.h"
#include "hotswap/Code/CallReads.h"
#include "hotswap/Code/Functions.h"
#include "hotswap/Code/Liveness.h"
#include "hotswap/Code/WaitCounts.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/Kernels.h"

#include "llvm/ADT/StringMap.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

class CodeAnalysis {
public:
  static AnalysisKey Key;
  static llvm::StringRef name() { return "code"; }

  /// One function's decoded code.
  struct FunctionCode {
    code::FunctionCFG CFG;
    code::Liveness Live;
    code::WaitCounts Waits;
  };

  class Result {
  public:
    Result(Object &Obj, std::unique_ptr<amdgpu::TargetMC> MC,
           code::FunctionMap Map, amdgpu::Generation Gen);
    Result(Result &&) = default;
    ~Result();

    const code::FunctionMap &functions() const { return Map; }
    amdgpu::TargetMC &mc() const { return *MC; }
    /// A TargetMC of the same target for worker thread \p Worker (0: the
    /// object's own, mc()), made on first use and kept, with what it
    /// decoded, for the next work spread over threads. Called from one
    /// thread, before the work starts.
    llvm::Expected<amdgpu::TargetMC &> workerMC(size_t Worker);
    amdgpu::Generation generation() const { return Gen; }
    /// The bytes of function \p F.
    llvm::ArrayRef<uint8_t> bytes(const code::CodeFunction &F) const;

    /// Function \p I's graph, computed on first use.
    const code::FunctionCFG &cfg(size_t I);
    /// Function \p I's graph, liveness and wait counts computed with \p MC
    /// (the object's own or another TargetMC of the same target: one per
    /// thread), not cached: for clients that spread functions over
    /// threads. Reads only what is shared read-only.
    std::unique_ptr<FunctionCode> computeFunction(size_t I,
                                                  amdgpu::TargetMC &MC) const;
    /// Function \p I's graph, liveness and wait counts, computed on first
    /// use.
    const FunctionCode &function(size_t I);
    /// Whether anything of function \p I is cached. Clients that only look
    /// at a function once (printers, verify-code) drop what they made, so
    /// that memory holds one function at a time.
    bool isComputed(size_t I) const {
      return I < Code.size() && (Code[I] || Graphs[I]);
    }
    /// Drops what is cached for function \p I (its code changed).
    void invalidate(size_t I);

    /// -verify-analysis-preservation: the function list (names, kinds and
    /// ranges) and, for every cached function, its instructions and blocks.
    std::optional<std::string> firstDifference(const Result &Fresh) const;

  private:
    std::unique_ptr<amdgpu::TargetMC> MC;
    std::vector<std::unique_ptr<amdgpu::TargetMC>> WorkerMCs;
    code::FunctionMap Map;
    amdgpu::Generation Gen;
    std::vector<std::unique_ptr<FunctionCode>> Code;
    /// Graphs computed without liveness (cfg()).
    std::vector<std::unique_ptr<code::FunctionCFG>> Graphs;
  };

  static llvm::Expected<Result> run(Object &Obj, AnalysisManager &AM);
};

/// The kernels of \p K as the function map knows them: name, code entry,
/// wave32, preload header.
std::vector<code::KernelEntry> kernelEntries(const KernelsAnalysis::Result &K);

/// What verify's proofs of code a pass placed read off an object, made
/// afresh from its bytes (never the analyses the passes kept): an MC of
/// its target, its functions as the bytes give them, what calls read from
/// the callees' bytes, its kernels by name.
struct ObjectCode {
  std::unique_ptr<amdgpu::TargetMC> MC;
  code::FunctionMap Map;
  std::unique_ptr<code::CallReads> Calls;
  llvm::StringMap<const KernelInfo *> ByName;

  static llvm::Expected<std::unique_ptr<ObjectCode>>
  read(const Object &Obj, const KernelsAnalysis::Result &R);
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_CODEANALYSIS_H
