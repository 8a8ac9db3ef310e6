//===- hotswap/Passes/StubRetarget.h - A kernel's stub led elsewhere -*- C++
//-*-===//
//
// A pass that gives a kernel new code (swap-kernels: a rebuilt kernel;
// clone-kernels, patch-insns, instrument: a copy) while the kernel enters
// through a stub of trampoline's (or will: a pending stub) leads the stub
// to the new code instead of repointing the descriptor past it: the stub
// keeps its slot, its prologue and, while the new code is in its reach,
// its form; only its jump changes (code::chooseStubForm, the stub
// encoder). A descriptor that enters the stub does so still, with the
// effects code::enterThroughStub gives (a raised SGPR granule, a floor for
// .sgpr_count); a pending stub is left to patch-descriptors.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_STUBRETARGET_H
#define HOTSWAP_PASSES_STUBRETARGET_H

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/Pass/Pass.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/TargetAnalysis.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace hotswap {

/// The stub a kernel enters through, or that patch-descriptors will make it
/// enter through (none: the descriptor enters its code).
const PoolStub *stubOf(const KernelInfo &K);

/// One stub encoder per stub prologue (stubs keep theirs).
class StubEncoders {
public:
  StubEncoders(const Object &Obj, TargetAnalysis::Result &Target)
      : Obj(Obj), Target(Target) {}
  llvm::Expected<amdgpu::StubEncoder &> forStub(const PoolStub &S);

private:
  const Object &Obj;
  TargetAnalysis::Result &Target;
  std::map<std::vector<uint8_t>, std::unique_ptr<amdgpu::StubEncoder>> Encoders;
};

/// What retargeting a kernel's stub decided for its descriptor.
struct StubEntry {
  /// Where the descriptor enters: the stub, or (a pending stub) the code.
  uint64_t Entry;
  /// The scratch pair's floor for the metadata .sgpr_count.
  std::optional<uint64_t> SGPRCountFloor;
};

/// Points \p Stub (kernel \p K's) at \p Code, as the header says; \p KD is
/// the descriptor the kernel will have (adjusted when it enters the stub).
/// Errors read "kernel 'K' cannot be <Done>: ..."; statistics are counted
/// under \p PassName.
llvm::Expected<StubEntry>
retargetStub(const KernelInfo &K, const PoolStub &Stub, uint64_t Code,
             amdgpu::KernelDescriptor &KD, const amdgpu::TargetInfo &T,
             StubEncoders &Encoders, llvm::StringRef PassName,
             llvm::StringRef Done, PassContext &Ctx);

} // namespace hotswap

#endif // HOTSWAP_PASSES_STUBRETARGET_H
