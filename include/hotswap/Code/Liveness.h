//===- hotswap/Code/Liveness.h - Registers that hold needed values -*- C++
//-*-===//
//
// Which registers (Registers.h: SGPRs, VGPRs, AGPRs, VCC, EXEC, M0, SCC)
// hold a value some later instruction may read, at every instruction
// boundary of one function: the classic backward data flow over the
// function's graph (CFG.h), on register units.
//
// Reads and writes come from LLVM MC's description of each instruction (its
// register operands, defs first, and its implicit uses and defs), so a tied
// operand (v_mac's accumulator, DPP's old value, a d16 load's other half)
// counts as the read it is. One correction: LLVM describes every DS
// instruction as reading M0, which only gfx6-8 do for all of them; from
// gfx9 on only ds_append/consume, GWS, ordered count, the addtid forms and
// the GS register ones read it.
//
// Lane-conservative: a vector write (a VGPR or AGPR written by VALU, a load,
// LDS) writes only the lanes EXEC enables, so it ends a life only in those
// lanes. A small forward analysis names the value EXEC holds at every
// instruction and knows which of those values are subsets of which:
// `s_and_saveexec` (and the other narrowing writes: s_and/s_andn2 of exec,
// v_cmpx) makes a subset of the value before and saves that value in an
// SGPR; `s_or exec, exec, sX` or `s_mov exec, sX` with such a copy gives it
// back; an else (`s_andn2_saveexec`, `s_xor exec, exec, sX`) makes a subset
// of the saved value; `s_or_saveexec -1` / `s_mov exec, -1` (whole-wave
// mode) every lane; a join of different values a subset of their closest
// common superset; any other write a value related to nothing. Going
// backward, each live register remembers under which EXEC values it is read;
// a vector write ends only the needs under its own EXEC value or a subset of
// it. Cross-lane reads (v_readlane, DPP, permlane, ds_[b]permute,
// ds_swizzle) need every lane. Scalar writes (SGPRs, VCC, EXEC, M0, SCC)
// always end a life.
//
// Exits: after s_endpgm nothing is live; a return (device functions), a
// tail call, an indirect jump that is not resolved, or code that runs off
// the function keep everything live; a call reads everything and ends no
// life (the callee may read any register its convention allows).
//
// Destinations of loads still in flight are not part of liveness: a client
// choosing a scratch register must also keep clear of those
// (WaitCounts.h: WaitState::inFlight).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_LIVENESS_H
#define HOTSWAP_CODE_LIVENESS_H

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Registers.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <vector>

namespace hotswap {
namespace code {

class CallReads;

/// The tracked register units one instruction reads and writes.
struct InsnRegs {
  llvm::SmallVector<uint16_t, 8> Uses;
  /// Scalar defs (always end a life) and vector defs (VGPRs, AGPRs).
  llvm::SmallVector<uint16_t, 8> ScalarDefs, VectorDefs;
  /// A call: reads every register, or (CallReadsAt >= 0) what
  /// Liveness::CallSets[CallReadsAt] holds.
  bool UsesAll = false;
  int32_t CallReadsAt = -1;
  /// Reads vector registers in other lanes than its own (DPP, readlane...).
  bool CrossLane = false;
};

/// What \p MI reads and writes, as liveness counts it (calls aside: a
/// call's UsesAll is set by the graph, not here).
InsnRegs instructionRegs(const amdgpu::TargetMC &MC, const llvm::MCInst &MI,
                         bool Wave32);
/// The same for each of \p MIs.
std::vector<InsnRegs> instructionRegs(const amdgpu::TargetMC &MC,
                                      llvm::ArrayRef<llvm::MCInst> MIs,
                                      bool Wave32);

struct Liveness {
  /// Per block: live at its start and at its end (in any lanes).
  std::vector<RegSet> LiveIn, LiveOut;
  /// Per instruction: whether EXEC is known to hold every lane it held at
  /// the function's entry (or more) just before it.
  std::vector<bool> ExecFullBefore;
  /// Whether the forward EXEC analysis reached a fixed point; if not,
  /// every vector write is taken to end no life.
  bool ExecConverged = true;
  /// Every unit live at some boundary of the function (a walk over every
  /// instruction: made when asked).
  RegSet everLive() const;
  /// Every unit some instruction of the function reads or writes.
  RegSet Referenced;

