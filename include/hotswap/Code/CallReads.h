//===- hotswap/Code/CallReads.h - What a call may read -----------*- C++
//-*-===//
//
// Liveness (Liveness.h) takes a call to read every register unless it is
// told what the callee may read. A direct call (or one through a register
// whose constant target the graph resolved) enters a function of the
// function map; what it may read is every register an instruction of that
// function, or of any function it calls in turn, names as a use (implicit
// uses included, as liveness counts them): no other code runs until the
// call returns. A call into something else, or through a register the
// graph cannot resolve, anywhere among them, or code among them that
// cannot be followed, leaves the call reading everything.
//
// A register nothing of that names is dead across the call: inserted code
// may take it before the call (VGPRs above a kernel's allocation among
// them, where instrument grows the allocation).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_CALLREADS_H
#define HOTSWAP_CODE_CALLREADS_H

#include "hotswap/Code/Functions.h"
#include "hotswap/Code/Registers.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace hotswap {
namespace amdgpu {
class TargetMC;
} // namespace amdgpu
namespace code {

class CallReads {
public:
  /// The bytes of a function of the map (none: not in the object).
  using BytesFn = std::function<std::optional<llvm::ArrayRef<uint8_t>>(
      const CodeFunction &)>;

  CallReads(const amdgpu::TargetMC &MC, const FunctionMap &M, BytesFn Bytes);

  /// What a call to \p Entry may read; none when that is not known.
  std::optional<RegSet> of(uint64_t Entry);

private:
  struct Summary {
    /// Every use of the function's own instructions.
    RegSet Uses;
    /// The functions it calls (entries).
    std::vector<uint64_t> Callees;
    /// An unresolved call, or code that cannot be followed.
    bool Unknown = false;
  };
  const Summary &summary(const CodeFunction &F);

  const amdgpu::TargetMC &MC;
  const FunctionMap &M;
  BytesFn Bytes;
  llvm::DenseMap<uint64_t, Summary> Summaries;
  llvm::DenseMap<uint64_t, std::optional<RegSet>> Results;
};

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_CALLREADS_H
