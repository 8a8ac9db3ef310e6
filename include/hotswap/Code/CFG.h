//===- hotswap/Code/CFG.h - Control flow of one function --------*- C++ -*-===//
//
// The control-flow graph of one function: its instructions (Decode.h) cut
// into basic blocks, with the edges of every branch form, fall-through,
// calls (which return to the next instruction) and indirect jumps and calls
// whose target is a constant the function computes from its own PC:
//
//   s_getpc_b64 s[N:N+1]                      ; s[N:N+1] = address of next
//   [s_add_i32 / s_mov_b32 sK, constant]      ; an offset in an SGPR
//   s_add_u32  sN, sN, constant-or-sK         ; low half, carry in SCC
//   s_addc_u32 sN+1, sN+1, constant           ; high half plus carry
//   s_setpc_b64 s[N:N+1]  |  s_swappc_b64 s[R:R+1], s[N:N+1]
//
// (the last forms of LLVM's long branches, calls through a PC-relative
// address, and the Tensile "skip" jump). The values are followed by a small
// constant propagation over 32-bit SGPRs and SCC, along straight-line code
// only: at every block start nothing is known.
//
// What cannot be followed is a finding. A blocking finding (bytes that do
// not decode, an indirect jump whose target is unknown, a branch that leaves
// the function or lands inside an instruction) means clients must not edit
// the function; a non-blocking one is a fact worth reporting (an
// unreachable block). In a device function, `s_setpc_b64 s[30:31]` whose
// value is unknown is the return (the AMDGPU calling convention passes the
// return address there).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_CFG_H
#define HOTSWAP_CODE_CFG_H

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/Functions.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/MC/MCInst.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace code {

enum class EdgeKind : uint8_t {
  FallThrough, // to the next instruction (also after a call returns)
  Taken,       // a conditional branch taken
  Jump,        // an unconditional branch
  Indirect,    // s_setpc_b64 to a resolved constant
};
llvm::StringRef edgeKindName(EdgeKind K);

struct Edge {
  uint32_t To = 0; // a block index
  EdgeKind Kind = EdgeKind::FallThrough;
};

/// How control leaves a block other than by its edges.
enum class BlockExit : uint8_t {
  None,       // only by its edges
  EndProgram, // s_endpgm
  Return,     // s_setpc_b64 of the return address (device functions)
  TailCall,   // a resolved indirect jump to another function's entry
  Unresolved, // an indirect jump or unknown transfer it cannot follow
  FallsOff,   // the function ends without a terminator
};
llvm::StringRef blockExitName(BlockExit E);

struct Block {
  /// Instructions [First, End) of FunctionCFG::Insns.
  uint32_t First = 0, End = 0;
  std::vector<Edge> Succs;
  std::vector<uint32_t> Preds;
  BlockExit Exit = BlockExit::None;
  bool Reachable = false;
  /// Unreachable, and nothing but s_nop: alignment padding.
  bool Padding = false;
};

struct CallSite {
  uint32_t Insn = 0;
  /// The callee's address, when known (direct, or a resolved constant).
  std::optional<uint64_t> Target;
};

struct CodeFinding {
  uint64_t Addr = 0;
  std::string Message;
  /// Clients must not edit a function with a blocking finding.
  bool Blocking = true;
};

/// Instructions a client must not insert code between or move apart.
struct CodeWindow {
  enum Kind : uint8_t {
    Clause,        // s_clause and the instructions it groups
    PreloadHeader, // a preloading kernel's first 256 bytes: firmware may
                   // start it at their end
    VGPRMSB,       // after s_set_vgpr_msb with a value other than 0: VGPR
                   // numbers mean other registers until it is reset
    Priority,      // between s_setprio N > 0 and s_setprio 0: code inserted
                   // there runs at the raised priority (allowed)
  };
  uint64_t Begin = 0, End = 0;
  Kind K = Clause;

  /// Whether code inserted before the instruction at \p Addr would break
  /// the window (Priority never does).
  bool forbidsInsertAt(uint64_t Addr) const {
    return K != Priority && Addr > Begin && Addr < End;
  }
};
llvm::StringRef windowKindName(CodeWindow::Kind K);

struct FunctionCFG {
  uint64_t Begin = 0, End = 0;
  std::vector<Insn> Insns;
  std::vector<Block> Blocks; // by address; Blocks[0] is the entry
  std::vector<CallSite> Calls;
  /// Resolved s_setpc_b64 / s_swappc_b64: instruction index and target.
  std::vector<std::pair<uint32_t, uint64_t>> Indirect;
  std::vector<CodeFinding> Findings;
  /// By address.
  std::vector<CodeWindow> Windows;

  bool editable() const;
  /// Whether code may be inserted before the instruction at \p Addr (no
  /// window forbids it).
  bool mayInsertAt(uint64_t Addr) const;
  /// Bytes of the function that decoded (up to the first that did not).
  uint64_t decodedBytes() const {
    return Insns.empty() ? 0 : Insns.back().end() - Begin;
  }
  /// The block holding instruction \p I.
  uint32_t blockOf(uint32_t I) const;
  /// The instruction starting at \p Addr.
  std::optional<uint32_t> insnAt(uint64_t Addr) const;
};

/// Decodes \p F (whose bytes are \p Bytes) and builds its graph. \p Map
/// tells calls and tail jumps into other functions from stray branches.
/// \p Decoded, when given, receives every instruction with its operands
/// (index = FunctionCFG::Insns index), for the analyses that read them.
/// A function's graph with its instructions as decoded (Decoded[I] is
/// G.Insns[I]): what one step built, handed to the next so that it does
/// not decode the function again.
struct DecodedFunction {
  FunctionCFG G;
  std::vector<llvm::MCInst> Decoded;
};

/// \p Hint: code this function's bytes mostly repeat (DecodeHint).
FunctionCFG buildCFG(const amdgpu::TargetMC &MC, const CodeFunction &F,
                     llvm::ArrayRef<uint8_t> Bytes, const FunctionMap &Map,
                     std::vector<llvm::MCInst> *Decoded = nullptr,
                     const DecodeHint *Hint = nullptr);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_CFG_H
