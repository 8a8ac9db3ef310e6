//===- hotswap/Passes/TargetAnalysis.h - The object's target ----*- C++ -*-===//
//
// target (analysis)
//   The object's AMDGPU processor (TargetInfo, from e_flags, EI_OSABI and
//   EI_ABIVERSION) and this run's LLVM MC state for it (TargetMC), created
//   on first use. Every MC operation of a run goes through this one
//   TargetMC; nothing is shared with other runs but the immutable tables.
//   Built-in passes never change the ELF header and preserve it.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_TARGETANALYSIS_H
#define HOTSWAP_PASSES_TARGETANALYSIS_H

#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Pass/AnalysisManager.h"

#include <memory>
#include <optional>
#include <string>

namespace hotswap {

class TargetAnalysis {
public:
  static AnalysisKey Key;
  static llvm::StringRef name() { return "target"; }

  class Result {
  public:
    explicit Result(amdgpu::TargetInfo Info) : Info(std::move(Info)) {}
    const amdgpu::TargetInfo &info() const { return Info; }
    /// This run's MC state for the target, created on first use.
    llvm::Expected<amdgpu::TargetMC &> mc();
    /// Whether mc() created it, and how many instructions it decoded.
    bool hasMC() const { return MC != nullptr; }
    uint64_t instructionsDecoded() const { return MC ? MC->decodeCount() : 0; }
    /// -verify-analysis-preservation: the processor, its e_flags features
    /// and the code object version, which all follow from the ELF header.
    std::optional<std::string> firstDifference(const Result &Fresh) const;

  private:
    amdgpu::TargetInfo Info;
    std::unique_ptr<amdgpu::TargetMC> MC;
  };

  static llvm::Expected<Result> run(Object &Obj, AnalysisManager &AM);
};

/// Marks the analyses that only depend on the ELF header and on code bytes
/// (today the target analysis alone) as preserved: for passes that change
/// neither.
PreservedAnalyses &preserveTargetAndCode(PreservedAnalyses &PA);

} // namespace hotswap

#endif // HOTSWAP_PASSES_TARGETANALYSIS_H
