//===- hotswap/Code/Functions.h - The functions of a code object -*- C++
//-*-===//
//
// Every kernel and device function of a code object and its byte range, and
// what lies between them. Kernels are given by their code entries (from
// their descriptors, found by the kernels analysis); device functions are
// the STT_FUNC symbols of executable sections. A function's range is its
// symbol's size when there is one, else up to the next function or the end
// of its section. Code this tool added for kernel entries (the stub pool,
// `.hotswap.text`) is not a function.
//
// Between functions lies padding: zeros, s_nop runs, or the s_code_end tail
// LLVM writes after the last function (which the instruction prefetcher may
// read). Anything else there is reported as unclaimed bytes.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_FUNCTIONS_H
#define HOTSWAP_CODE_FUNCTIONS_H

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Object/Object.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace code {

enum class FunctionKind : uint8_t { Kernel, Device };

struct CodeFunction {
  std::string Name;
  FunctionKind Kind = FunctionKind::Device;
  const Section *Sec = nullptr;
  uint64_t Begin = 0, End = 0;
  /// Whether End comes from the symbol's size (else from what follows).
  bool SizeFromSymbol = false;
  /// Runs in wave32 mode: a kernel whose descriptor says so, a device
  /// function of an object whose kernels all do.
  bool Wave32 = false;
  /// A kernel that preloads kernargs on a target whose firmware may start
  /// it at Begin + 256 (its first 256 bytes are the compatibility header).
  bool PreloadHeader = false;

  uint64_t size() const { return End - Begin; }
  bool contains(uint64_t A) const { return A >= Begin && A < End; }
};

enum class GapKind : uint8_t { Zeros, Nops, CodeEnd, Unclaimed };
llvm::StringRef gapKindName(GapKind K);

/// Bytes of an executable section outside every function.
struct CodeGap {
  const Section *Sec = nullptr;
  uint64_t Begin = 0, End = 0;
  GapKind Kind = GapKind::Unclaimed;
};

/// A kernel's code entry, from its descriptor.
struct KernelEntry {
  std::string Name;
  uint64_t Entry = 0;
  bool Wave32 = false;
  /// See CodeFunction::PreloadHeader.
  bool PreloadHeader = false;
};

struct FunctionMap {
  /// By address; ranges do not overlap.
  std::vector<CodeFunction> Functions;
  std::vector<CodeGap> Gaps;
  /// Facts that did not add up (a symbol's size reaching into the next
  /// function, a kernel entry outside every executable section).
  std::vector<std::string> Findings;

  /// The function whose range holds \p Addr, or null.
  const CodeFunction *containing(uint64_t Addr) const;
  /// The function that starts at \p Addr, or null.
  const CodeFunction *startingAt(uint64_t Addr) const;
  size_t indexOf(const CodeFunction &F) const { return &F - Functions.data(); }
};

/// The functions of \p Obj: its kernels (\p Kernels) and the STT_FUNC
/// symbols of its executable sections. \p MC, when given, classifies the
/// gaps between functions (decoding them); without it, non-zero gaps are
/// unclaimed.
FunctionMap findFunctions(const Object &Obj,
                          llvm::ArrayRef<KernelEntry> Kernels,
                          const amdgpu::TargetMC *MC);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_FUNCTIONS_H
