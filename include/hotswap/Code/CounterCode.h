//===- hotswap/Code/CounterCode.h - Code that counts a block ----*- C++ -*-===//
//
// The code instrument (hotswap/Passes/Instrument.h) inserts before a block
// to count its runs. Three forms, by target (counterForm()).
//
// Scalar, for targets with scalar atomics (the gfx9 family):
//
//   s_getpc_b64     s[a:a+1]          ; the address after this instruction
//   s_mov_b32       sc, DISTANCE      ; a literal: counter - that address
//   s_mov_b64       s[d:d+1], 1
//   s_atomic_add_x2 s[d:d+1], s[a:a+1], sc
//   s_waitcnt       lgkmcnt(0)
//
// 28 bytes that write five SGPRs and nothing else (no VGPR, EXEC, VCC, M0
// or SCC) and add 1 to a 64-bit counter once per wave. Counting lanes,
// s_mov_b64 becomes
//
//   s_bcnt1_i32_b64 sd, exec          ; the active lanes (writes SCC)
//   s_mov_b32       sd+1, 0
//
// (32 bytes; SCC written too).
//
// Global, for gfx10, gfx11 and gfx12 (gfx10.3 and later have no scalar
// atomics; gfx10.1's are not used, one form for the family): one lane adds 1
// with a global atomic, EXEC saved in an SGPR and given back:
//
//   s_waitcnt_depctr 0                ; the guest's ALU results are written
//   s_getpc_b64      s[a:a+1]
//   s_mov_b32        se, exec_lo      ; wave64: s_mov_b64 s[e:e+1], exec
//   s_mov_b32        exec_lo, 1       ;         s_mov_b64 exec, 1
//   v_mov_b32        vo, DISTANCE
//   v_mov_b32        vd, 1
//   v_mov_b32        vd+1, 0
//   global_atomic_add_u64 vo, v[d:d+1], s[a:a+1]
//   s_waitcnt_vscnt  null, 0          ; gfx12: s_wait_storecnt 0
//   s_mov_b32        exec_lo, se      ; wave64: s_mov_b64 exec, s[e:e+1]
//
// On gfx10 the atomic is global_atomic_add_x2, with two guards the
// compiler would put there (GCNHazardRecognizer): `s_waitcnt_vscnt null, 0`
// before it (a guest DS, a branch, then this VMEM: the LDS/branch/VMEM WAR
// hazard) and `s_waitcnt_depctr 0` last (the atomic and the EXEC copy read
// EXEC; a guest v_cmpx writing it next is the gfx10 v_cmpx EXEC WAR
// hazard). The leading wait also covers the SGPRs this code writes that a
// guest VMEM still in flight may read (VMEM to scalar write). 56 bytes, 44
// counting lanes.
//
// 48 bytes (52 on gfx12, whose atomic is 12): three SGPRs (four in wave64)
// and three VGPRs (lane 0 only) free at the block; SCC, VCC and M0
// untouched, EXEC as it was. The leading dependency wait keeps the EXEC
// change from meeting a guest ALU result still in flight (gfx11 partial
// forwarding, gfx12 s_wait_alu). Counting lanes leaves EXEC alone: every
// active lane adds 1 (36 bytes; 40 on gfx12).
//
// Flat, for gfx8 (no scalar atomics, no global instructions; gfx7 would
// take it too, but LLVM 22 does not disassemble gfx6-7 code):
// the counter's address is built in SGPRs, moved to VGPRs, and one lane
// adds 1 with a flat atomic:
//
//   s_getpc_b64        s[a:a+1]
//   s_add_u32          sa, sa, DISTANCE   ; writes SCC
//   s_addc_u32         sa+1, sa+1, 0
//   s_mov_b64          s[e:e+1], exec
//   s_mov_b64          exec, 1
//   v_mov_b32          vp, sa
//   v_mov_b32          vp+1, sa+1
//   v_mov_b32          vd, 1
//   v_mov_b32          vd+1, 0
//   flat_atomic_add_x2 v[p:p+1], v[d:d+1]
//   s_waitcnt          vmcnt(0) lgkmcnt(0) ; a flat operation counts in both
//   s_mov_b64          exec, s[e:e+1]
//
// 56 bytes: four SGPRs, SCC and four VGPRs (lane 0 only) free at the
// block. None of gfx8's hazards (LLVM's GCNHazardRecognizer) concerns
// these instructions: the SMRD one is gfx6's, the VMEM ones need a VALU
// writing an SGPR the VMEM reads or store data over 64 bits. Counting
// lanes leaves EXEC alone (44 bytes).
//
// Based, for the gfx9 family counting waves, where four SGPRs above the
// kernel's allocation can be reserved for the whole kernel (the site
// planner's %rp0, %rp1: SitePlanner.h): the kernel's first block sets up
// the base (its first counter) and the one it adds, once,
//
//   s_getpc_b64     s[b:b+1]
//   s_add_u32       sb, sb, DISTANCE  ; writes SCC (dead at the entry)
//   s_addc_u32      sb+1, sb+1, 0
//   s_mov_b64       s[d:d+1], 1
//   s_atomic_add_x2 s[d:d+1], s[b:b+1], 0
//
// (28 bytes), and every other block of the kernel takes one instruction:
//
//   s_atomic_add_x2 s[d:d+1], s[b:b+1], 8*N  ; its counter, N after the first
//
// 8 bytes, no register written. Nothing waits for the atomic: it returns
// nothing, and one more operation in flight only makes a guest's
// s_waitcnt wait longer, never shorter (the count it waits for to drop to
// N counts the guest's operations and this one). The offset reaches
// 2^20 - 8: 131072 counters per kernel.
//
// The global form is based likewise on gfx10, gfx11 and gfx12, counting
// waves: two SGPR pairs above every SGPR the kernel names (gfx10+
// allocates them all to every wave: nothing grows) and a VGPR pair above
// every VGPR it names (the VGPR allocation may grow). The entry sets up
// the base and, in every lane, the VGPR pair to 1 and 0:
//
//   s_getpc_b64  s[b:b+1]
//   s_add_u32    sb, sb, DISTANCE
//   s_addc_u32   sb+1, sb+1, 0
//   v_mov_b32    vd, 1
//   v_mov_b32    vd+1, 0
//
// and every block (the entry's too) runs, for one lane:
//
//   s_mov_b32        se, exec_lo      ; wave64: s_mov_b64 s[e:e+1], exec
//   s_mov_b32        exec_lo, 1
//   global_atomic_add_u64 vd+1, v[d:d+1], s[b:b+1] offset:8*N-BIAS
//   s_waitcnt_depctr 0 (gfx10) or depctr_sa_sdst(0) (gfx11+)
//   s_mov_b32        exec_lo, se
//
// 24 bytes (28 on gfx12, whose atomic is 12; gfx10 calls it
// global_atomic_add_x2), with the guards its seam needs from the site
// planner. The offset is signed on gfx10 and gfx11: the base lies 2048
// (4096) bytes past the kernel's first counter, and the offsets reach 512
// counters on gfx10, 1024 on gfx11; a kernel with more blocks takes the
// self-contained form.
//
// In every form the only bytes that depend on where the code is are
// DISTANCE's, written once the code is placed (counterLayout()).
//
// counterCodeTarget() is what verify checks: decoded from the bytes, the
// code is exactly one of those shapes, its registers apart, and it adds to
// the counter it returns.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_COUNTERCODE_H
#define HOTSWAP_CODE_COUNTERCODE_H

