//===- lib/Passes/KernelsCompare.cpp - Kept versus fresh analyses ---------===//
//
// KernelsAnalysis::Result::firstDifference: field by field, what a pass
// that kept the kernels analysis up to date (instead of having it
// recomputed) got wrong. Used by -verify-analysis-preservation.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/Kernels.h"

#include "hotswap/Support/Format.h"

#include "llvm/ADT/Twine.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace {
/// Collects the first difference, naming the field.
class Differ {
public:
  template <typename T>
  void field(const Twine &What, const T &Kept, const T &Fresh) {
    if (First.empty() && !(Kept == Fresh))
      First = What.str();
  }
  bool found() const { return !First.empty(); }
  std::string First;
};

std::string show(const std::optional<uint64_t> &V) {
  return V ? hex(*V) : std::string("none");
}

std::string show(const std::optional<unsigned> &V) {
  return V ? std::to_string(*V) : std::string("none");
}

void stub(Differ &D, const Twine &What, const std::optional<PoolStub> &A,
          const std::optional<PoolStub> &B) {
  D.field(What + " (present)", A.has_value(), B.has_value());
  if (!A || !B)
    return;
  D.field(What + ".address", A->Addr, B->Addr);
  D.field(What + ".section", A->Sec, B->Sec);
  D.field(What + ".dual", A->Dual, B->Dual);
  D.field(What + ".form", unsigned(A->Decoded.Form), unsigned(B->Decoded.Form));
  D.field(What + ".target", A->Decoded.Target, B->Decoded.Target);
  D.field(What + ".sgpr", A->Decoded.SGPR, B->Decoded.SGPR);
  D.field(What + ".body_size", A->Decoded.BodySize, B->Decoded.BodySize);
  D.field(What + ".prologue_size", A->Decoded.PrologueSize,
          B->Decoded.PrologueSize);
  D.field(What + ".second_half_target (" + show(A->Decoded.HalfTarget2) +
              " kept, " + show(B->Decoded.HalfTarget2) + " fresh)",
          A->Decoded.HalfTarget2, B->Decoded.HalfTarget2);
}

void kernelMD(Differ &D, const Twine &What, const KernelMD *A,
              const KernelMD *B) {
  D.field(What + " (present)", A != nullptr, B != nullptr);
  if (!A || !B)
    return;
  D.field(What + ".name", A->Name, B->Name);
  D.field(What + ".symbol", A->Symbol, B->Symbol);
  D.field(What + ".note", A->Note, B->Note);
  D.field(What + ".index", A->Index, B->Index);
  for (unsigned F = 0; F < NumKernelFields; ++F) {
    KernelField KF = static_cast<KernelField>(F);
    D.field(What + "." + kernelFieldKey(KF) + " (" + show(A->get(KF)) +
                " kept, " + show(B->get(KF)) + " fresh)",
            A->get(KF), B->get(KF));
  }
}

std::array<uint8_t, kd::Size> bytesOf(const KernelDescriptor &KD) {
  std::array<uint8_t, kd::Size> B;
  KD.write(B);
  return B;
}
} // namespace

std::optional<std::string>
KernelsAnalysis::Result::firstDifference(const Result &Fresh) const {
  Differ D;
  D.field("target", Target.targetID(), Fresh.Target.targetID());
  D.field("metadata section", MetadataSection, Fresh.MetadataSection);
  D.field("metadata (present)", Metadata.has_value(),
          Fresh.Metadata.has_value());
  D.field("number of kernels", Kernels.size(), Fresh.Kernels.size());
  D.field("number of pool stubs", PoolStubs.size(), Fresh.PoolStubs.size());
  for (size_t I = 0; !D.found() && I < PoolStubs.size(); ++I)
    stub(D, "pool stub " + Twine(I), PoolStubs[I], Fresh.PoolStubs[I]);
  for (size_t I = 0; !D.found() && I < Kernels.size(); ++I) {
    const KernelInfo &A = Kernels[I], &B = Fresh.Kernels[I];
    std::string K = "kernel '" + A.Name + "': ";
    D.field(K + "name", A.Name, B.Name);
    D.field(K + "descriptor symbol", A.KDSymbol, B.KDSymbol);
    D.field(K + "descriptor address", A.KDAddr, B.KDAddr);
    D.field(K + "descriptor section", A.KDSection, B.KDSection);
    D.field(K + "descriptor bytes", bytesOf(A.KD), bytesOf(B.KD));
    D.field(K + "entry", A.Entry, B.Entry);
    stub(D, K + "entry stub", A.EntryStub, B.EntryStub);
    D.field(K + "code entry", A.CodeEntry, B.CodeEntry);
    stub(D, K + "pending stub", A.PendingStub, B.PendingStub);
    kernelMD(D, K + "metadata", A.MD, B.MD);
    D.field(K + "live-in SGPRs (" + Twine(A.LiveInSGPRs) + " kept, " +
                Twine(B.LiveInSGPRs) + " fresh)",
            A.LiveInSGPRs, B.LiveInSGPRs);
    D.field(K + "allocated SGPRs (" + show(A.AllocatedSGPRs) + " kept, " +
                show(B.AllocatedSGPRs) + " fresh)",
            A.AllocatedSGPRs, B.AllocatedSGPRs);
    D.field(K + "special SGPRs (" + Twine(A.SpecialSGPRs) + " kept, " +
                Twine(B.SpecialSGPRs) + " fresh)",
            A.SpecialSGPRs, B.SpecialSGPRs);
  }
  if (!D.found())
    return std::nullopt;
  return D.First;
}
