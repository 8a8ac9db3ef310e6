//===- lib/Passes/SwapMetadata.cpp - A swapped kernel's metadata ----------===//

#include "SwapMetadata.h"

#include "hotswap/AMDGPU/LaunchInterface.h"
#include "hotswap/Passes/SwapRecord.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/STLExtras.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace hotswap::swap;

std::optional<std::string>
swap::incompatibility(const KernelsAnalysis::Result &R, const KernelInfo &K,
                      const KernelsAnalysis::Result &FR, const KernelInfo &RK,
                      StringRef File) {
  auto Bad = [&](const Twine &What) {
    return std::optional<std::string>(What.str());
  };
  if (!R.Metadata || !K.MD)
    return Bad("the code object has no metadata for it");
  if (!FR.Metadata || !RK.MD)
    return Bad("'" + File + "' has no metadata for it");
  // The kernel takes the replacement's descriptor and metadata values: they
  // must agree, or the output would say two things (and fail verify).
  std::vector<std::string> Disagree = metadataDisagreements(*RK.MD, RK.KD);
  if (!Disagree.empty())
    return Bad("in '" + File + "', " + Disagree.front());
  Expected<KernelInterface> A = R.Metadata->interfaceOf(K.KDSymbol);
  if (!A)
    return Bad(toString(A.takeError()));
  Expected<KernelInterface> B = FR.Metadata->interfaceOf(RK.KDSymbol);
  if (!B)
    return Bad("'" + File + "': " + toString(B.takeError()));
  const std::string There = "'" + File.str() + "'";
  if (std::optional<std::string> D = launchDifference(
          {*A, *K.MD, K.KD, "the code object"}, {*B, *RK.MD, RK.KD, There}))
    return Bad(*D);
  return std::nullopt;
}

Expected<std::vector<MetadataEdit>>
swap::metadataEdits(const KernelInfo &K, const KernelInfo &RK,
                    std::optional<uint64_t> SGPRCountFloor, StringRef File) {
  std::vector<MetadataEdit> Out;
  for (KernelField F : TakenFields) {
    const FieldRule Rule = fieldRule(F);
    std::optional<uint64_t> Have = K.MD->get(F), Want = RK.MD->get(F);
    std::optional<uint64_t> HaveM = fieldMeaning(*K.MD, F),
                            WantM = fieldMeaning(*RK.MD, F);
    if (WantM && F == KernelField::SGPRCount && SGPRCountFloor)
      WantM = std::max(*WantM, *SGPRCountFloor);
    if (HaveM == WantM)
      continue;
    if (Rule.Role == FieldRole::Informative && !Have)
      continue;
    if (WantM) {
      Out.push_back({F, *WantM});
      continue;
    }
    if (Rule.Role == FieldRole::Informative)
      continue;
    return makeError("metadata '" + kernelFieldKey(F) + "' is " +
                     fieldValueText(F, HaveM, !Have) + " in the code object, " +
                     fieldValueText(F, WantM, !Want) + " in '" + File +
                     "' (a key cannot be removed)");
  }
  return Out;
}

Error swap::fitMetadata(const KernelsAnalysis::Result &R,
                        const KernelsAnalysis::Result &FR,
                        std::vector<SwapPlan> &Plans) {
  const Section &S = *R.MetadataSection;
  for (;;) {
    // A trial: the section's bytes outlive it unchanged (borrowed, not
    // copied: a Tensile object's note is 49 MB).
    Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(
        S.contents(), S.Orig ? S.Orig->Offset : 0, /*Borrow=*/true);
    if (!MD)
      return MD.takeError();
    for (const SwapPlan &P : Plans) {
      const KernelInfo &K = R.Kernels[P.I];
      Expected<std::vector<MetadataEdit>> Edits =
          metadataEdits(K, FR.Kernels[P.J], std::nullopt, "");
      if (!Edits)
        return Edits.takeError(); // (plans were checked before)
      for (const MetadataEdit &E : *Edits)
        if (!llvm::is_contained(P.Left, E.Field))
          if (Error Err = MD->setField(K.KDSymbol, E.Field, E.Value))
            return Err;
    }
    Expected<NoteRewrite> NR = MD->rewrite();
    if (NR)
      return Error::success();
    std::optional<NoteGrowthError> Growth;
    if (Error E = handleErrors(NR.takeError(), [&](const NoteGrowthError &G) {
          Growth.emplace(G.Symbol, G.Field, G.Value, G.NoteOffset);
        }))
      return E;
    auto It = llvm::find_if(Plans, [&](const SwapPlan &P) {
      return R.Kernels[P.I].KDSymbol == Growth->Symbol;
    });
    if (It == Plans.end())
      return makeError("metadata: internal error: kernel '" + Growth->Symbol +
                       "' has no swap planned");
    if (fieldRule(Growth->Field).Role == FieldRole::Informative) {
      It->Left.push_back(Growth->Field);
      continue;
    }
    for (SwapPlan &P : Plans)
      P.Left.clear();
    return Error::success();
  }
}
