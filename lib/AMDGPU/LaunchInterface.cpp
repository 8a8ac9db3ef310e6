//===- lib/AMDGPU/LaunchInterface.cpp - Comparing launch interfaces -------===//

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

std::optional<std::string> amdgpu::launchDifference(const LaunchSide &A,
                                                    const LaunchSide &B) {
  auto Differs = [&](const Twine &Field, const std::string &Here,
                     const std::string &There) {
    return (Field + " is " + Here + " in " + A.Where + ", " + There + " in " +
            B.Where)
        .str();
  };
  const KernelInterface &IA = A.Interface, &IB = B.Interface;
  if (IA.Args.has_value() != IB.Args.has_value())
    return Differs("'.args'", IA.Args ? "present" : "absent",
                   IB.Args ? "present" : "absent");
  if (IA.Args)
    if (std::optional<std::string> D =
            argsDifference(*IA.Args, *IB.Args, A, B, Differs))
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
  std::map<std::string, std::string> Keys = IA.LaunchKeys;
  Keys.insert(IB.LaunchKeys.begin(), IB.LaunchKeys.end());
  for (const auto &KV : Keys) {
    auto Value = [&](const KernelInterface &I) {
      auto It = I.LaunchKeys.find(KV.first);
      return It == I.LaunchKeys.end() ? std::string("absent") : It->second;
    };
    if (Value(IA) != Value(IB))
      return Differs("'" + KV.first + "'", Value(IA), Value(IB));
  }
  return std::nullopt;
}
