//===- hotswap/AMDGPU/TargetMC.h - LLVM MC for one run ----------*- C++ -*-===//
//
// What the rewriter needs from LLVM MC for one AMDGPU processor and feature
// string: assemble a snippet of assembly text to bytes, decode one
// instruction, print one instruction.
//
// Two parts with different lifetimes:
//   * the immutable per-target tables (target, register, instruction,
//     subtarget and asm info) are created once per (processor, features) and
//     shared by every TargetMC of the process, read-only;
//   * everything with mutable state (MCContext, disassembler, instruction
//     printer, code emitter; assembler state is made per assemble() call)
//     belongs to one TargetMC, created per run (or per worker thread) and
//     passed explicitly to whoever decodes or encodes. Destroying it frees
//     every MCExpr and symbol its decoding created.
//
// Thread safety: create() may be called from any thread. One TargetMC must
// be used by one thread at a time; any number of TargetMCs, of any targets,
// may be used concurrently. No lock is taken after create().
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_TARGETMC_H
#define HOTSWAP_AMDGPU_TARGETMC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCRegister.h"
#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MCAsmInfo;
class MCCodeEmitter;
class MCContext;
class MCDisassembler;
class MCInstPrinter;
class MCInstrInfo;
class MCRegisterInfo;
class MCSubtargetInfo;
class MCTargetOptions;
class Target;
} // namespace llvm

namespace hotswap {
namespace amdgpu {

/// One decoded machine instruction.
struct DecodedInst {
  llvm::MCInst Inst;
  uint64_t Size = 0;
  /// LLVM decoded it but calls the encoding "potentially undefined" (a
  /// field the ISA says to set one way holds another, as in gfx10
  /// v_cmpx_*_e64 with an SDST other than EXEC, which compilers of
  /// ROCm 5 emitted and the hardware runs).
  bool SoftFail = false;
};

/// One decoded instruction, in the decoder's keeping (TargetMC::decodeView).
struct DecodedView {
  const llvm::MCInst *Inst = nullptr;
  uint64_t Size = 0;
  bool SoftFail = false;
};

struct MCTables;

class TargetMC {
public:
  /// New MC state for (MCPU, Features), on the shared tables of that target
  /// (created on first use). Errors name an unknown processor or feature.
  static llvm::Expected<std::unique_ptr<TargetMC>>
  create(llvm::StringRef MCPU, llvm::StringRef Features);

  ~TargetMC();
  TargetMC(const TargetMC &) = delete;
  TargetMC &operator=(const TargetMC &) = delete;

  llvm::StringRef mcpu() const;
  llvm::StringRef features() const;

  /// Assembles \p AsmText (instructions and .byte/.short/.long/.quad data)
  /// to the bytes it encodes, in order. Anything that would need a
  /// relocation or a fixup (symbol references, labels used as operands) and
  /// layout directives are errors. Errors carry the assembler's messages.
  /// The same text gives the bytes it gave before (kept, bounded).
  llvm::Expected<std::vector<uint8_t>> assemble(llvm::StringRef AsmText) const;

  /// Encodes one instruction (e.g. one returned by decodeOne()). Errors when
  /// the encoding would need a fixup.
  llvm::Expected<std::vector<uint8_t>> encode(const llvm::MCInst &Inst) const;

  /// Decodes the instruction at the start of \p Bytes, which sits at address
  /// \p Addr. std::nullopt when the bytes are not a valid instruction; with
  /// \p AllowSoftFail also an instruction LLVM decodes with a warning
  /// (DecodedInst::SoftFail), as llvm-objdump prints it.
  std::optional<DecodedInst> decodeOne(llvm::ArrayRef<uint8_t> Bytes,
                                       uint64_t Addr,
                                       bool AllowSoftFail = false) const;
  /// The same without a copy: the instruction (nullptr when there is none)
  /// is valid until the next decode of this TargetMC.
  DecodedView decodeView(llvm::ArrayRef<uint8_t> Bytes, uint64_t Addr,
                         bool AllowSoftFail = false) const;
  /// The bytes from an instruction's start that decide what decodeView
  /// answers there (the subtarget's longest instruction): equal windows,
  /// equal answers.
  size_t decodeWindow() const {
    return Proxy ? Proxy->decodeWindow() : MaxInstBytes;
  }
  /// How many times decodeOne() has run (what `-stats` reports as
  /// instructions decoded: the default pipeline decodes no kernel code).
  uint64_t decodeCount() const { return Decodes; }

  /// The assembly text of an instruction returned by decodeOne().
  std::string printInst(const llvm::MCInst &Inst, uint64_t Addr) const;

  /// Disassembles \p Bytes for diagnostics: one line per instruction,
  /// "<addr>: <text>", stopping at the first undecodable word.
  std::string disassemble(llvm::ArrayRef<uint8_t> Bytes, uint64_t Addr) const;