  /// The live sets before each instruction of block \p B, first to last.
  std::vector<RegSet> liveBefore(uint32_t B) const;
  /// The live set before instruction \p I alone (a walk from its block's
  /// end to it).
  RegSet liveBeforeInsn(uint32_t I) const;
  /// The EXEC value before instruction \p I (0: every lane, 1: the
  /// entry's) and the value a value is a subset of (-1 for 0).
  uint32_t execBefore(uint32_t I) const { return ExecBefore[I]; }
  int32_t execParent(uint32_t V) const { return ExecParent[V]; }
  size_t execValues() const { return ExecParent.size(); }
  /// What instruction \p I reads and writes.
  const InsnRegs &regs(uint32_t I) const { return Regs[I]; }

private:
  friend Liveness computeLiveness(const amdgpu::TargetMC &, const FunctionCFG &,
                                  llvm::ArrayRef<llvm::MCInst>, FunctionKind,
                                  bool, CallReads *);

public:
  /// What is live, by the EXEC value under which it is read.
  using State = llvm::SmallVector<std::pair<uint32_t, RegSet>, 4>;

private:
  /// Moves \p S from after instruction \p I to before it. \p S is left
  /// as it comes (empty sets kept, values in any order): normalized where
  /// states are compared, once per block.
  void step(uint32_t I, State &S) const;
  /// \p S at the start of block \p To, as seen at the end of \p From:
  /// needs under a join \p To made are needs under what \p From held.
  State acrossEdge(uint32_t From, uint32_t To, const State &S) const;
  /// Per block: (predecessor, join value, the predecessor's value).
  std::vector<llvm::SmallVector<std::tuple<uint32_t, uint32_t, uint32_t>, 2>>
      EdgeMap;
  /// Whether EXEC value \p A is \p B or a subset of it.
  bool within(uint32_t A, uint32_t B) const;
  const FunctionCFG *G = nullptr;
  std::vector<InsnRegs> Regs;
  /// What calls whose callee is known read (InsnRegs::CallReadsAt).
  std::vector<RegSet> CallSets;
  RegSet AllTracked;
  /// EXEC values: the parent of each (a superset), 0 (every lane) has none.
  std::vector<int32_t> ExecParent;
  std::vector<uint32_t> ExecBefore;
  /// Values instructions make as the union of two others: (value, A, B),
  /// and per instruction the index of its union (-1: none).
  std::vector<std::array<uint32_t, 3>> Unions;
  std::vector<int32_t> UnionAt;
  /// Each EXEC value's block; per block its place in reverse postorder
  /// and its dominator tree numbers (see ExecFlow).
  std::vector<int32_t> ExecSite;
  std::vector<uint32_t> BlockOrder, DomPre, DomPost;
  /// \p V, or the closest value it is a subset of that is made where
  /// every path to block \p B passes (a value made inside a loop is
  /// another set of lanes on every iteration).
  uint32_t outsideLoopOf(uint32_t V, uint32_t B) const;
  std::vector<State> OutState;
  /// Per unit: 0 for vector registers, 1 for scalar ones.
  std::vector<uint8_t> ScalarClassOf;
};

/// Liveness of \p G, the graph of a function whose bytes are \p Bytes;
/// \p Wave32 when it runs in wave32 mode (gfx10+).
Liveness computeLiveness(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                         llvm::ArrayRef<uint8_t> Bytes, FunctionKind Kind,
                         bool Wave32);
/// The same from \p G's instructions already decoded (buildCFG's Decoded).
/// With \p Calls, a call whose callee it knows reads only what the callee
/// may (CallReads.h); otherwise every register.
Liveness computeLiveness(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                         llvm::ArrayRef<llvm::MCInst> Decoded,
                         FunctionKind Kind, bool Wave32,
                         CallReads *Calls = nullptr);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_LIVENESS_H
