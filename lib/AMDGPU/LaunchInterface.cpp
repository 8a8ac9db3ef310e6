//===- lib/AMDGPU/LaunchInterface.cpp - Swap compatibility ----------------===//

#include "hotswap/AMDGPU/LaunchInterface.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

static std::string valueText(std::optional<uint64_t> V) {
  return V ? std::to_string(*V) : std::string("absent");
}

/// The arguments of \p A and \p B (both have .args).
static std::optional<std::string>
argsDifference(const std::vector<KernelArg> &X, const std::vector<KernelArg> &Y,
               const LaunchSide &A, const LaunchSide &B,
               function_ref<std::string(const Twine &, const std::string &,
                                        const std::string &)>
                   Differs) {
  if (X.size() != Y.size())
    return ("it has " + Twine(X.size()) + " arguments in " + A.Where + ", " +
            Twine(Y.size()) + " in " + B.Where)
        .str();
  for (size_t I = 0; I != X.size(); ++I) {
    std::string Arg = "'.args[" + std::to_string(I) + "]";
    if (X[I].Offset != Y[I].Offset)
      return Differs(Arg + " .offset'", valueText(X[I].Offset),
                     valueText(Y[I].Offset));
    if (X[I].Size != Y[I].Size)
      return Differs(Arg + " .size'", valueText(X[I].Size),
                     valueText(Y[I].Size));
    if (X[I].ValueKind != Y[I].ValueKind) {
      // (Strings from the files: escaped, as launch keys' values are.)
      std::string XS, YS;
      raw_string_ostream XO(XS), YO(YS);
      printEscapedString(X[I].ValueKind, XO);
      printEscapedString(Y[I].ValueKind, YO);
      return Differs(Arg + " .value_kind'", "'" + XS + "'", "'" + YS + "'");
    }
  }
  return std::nullopt;
}

namespace {
/// A launch key the host must honour (besides the arguments and the keys
/// KernelMD has), and what its absence means.
struct LaunchKeyRule {
  llvm::StringLiteral Key;
  /// The value an absent key means, written as KernelInterface writes
  /// values; null when absence is a meaning of its own ("absent": no
  /// required work-group size) or the key is required.
  const char *Absent;
};

/// AMDGPUUsage, "Code Object V3 to V6 Metadata": .kernarg_segment_align is
/// required; .reqd_workgroup_size absent means no requirement;
/// .uniform_work_group_size "is only emitted when value is 1", so absent
/// means 0 (false). The hints (.workgroup_size_hint, .vec_type_hint) are
/// informative.
constexpr LaunchKeyRule LaunchKeyRules[] = {
    {".kernarg_segment_align", nullptr},
    {".reqd_workgroup_size", nullptr},
    {".uniform_work_group_size", "false"},
};

/// A launch key's value by meaning: the booleans LLVM writes as 0/1 or as
/// msgpack booleans are "false"/"true".
std::string canonicalValue(StringRef Key, std::string V) {
  if (Key == ".uniform_work_group_size") {
    if (V == "0")
      return "false";
    if (V == "1")
      return "true";
  }
  return V;
}
} // namespace

FieldRule amdgpu::fieldRule(KernelField F) {
  switch (F) {
  case KernelField::KernargSegmentSize:
  case KernelField::WavefrontSize:
    return {FieldRole::Launch, std::nullopt};
  case KernelField::UsesDynamicStack:
    // Code object v5+, "Indicates if the generated machine code is using a
    // dynamically sized stack": LLVM writes it only where it is true.
    return {FieldRole::Resource, 0};
  case KernelField::AGPRCount:
    // Code object v4+, for processors with AGPRs: none elsewhere.
    return {FieldRole::Resource, 0};
  case KernelField::SGPRSpillCount:
  case KernelField::VGPRSpillCount:
    // Optional, statistics for tools: no runtime launches by them.
    return {FieldRole::Informative, 0};
  default:
    // Required keys: .sgpr_count, .vgpr_count, .group_segment_fixed_size,
    // .private_segment_fixed_size, .max_flat_workgroup_size.
    return {FieldRole::Resource, std::nullopt};
  }
}

std::optional<uint64_t> amdgpu::fieldMeaning(const KernelMD &MD,
                                             KernelField F) {
  if (std::optional<uint64_t> V = MD.get(F))
    return V;
  return fieldRule(F).Absent;
}

std::string amdgpu::fieldValueText(KernelField F, std::optional<uint64_t> V,
                                   bool WasAbsent) {
  if (!V)
    return "absent";
  std::string T = F == KernelField::UsesDynamicStack
                      ? std::string(*V ? "true" : "false")
                      : std::to_string(*V);
  return WasAbsent ? T + " (absent)" : T;
}

std::optional<std::string> amdgpu::launchDifference(const LaunchSide &A,
                                                    const LaunchSide &B) {
  auto Differs = [&](const Twine &Field, const std::string &Here,
                     const std::string &There) {
    return (Field + " is " + Here + " in " + A.Where + ", " + There + " in " +
            B.Where)
        .str();
  };
  const KernelInterface &IA = A.Interface, &IB = B.Interface;
  // No .args: no arguments.
  static const std::vector<KernelArg> NoArgs;
  if (std::optional<std::string> D =
          argsDifference(IA.Args ? *IA.Args : NoArgs,
                         IB.Args ? *IB.Args : NoArgs, A, B, Differs))
    return D;
  for (KernelField F :
       {KernelField::KernargSegmentSize, KernelField::WavefrontSize}) {
    std::optional<uint64_t> Here = A.MD.get(F), There = B.MD.get(F);
    if (Here != There)
      return Differs("'" + kernelFieldKey(F) + "'", valueText(Here),
                     valueText(There));
  }
  if (A.KD.wavefrontSize() != B.KD.wavefrontSize())
    return Differs("the descriptor's wavefront size",
                   std::to_string(A.KD.wavefrontSize()),
                   std::to_string(B.KD.wavefrontSize()));
  if (A.KD.KernargSize != B.KD.KernargSize)
    return Differs("the descriptor's kernarg_size",
                   std::to_string(A.KD.KernargSize),
                   std::to_string(B.KD.KernargSize));
  for (const LaunchKeyRule &Rule : LaunchKeyRules) {
    auto Value = [&](const KernelInterface &I) {
      auto It = I.LaunchKeys.find(Rule.Key.str());
      if (It != I.LaunchKeys.end())
        return canonicalValue(Rule.Key, It->second);
      return Rule.Absent ? std::string(Rule.Absent) + " (absent)"
                         : std::string("absent");
    };
    std::string Here = Value(IA), There = Value(IB);
    // "false (absent)" and "false" mean the same.
    auto Meaning = [](StringRef V) { return V.split(" (absent)").first; };
    if (Meaning(Here) != Meaning(There))
      return Differs("'" + Rule.Key + "'", Here, There);
  }
  return std::nullopt;
}