#include "hotswap/AMDGPU/TargetInfo.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace amdgpu {
class TargetMC;
} // namespace amdgpu
namespace code {

/// The distance the code is assembled with before it is placed (a literal,
/// never an inline constant), and where its 4 bytes are in scalar code
/// (counterLayout() for both forms).
inline constexpr uint32_t CounterDistancePlaceholder = 0x7fffffff;
inline constexpr size_t CounterDistanceAt = 8;

/// What a counter counts: the waves that run the block, or their active
/// lanes (EXEC's lanes, each run).
enum class CounterUnit : uint8_t { Wave, Lane };

enum class CounterForm : uint8_t { Scalar, Global, Flat };

/// The form of counter code for generation \p Gen; none where it is not
/// built (gfx6-7: LLVM 22 does not disassemble them, so no copy is made).
/// gfx1250 takes the global form of gfx12 (s_getpc_b64 is s_get_pc_i64
/// there); a kernel that switches VGPR banks is refused by the planner.
std::optional<CounterForm> counterForm(amdgpu::Generation Gen);

/// Which code: its form, unit, and for the global form the wave size and
/// generation (the EXEC moves and the wait differ).
struct CounterKind {
  CounterForm Form = CounterForm::Scalar;
  CounterUnit Unit = CounterUnit::Wave;
  bool Wave32 = false;
  amdgpu::Generation Gen = amdgpu::Generation::GFX9;
  /// The based form (scalar, counting waves).
  bool Based = false;
};

/// Whether the based form is built for \p Kind's form and generation
/// (counting waves: gfx9, gfx10, gfx11, gfx12, gfx1250).
bool hasBasedForm(const CounterKind &Kind);

/// The based form's reach: the offset of its last counter from the first
/// (the atomic's immediate offset: 20 bits on gfx9, 12 and 13 signed ones
/// on gfx10 and gfx11, 24 signed ones on gfx12 and gfx1250, of which 20
/// are used).
uint32_t basedCounterReach(const CounterKind &Kind);
/// How far past the kernel's first counter its base is: the negative half
/// of a signed offset's reach (2048 on gfx10, 4096 on gfx11; else 0).
uint32_t basedCounterBias(const CounterKind &Kind);

/// The based form's code at the kernel's first instruction (%rp0 the base;
/// scalar: %rp1 the one; global: %rvp0 the one and a zero, %rp1 EXEC's
/// copy), the distance being CounterDistancePlaceholder;
/// counterCodeLines() gives the code of the other blocks (%nth the
/// number of blocks counted before).
std::vector<std::string> basedCounterEntryLines(const CounterKind &Kind);

/// The code as lines of assembly with the site planner's placeholders
/// (SitePlanner.h; scalar: %sp0 = s[a:a+1], %s0 = sc, %sp1 = s[d:d+1];
/// global: %sp0 = s[a:a+1], %s0 or %sp1 = EXEC's copy, %v0 = vo,
/// %vp0 = v[d:d+1]), the distance being CounterDistancePlaceholder.
std::vector<std::string> counterCodeLines(const CounterKind &Kind);
inline std::vector<std::string>
counterCodeLines(CounterUnit Unit = CounterUnit::Wave) {
  return counterCodeLines(CounterKind{CounterForm::Scalar, Unit});
}

struct CounterLayout {
  /// The offset of the address s_getpc_b64 returns (the distance is from
  /// there), and of the distance's 4 bytes.
  size_t PCAt = 0, DistanceAt = 0;
};
CounterLayout counterLayout(const CounterKind &Kind);

/// What based code reads: the base and the one, as registers are printed
/// ("s[20:21]").
struct BasedRegisters {
  std::string Base, One;
  /// Their register units (Registers.h), both pairs.
  llvm::BitVector Units;
  bool operator==(const BasedRegisters &O) const {
    return Base == O.Base && One == O.One;
  }
};

struct CounterTarget {
  /// The counter's address (based code other than the entry's: its
  /// offset from the base, which the entry's code sets up).
  uint64_t Counter = 0;
  CounterUnit Unit = CounterUnit::Wave;
  /// Global code that moves only EXEC_LO (right only in wave32 kernels).
  bool ExecLo = false;
  /// Based code: the registers it reads, and whether it is the entry's
  /// (which sets them up: the base is its Counter).
  std::optional<BasedRegisters> Based = std::nullopt;
  bool SetsBase = false;
  /// The base the entry's code sets up (its own counter is an offset from
  /// it).
  uint64_t BaseAddr = 0;
};

/// The counter that \p Bytes, counter code at \p Addr, adds to, and what
/// it adds; an error saying how the bytes differ from counter code.
llvm::Expected<CounterTarget> counterCodeTarget(const amdgpu::TargetMC &MC,
                                                llvm::ArrayRef<uint8_t> Bytes,
                                                uint64_t Addr);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_COUNTERCODE_H
