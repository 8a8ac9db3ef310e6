//===- hotswap/Code/WaitCounts.h - Memory operations still in flight -*- C++
//-*-===//
//
// Which memory operations may still be outstanding at every instruction
// boundary of one function, counted as the hardware counts them, and which
// registers their results may still be written into: the forward data flow
// a client needs before it inserts a memory operation (it must not break a
// guest's s_waitcnt) or takes a register as scratch (a load still in flight
// would overwrite it).
//
// Counters, by generation (AMDGPUUsage, "Memory Model"; the ISA guides):
//   gfx6-9    vmcnt (every VMEM load and store), expcnt, lgkmcnt (LDS, GDS,
//             SMEM, messages)
//   gfx10-11  vmcnt (VMEM loads and returning atomics), vscnt (VMEM stores),
//             expcnt, lgkmcnt
//   gfx12+    loadcnt, storecnt, samplecnt, bvhcnt, expcnt, dscnt, kmcnt
// Wait limits (the largest count a wait can name) and the bits of
// s_waitcnt's immediate per generation are facts of the ISA; the tests check
// them against LLVM MC's assembler.
//
// The state of one counter is an upper bound of the operations outstanding
// (saturating one above the largest count a wait can name), the kinds of
// operations among them, and every register one of them may still write,
// with the number of operations of that counter issued after it (its
// distance). A counter retires its operations in issue order when all
// outstanding ones are of one kind (LLVM's SIInsertWaitcnts relies on the
// same rule: scalar loads, and mixed kinds, return out of order): a wait
// for N then retires every operation with distance >= N. Out of order, only
// a wait for 0 retires anything. Joins take the larger count, the union of
// registers and the smaller distance; every step is conservative.
//
// An instruction is classified by LLVM's name for it and its description
// (mayLoad/mayStore, its defs). An instruction that touches memory but is of
// no known class counts on every counter, out of order, with its defs as
// destinations. FLAT counts on vmcnt/loadcnt and, as it may address LDS,
// also on lgkmcnt/dscnt, out of order there; its results are taken as
// written once vmcnt/loadcnt retires it (compilers that know the address is
// global wait only there; a binary does not say which).
// A call, and a device function's entry, leave every counter
// unknown: full, out of order, and any register possibly pending, until a
// wait for 0. Blocks the graph does not reach start unknown too, but for
// alignment padding (unreachable s_nop runs), which never runs and gives
// the block after it (a loop header) nothing.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_WAITCOUNTS_H
#define HOTSWAP_CODE_WAITCOUNTS_H

#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Registers.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MCInst;
} // namespace llvm

namespace hotswap {
namespace code {

/// The hardware counters, named by what they count on gfx12 (Load is
/// vmcnt and DS lgkmcnt before; Store, Sample, BVH and KM exist only where
/// the generation has them).
enum class Counter : uint8_t { Load, Store, Sample, BVH, Exp, DS, KM };
constexpr unsigned NumCounters = 7;

/// The counters of one generation.
struct CounterSet {
  /// The largest count a wait can name; 0 for a counter the generation
  /// does not have.
  std::array<uint8_t, NumCounters> Max{};
  amdgpu::Generation Gen = amdgpu::Generation::GFX9;
  /// Whether a FLAT access may address LDS, and so count on lgkmcnt/dscnt,
  /// out of order (the default; a binary does not say). verify-code also
  /// asks with false to tell a compiler that knew its addresses were global.
  bool FlatMayAccessLDS = true;

  static CounterSet of(amdgpu::Generation Gen);
  bool has(Counter C) const { return Max[unsigned(C)] != 0; }
  /// "vmcnt", "lgkmcnt", "loadcnt"...
  llvm::StringRef name(Counter C) const;
  /// The counter an operation of gfx12 counter \p C counts on here (stores
  /// count on vmcnt before gfx10, SMEM on lgkmcnt before gfx12...).
  Counter route(Counter C) const;
};

/// Kinds of operations (a counter holding more than one kind may retire
/// them out of order).
enum EventKind : uint8_t {
  EvVMemRead = 1,
  EvVMemSample = 2,
  EvVMemBVH = 4,
  EvVMemWrite = 8,
  EvLDS = 16,
  EvSMem = 32,
  EvMessage = 64,
  EvExport = 128,
};

/// What one instruction does to the counters.
struct WaitEffect {
  /// Waits: the counter and the count it waits for.
  llvm::SmallVector<std::pair<Counter, uint8_t>, 2> Waits;
  struct Event {
    Counter C;
    uint8_t Kind;
    /// Not known to be one in-order operation of that counter.
    bool Inexact;
    /// Counted, but its results are not waited for on this counter.
    bool NoDests = false;
    /// May not count at all (a cache writeback or invalidate): the bound
    /// grows, but the operations before it are not taken as further from
    /// the newest (it may not be one of those a wait lets outstanding).
    bool Maybe = false;
    /// FLAT's count on lgkmcnt/dscnt: left out when FLAT is taken as global.
    bool FlatLDS = false;
  };
  llvm::SmallVector<Event, 2> Events;
  /// Register units the operation writes when it completes.
  llvm::SmallVector<uint16_t, 8> Dests;
  /// A call: the callee may leave anything outstanding.
  bool Clobbers = false;

