//===- lib/Passes/TargetAnalysis.cpp - The object's target ----------------===//

#include "hotswap/Passes/TargetAnalysis.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

AnalysisKey TargetAnalysis::Key;

Expected<TargetAnalysis::Result> TargetAnalysis::run(Object &Obj,
                                                     AnalysisManager &AM) {
  Expected<TargetInfo> TI = getTargetInfo(Obj.Header.Flags, Obj.Header.osABI(),
                                          Obj.Header.abiVersion());
  if (!TI)
    return TI.takeError();
  return Result(std::move(*TI));
}

Expected<TargetMC &> TargetAnalysis::Result::mc() {
  if (!MC) {
    Expected<std::unique_ptr<TargetMC>> M =
        TargetMC::create(Info.MCPU, Info.Features);
    if (!M)
      return M.takeError();
    MC = std::move(*M);
  }
  return *MC;
}

PreservedAnalyses &hotswap::preserveTargetAndCode(PreservedAnalyses &PA) {
  return PA.preserve<TargetAnalysis>();
}

std::optional<std::string>
TargetAnalysis::Result::firstDifference(const Result &Fresh) const {
  // Everything else in TargetInfo is a function of these.
  const TargetInfo &A = Info, &B = Fresh.Info;
  if (A.Mach != B.Mach || A.Name != B.Name)
    return "processor (" + A.Name + " kept, " + B.Name + " fresh)";
  if (A.GenericVersion != B.GenericVersion)
    return std::string("generic version");
  if (A.Xnack != B.Xnack || A.Sramecc != B.Sramecc || A.Features != B.Features)
    return "features (" + A.Features + " kept, " + B.Features + " fresh)";
  if (A.CodeObjectVersion != B.CodeObjectVersion)
    return std::string("code object version");
  return std::nullopt;
}
