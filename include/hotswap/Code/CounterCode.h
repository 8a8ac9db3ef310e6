//===- hotswap/Code/CounterCode.h - Code that counts a block ----*- C++ -*-===//
//
// The code instrument (hotswap/Passes/Instrument.h) inserts before a block
// to count its runs, for targets with scalar atomics (the gfx9 family):
//
//   s_getpc_b64     s[a:a+1]          ; the address after this instruction
//   s_mov_b32       sc, DISTANCE      ; a literal: counter - that address
//   s_mov_b64       s[d:d+1], 1
//   s_atomic_add_x2 s[d:d+1], s[a:a+1], sc
//   s_waitcnt       lgkmcnt(0)
//
// 28 bytes that write five SGPRs and nothing else (no VGPR, EXEC, VCC, M0
// or SCC) and add 1 to a 64-bit counter once per wave. The only code whose
// bytes depend on where it is: DISTANCE is written once the code is placed.
// Counting lanes, s_mov_b64 becomes
//
//   s_bcnt1_i32_b64 sd, exec          ; the active lanes (writes SCC)
//   s_mov_b32       sd+1, 0
//
// (32 bytes; SCC written too).
//
// counterCodeTarget() is what verify checks: decoded from the bytes, the
// code is exactly that shape, its registers apart, and it adds to the
// counter it returns.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_COUNTERCODE_H
#define HOTSWAP_CODE_COUNTERCODE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hotswap {
namespace amdgpu {
class TargetMC;
} // namespace amdgpu
namespace code {

/// The distance the code is assembled with before it is placed (a literal,
/// never an inline constant), and where its 4 bytes are in the code.
inline constexpr uint32_t CounterDistancePlaceholder = 0x7fffffff;
inline constexpr size_t CounterDistanceAt = 8;

/// What a counter counts: the waves that run the block, or their active
/// lanes (EXEC's lanes, each run).
enum class CounterUnit : uint8_t { Wave, Lane };

/// The code as lines of assembly with the site planner's placeholders
/// (%sp0 = s[a:a+1], %s0 = sc, %sp1 = s[d:d+1]; SitePlanner.h), the
/// distance being CounterDistancePlaceholder.
std::vector<std::string> counterCodeLines(CounterUnit Unit = CounterUnit::Wave);

struct CounterTarget {
  /// The counter's address.
  uint64_t Counter = 0;
  CounterUnit Unit = CounterUnit::Wave;
};

/// The counter that \p Bytes, counter code at \p Addr, adds to, and what
/// it adds; an error saying how the bytes differ from counter code.
llvm::Expected<CounterTarget> counterCodeTarget(const amdgpu::TargetMC &MC,
                                                llvm::ArrayRef<uint8_t> Bytes,
                                                uint64_t Addr);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_COUNTERCODE_H
