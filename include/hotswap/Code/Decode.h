//===- hotswap/Code/Decode.h - Instructions decoded by LLVM MC --*- C++ -*-===//
//
// Machine code as a sequence of instructions, decoded by LLVM MC (through
// amdgpu::TargetMC, the one decoder), each with its size and what it does
// to control flow. The flow kind comes from LLVM's instruction description
// (isBranch, isConditionalBranch, isCall, isReturn, the PC-relative operand
// type) and, for the few instructions whose meaning the description does not
// carry, from the instruction's name as LLVM spells it (S_ENDPGM, S_SETPC_B64,
// S_CODE_END, S_TRAP). The PC-relative operand is found by its operand type
// wherever it is, so `s_call_b64 s[30:31], label` and gfx1250's `s_call_i64`
// are read the same way as `s_branch`.
//
// Bytes that do not decode are reported where they start, never skipped or
// guessed over.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_DECODE_H
#define HOTSWAP_CODE_DECODE_H

#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MCInst;
class MCOperand;
class MCInstrInfo;
} // namespace llvm

namespace hotswap {
namespace code {

/// What an instruction does to control flow.
enum class Flow : uint8_t {
  Next,         // falls through to the next instruction
  Jump,         // s_branch: to Target only
  CondJump,     // s_cbranch_*: to Target or the next instruction
  IndirectJump, // s_setpc_b64: to a register (a return, or resolved later)
  Call,         // s_call_b64 / s_call_i64: to Target, then the next
  IndirectCall, // s_swappc_b64: to a register, then the next
  EndProgram,   // s_endpgm (and its variants): the wave ends
  Trap,         // s_trap: to the trap handler, which may return
  CodeEnd,      // s_code_end: padding after the last function
  Unknown,      // another control transfer the analyses do not follow
};

llvm::StringRef flowName(Flow F);

/// One decoded instruction (without its operands: re-decode the bytes for
/// those; see decodeAt()).
struct Insn {
  uint64_t Addr = 0;
  uint32_t Opcode = 0;
  uint8_t Size = 0;
  Flow F = Flow::Next;
  /// The PC-relative target of Jump, CondJump and Call.
  std::optional<uint64_t> Target;

  uint64_t end() const { return Addr + Size; }
  /// Whether the next instruction starts a block (calls return to it and
  /// do not end a block; nor does s_trap).
  bool endsBlock() const {
    return F != Flow::Next && F != Flow::Trap && F != Flow::Call &&
           F != Flow::IndirectCall;
  }
};

/// How the decoder classifies instructions (per LLVM target; shared).
class InsnKinds {
public:
  static const InsnKinds &get(const llvm::MCInstrInfo &MII);

  Flow flowOf(const llvm::MCInst &MI) const;
  /// The operand of a direct branch that holds its offset: the PC-relative
  /// operand (a signed 16-bit count of dwords), or gfx1250's
  /// `s_add_pc_i64 imm` (a signed 64-bit count of bytes: \p InBytes).
  std::optional<unsigned> offsetOperand(const llvm::MCInst &MI,
                                        bool *InBytes = nullptr) const;
  /// The branch target of a direct branch: the end of the instruction
  /// plus its offset (offsetOperand).
  std::optional<uint64_t> pcRelTarget(const llvm::MCInst &MI, uint64_t Addr,
                                      uint64_t Size) const;
  /// LLVM's name of the opcode without its encoding suffix: "S_ADD_U32" for
  /// S_ADD_U32_vi, "S_CBRANCH_SCC0" for S_CBRANCH_SCC0_gfx11.
  llvm::StringRef baseName(unsigned Opcode) const;
  bool is(unsigned Opcode, llvm::StringRef BaseName) const {
    return baseName(Opcode) == BaseName;
  }

private:
  explicit InsnKinds(const llvm::MCInstrInfo &MII);
  const llvm::MCInstrInfo &MII;
  std::vector<llvm::StringRef> BaseNames;
};

/// The value of an immediate operand: a plain one, or one LLVM keeps as an
/// expression (a literal forced with lit(), as in `s_addc_u32 s5, s5,
/// lit(0x0)`, which linkers write for a relocation's high half).
std::optional<int64_t> immediateValue(const llvm::MCOperand &O);

/// Where decoding had to stop.
struct DecodeStop {
  uint64_t Addr = 0;
  std::string Reason;
};

struct DecodedRange {
  std::vector<Insn> Insns;
  /// Set when bytes from Stop->Addr on could not be decoded.
  std::optional<DecodeStop> Stop;
  /// Bytes decoded, counted from the start of the range.
  uint64_t decodedBytes(uint64_t Begin) const {
    return Insns.empty() ? 0 : Insns.back().end() - Begin;
  }
};

/// Code decoded before that the code being decoded mostly repeats, in
/// order (a function, for its copy): where the bytes that decide an answer
/// (TargetMC::decodeWindow) are the same as at the next instruction of
/// the hint (or the one after), its decode is the answer, the one the
/// decoder would give; elsewhere the decoder is asked. A hint saves
/// lookups, never changes what is decoded.
struct DecodeHint {
  llvm::ArrayRef<uint8_t> Bytes; // the code, from...
  uint64_t Begin = 0;            // ...this address
  llvm::ArrayRef<Insn> Insns;
  llvm::ArrayRef<llvm::MCInst> Decoded; // Decoded[I] is Insns[I]
};

/// Decodes \p Bytes (at address \p Addr) from the start, instruction after
/// instruction, to the end or to the first bytes that are not an
/// instruction (an instruction running past the end counts as such).
/// \p Visit, when given, sees every instruction with its operands (the
/// decoder's own, TargetMC::decodeView: Visit copies what it keeps and
/// does not decode with \p MC itself).
DecodedRange decodeRange(
    const amdgpu::TargetMC &MC, llvm::ArrayRef<uint8_t> Bytes, uint64_t Addr,
    llvm::function_ref<void(const Insn &, const llvm::MCInst &)> Visit = {},
    const DecodeHint *Hint = nullptr);

/// The instructions \p Insns (from decodeRange over \p Bytes starting at
/// \p Begin) with their operands, decoded again: what an analysis that
/// reads operands needs when the graph was built without keeping them.
std::vector<llvm::MCInst> decodeInsns(const amdgpu::TargetMC &MC,
                                      llvm::ArrayRef<Insn> Insns,
                                      llvm::ArrayRef<uint8_t> Bytes,
                                      uint64_t Begin);

/// The full instruction at \p I (which came from decodeRange over \p Bytes
/// starting at \p Begin).
std::optional<amdgpu::DecodedInst> decodeAt(const amdgpu::TargetMC &MC,
                                            llvm::ArrayRef<uint8_t> Bytes,
                                            uint64_t Begin, const Insn &I);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_DECODE_H