  /// The opcode decodeOne() yields for the single instruction \p AsmText
  /// assembles to (memoized). This maps mnemonics to decoder opcodes without
  /// depending on LLVM's generated opcode enumeration.
  llvm::Expected<unsigned> decodedOpcodeOf(llvm::StringRef AsmText) const;

  /// LLVM's name of a register returned by the decoder ("SGPR8_SGPR9",
  /// "VCC_LO").
  llvm::StringRef regName(llvm::MCRegister Reg) const;

  /// Whether the subtarget has the named feature ("offset-3f-bug").
  bool hasFeature(llvm::StringRef Name) const;

  /// The MC tables, for clients that inspect decoded instructions.
  const llvm::MCInstrInfo &instrInfo() const;
  const llvm::MCRegisterInfo &regInfo() const;

  /// True when LLVM has no disassembler for this processor (gfx6/gfx7) and
  /// decoding goes through a GFX10 bundle instead; see TargetMC.cpp.
  bool decodesViaProxy() const { return Proxy != nullptr; }

private:
  explicit TargetMC(const MCTables &T);

  const MCTables &T;
  std::unique_ptr<llvm::MCContext> Ctx;
  std::unique_ptr<llvm::MCCodeEmitter> Emitter;
  std::unique_ptr<llvm::MCDisassembler> Disasm;
  std::unique_ptr<llvm::MCInstPrinter> Printer;
  /// Decodes for this one when LLVM cannot (gfx6/gfx7); see TargetMC.cpp.
  std::unique_ptr<TargetMC> Proxy;
  llvm::Expected<std::vector<uint8_t>>
  assembleFresh(llvm::StringRef AsmText) const;
  mutable llvm::StringMap<std::vector<uint8_t>> AssembleMemo;
  /// gfx6-9 encodings: see literalCrashesLLVM().
  bool PreGFX10 = false;
  bool literalCrashesLLVM(llvm::ArrayRef<uint8_t> Bytes) const;

  mutable llvm::StringMap<unsigned> OpcodeMemo;
  mutable uint64_t Decodes = 0;

  /// The most bytes one instruction of this subtarget has (LLVM's
  /// MCAsmInfo::getMaxInstLength): the decoder reads no more.
  size_t MaxInstBytes = 0;
  /// Decodes of the bytes the decoder was given (at most MaxInstBytes),
  /// keyed by those bytes: real code repeats most of its encodings, and a
  /// function is decoded again by each client (the planner, the relocator,
  /// the proof of a copy). See decodeOne().
  struct MemoDecode {
    llvm::MCInst Inst;
    uint8_t Size = 0;
    /// 0: not an instruction; 1: decoded; 2: decoded with SoftFail.
    uint8_t Status = 0;
  };
  /// The bytes, zero-filled to 24, and how many there are.
  struct MemoKey {
    uint64_t W[3] = {0, 0, 0};
    uint8_t Len = 0;
  };
  struct MemoKeyInfo {
    static MemoKey getEmptyKey() { return {{0, 0, 0}, 0xff}; }
    static MemoKey getTombstoneKey() { return {{0, 0, 0}, 0xfe}; }
    static unsigned getHashValue(const MemoKey &K) {
      return unsigned(llvm::hash_combine(K.W[0], K.W[1], K.W[2], K.Len));
    }
    static bool isEqual(const MemoKey &A, const MemoKey &B) {
      return A.Len == B.Len && A.W[0] == B.W[0] && A.W[1] == B.W[1] &&
             A.W[2] == B.W[2];
    }
  };
  mutable llvm::DenseMap<MemoKey, uint32_t, MemoKeyInfo> DecodeMemo;
  /// Where instructions take at most 8 bytes (gfx6-9): the window as one
  /// word, a smaller table (all but the two words DenseMap reserves).
  /// Instruction words vary in their high bits (opcodes) as much as in
  /// their low ones: DenseMap's hash of a uint64_t (times 37) keeps only
  /// the low bits, so the whole word is mixed.
  struct WordInfo {
    static uint64_t getEmptyKey() { return ~0ull; }
    static uint64_t getTombstoneKey() { return ~0ull - 1; }
    static unsigned getHashValue(uint64_t W) {
      W ^= W >> 33;
      W *= 0xff51afd7ed558ccdull;
      W ^= W >> 33;
      return unsigned(W);
    }
    static bool isEqual(uint64_t A, uint64_t B) { return A == B; }
  };
  mutable llvm::DenseMap<uint64_t, uint32_t, WordInfo> DecodeMemo8;
  mutable std::deque<MemoDecode> MemoDecodes;
  /// A decode that is not kept (decodeView's answer until the next).
  mutable MemoDecode Unshared;
  mutable llvm::StringMap<bool> FeatureMemo;
};

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_TARGETMC_H