  bool empty() const { return Waits.empty() && Events.empty() && !Clobbers; }
};

/// What instruction \p MI does to the counters of \p Set.
WaitEffect waitEffect(const amdgpu::TargetMC &MC, const llvm::MCInst &MI,
                      const CounterSet &Set);

struct PendingReg {
  uint16_t Unit = 0;
  /// Operations of the same counter issued after the one writing Unit.
  uint8_t Dist = 0;
  bool operator==(const PendingReg &O) const {
    return Unit == O.Unit && Dist == O.Dist;
  }
};

struct CounterState {
  /// At most this many operations are outstanding (Max + 1: unknown).
  uint8_t Count = 0;
  uint8_t Kinds = 0;
  bool Inexact = false;
  /// Any register may be written by one of them (after a call).
  bool AnyReg = false;
  /// Sorted by unit.
  llvm::SmallVector<PendingReg, 4> Regs;

  /// Only a wait for 0 is known to retire a given operation.
  bool outOfOrder() const {
    return Inexact || AnyReg || (Kinds & EvSMem) || (Kinds & (Kinds - 1));
  }
  bool operator==(const CounterState &O) const {
    return Count == O.Count && Kinds == O.Kinds && Inexact == O.Inexact &&
           AnyReg == O.AnyReg && Regs == O.Regs;
  }
};

struct WaitState {
  std::array<CounterState, NumCounters> C;
  bool operator==(const WaitState &O) const { return C == O.C; }
  bool operator!=(const WaitState &O) const { return !(*this == O); }

  /// Nothing outstanding.
  bool idle() const;
  /// Whether a load still in flight may write unit \p U (on which counter).
  std::optional<Counter> pendingOn(unsigned U) const;
  /// Every unit a load still in flight may write (all tracked units when a
  /// counter is unknown).
  RegSet inFlight(const RegisterModel &RM) const;
  /// "vmcnt<=2 v[0:3]; lgkmcnt<=1 unordered s[4:5]", or "none".
  std::string format(const CounterSet &Set, const RegisterModel &RM) const;
};

struct WaitCounts {
  CounterSet Set;
  /// Per block: the state at its start.
  std::vector<WaitState> In;
  /// Whether the data flow reached a fixed point (if not, every block
  /// starts unknown).
  bool Converged = true;
  /// Whether the function has a FLAT access (see FlatMayAccessLDS).
  bool HasFlat = false;

  /// The state before each instruction of block \p B, first to last.
  std::vector<WaitState> statesBefore(uint32_t B) const;
  /// The state before instruction \p I alone.
  WaitState stateBefore(uint32_t I) const;
  /// Moves \p S from before instruction \p I to after it.
  void step(uint32_t I, WaitState &S) const;
  /// The same function's counters were every FLAT access global (the
  /// effects are kept; only the data flow runs again).
  WaitCounts assumingFlatGlobal() const;
  /// The effect of instruction \p I (nullptr when it has none).
  const WaitEffect *effect(uint32_t I) const {
    return EffectOf[I] == UINT32_MAX ? nullptr : &Effects[EffectOf[I]];
  }

private:
  friend WaitCounts computeWaitCounts(const amdgpu::TargetMC &,
                                      const FunctionCFG &,
                                      llvm::ArrayRef<llvm::MCInst>,
                                      FunctionKind, amdgpu::Generation, bool);
  void solve();
  const FunctionCFG *G = nullptr;
  FunctionKind Kind = FunctionKind::Kernel;
  std::vector<uint32_t> EffectOf;
  std::vector<WaitEffect> Effects;
};

/// The counter state of \p G, the graph of a function whose bytes are
/// \p Bytes, on generation \p Gen: at a kernel's entry nothing is
/// outstanding, at a device function's entry anything may be.
WaitCounts computeWaitCounts(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                             llvm::ArrayRef<uint8_t> Bytes, FunctionKind Kind,
                             amdgpu::Generation Gen,
                             bool FlatMayAccessLDS = true);
/// The same from \p G's instructions already decoded (buildCFG's Decoded).
WaitCounts computeWaitCounts(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                             llvm::ArrayRef<llvm::MCInst> Decoded,
                             FunctionKind Kind, amdgpu::Generation Gen,
                             bool FlatMayAccessLDS = true);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_WAITCOUNTS_H
