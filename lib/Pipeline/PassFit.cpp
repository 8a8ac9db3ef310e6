//===- lib/Pipeline/PassFit.cpp - Passes that need some code object -------===//
//
// A pass may fit only some code objects of an input (Pass::
// needsSomeCodeObject: swap-kernels fits those whose target is its file's).
// The pass manager skips it on the others and says so; here the skips of
// all code objects of an input are counted, and an input none of whose code
// objects fit the pass fails.
//
//===----------------------------------------------------------------------===//

#include "Rewrite.h"

#include "hotswap/Support/Error.h"

using namespace llvm;
using namespace hotswap;

void RunSummary::addUnfit(ArrayRef<UnfitPass> Skips, StringRef Entry) {
  for (const UnfitPass &U : Skips) {
    auto [It, New] = Unfit.try_emplace(U.Position);
    // The first code object, or the first nearer to fitting than it.
    if (New || U.Nearness > It->second.First.Nearness) {
      It->second.First = U;
      if (!Entry.empty())
        It->second.First.Why = (Entry + ": " + U.Why).str();
    }
    ++It->second.CodeObjects;
  }
}

Error pipeline::checkPassesFit(const PipelineText &P,
                               const RunSummary &Summary) {
  Expected<PassManager> PM = P.parse();
  if (!PM)
    return PM.takeError();
  const unsigned Ran = Summary.CodeObjects - Summary.Failed;
  for (size_t I = 0; I != PM->size(); ++I) {
    const Pass &Pass = *PM->passes()[I];
    if (!Pass.needsSomeCodeObject())
      continue;
    auto It = Summary.Unfit.find(I);
    const unsigned Unfit =
        It == Summary.Unfit.end() ? 0 : It->second.CodeObjects;
    if (Unfit < Ran)
      continue;
    std::string Text;
    raw_string_ostream OS(Text);
    Pass.printPipeline(OS);
    if (Ran == 0)
      return makeError("pass '" + Text +
                       "' fits no code object: none of the input ran");
    if (Summary.Kind == bundle::InputKind::CodeObject ||
        Summary.Kind == bundle::InputKind::Unknown)
      return makeError("pass '" + Text +
                       "' cannot run: " + It->second.First.Why);
    return makeError("pass '" + Text + "' fits none of the " + Twine(Ran) +
                     " code objects of the input (" + It->second.First.Why +
                     ")");
  }
  return Error::success();
}
