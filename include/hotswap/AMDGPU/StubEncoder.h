//===- hotswap/AMDGPU/StubEncoder.h - Kernel-entry stubs --------*- C++ -*-===//
//
// Encodes the 256-byte kernel-entry trampoline (stub) that jumps from a pool
// address to a kernel's original entry, and recognizes one again by decoding
// it with the MC disassembler and emulating it. The rules: an entry must be
// 256-byte aligned (AMDGPUUsage.rst, kernel_code_entry_byte_offset);
// s_getpc_b64 yields the address of the next instruction and both adds use
// the forced 32-bit literal form, as LLVM's own long branch does
// (SIInstrInfo::insertIndirectBranch), so every long stub has the same size;
// s_add_pc_i64 is never used (ROCm COMGR's HotSwap avoids it: gfx1250 A0
// silicon cannot execute it). Where stubs go in the object:
// docs/ARCHITECTURE.md and Passes/SynthTrampolines.h.
//
//   long form:  [prologue] GetPC s[N:N+1]            (4 bytes)
//                          AddLo sN,   sN,   lit(lo)  (8 bytes)
//                          AddHi sN+1, sN+1, lit(hi)  (8 bytes)
//                          SetPC s[N:N+1]            (4 bytes)
//               delta = target - address of AddLo (wrapping 64-bit)
//   short form: [prologue] s_branch simm16  (target = next insn + 4*simm16)
//   then PadWord up to 256 bytes. A dual stub is two such halves: stub+0
//   jumps to target, stub+256 to target+256.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_STUBENCODER_H
#define HOTSWAP_AMDGPU_STUBENCODER_H

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/AMDGPU/TargetInfo.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace amdgpu {

class TargetMC;

/// One stub slot: a whole single stub, one half of a dual stub, and the
/// alignment of every stub. It is 256 bytes because the firmware enters a
/// kernarg-preload kernel 256 bytes past its entry (a dual stub's second
/// half); kernel entries are 256-byte aligned too (kd::EntryAlignment).
constexpr uint64_t StubSlotSize = 256;
static_assert(StubSlotSize % kd::EntryAlignment == 0,
              "stubs are kernel entries: they must be entry-aligned");

/// Bytes a stub takes: one slot, two for a dual stub.
constexpr uint64_t stubSize(bool Dual) {
  return Dual ? 2 * StubSlotSize : StubSlotSize;
}

struct StubSpec {
  enum RegKind {
    Short,    ///< s_branch; no scratch registers, SCC preserved.
    SGPRPair, ///< getpc/add/addc/setpc on s[SGPR:SGPR+1].
    VCC       ///< getpc/add/addc/setpc on vcc (vcc_lo/vcc_hi).
  };

  uint64_t StubAddr = 0;
  uint64_t Target = 0;
  /// 512 bytes: stub+0 jumps to Target, stub+256 jumps to Target+256.
  bool Dual = false;
  RegKind Form = SGPRPair;
  /// Even N for s[N:N+1]; only for SGPRPair.
  unsigned SGPR = 0;
};

/// What decodeStub() found.
struct DecodedStub {
  StubSpec::RegKind Form = StubSpec::Short;
  /// Where the stub at the decoded address jumps.
  uint64_t Target = 0;
  /// N of s[N:N+1] for SGPRPair, 0 otherwise.
  unsigned SGPR = 0;
  /// Bytes of the jump sequence after the prologue (24 long, 4 short).
  uint64_t BodySize = 0;
  uint64_t PrologueSize = 0;
  /// Where stub+256 jumps, when the bytes there are a stub too.
  std::optional<uint64_t> HalfTarget2;
};

class StubEncoder {
public:
  /// The target's MC state, asked for only when StubBodyWords does not give
  /// a template.
  using MCSource = std::function<llvm::Expected<TargetMC &>()>;

  /// \p PrologueBytes (already assembled, a multiple of 4 bytes) starts
  /// every half. Fails when MC cannot build the templates for the target.
  /// \p MC (for \p TI's processor) must outlive the encoder.
  static llvm::Expected<std::unique_ptr<StubEncoder>>
  create(const TargetInfo &TI, TargetMC &MC,
         std::vector<uint8_t> PrologueBytes = {});
  /// The same with MC created on demand by \p GetMC (which, and whose
  /// result, must outlive the encoder).
  static llvm::Expected<std::unique_ptr<StubEncoder>>
  create(const TargetInfo &TI, MCSource GetMC,
         std::vector<uint8_t> PrologueBytes = {});

  ~StubEncoder();

  /// The bytes of the stub: 256, or 512 for a dual stub.
  llvm::Expected<std::vector<uint8_t>> encode(const StubSpec &Spec) const;

  /// Whether a short-form stub at \p StubAddr (after the prologue) reaches
  /// \p Target with one s_branch.
  bool shortFormReaches(uint64_t StubAddr, uint64_t Target) const;

  /// Assembly text of one half's jump sequence (without prologue) for the
  /// given register and literal halves / branch offset. Used to build the
  /// templates, and by tests to compare templates against MC.
  std::string longFormAsm(StubSpec::RegKind Form, unsigned SGPR, uint32_t Lo,
                          uint32_t Hi) const;
  std::string shortFormAsm(int16_t SImm16) const;

  llvm::ArrayRef<uint8_t> prologue() const { return Prologue; }
  const TargetInfo &targetInfo() const { return TI; }
  /// 24: the long-form sequence, the same for every delta.
  static constexpr uint64_t LongBodySize = 24;
  static constexpr uint64_t ShortBodySize = 4;

private:
  StubEncoder(const TargetInfo &TI, std::vector<uint8_t> Prologue,
              MCSource GetMC)
      : TI(TI), Prologue(std::move(Prologue)), GetMC(std::move(GetMC)) {}

  /// Jump sequence with literal (or simm16) fields set to zero, and where
  /// those fields are.
  struct Template {
    std::vector<uint8_t> Bytes;
    unsigned LoOffset = 0; ///< Long form: lo32 literal dword.
    unsigned HiOffset = 0; ///< Long form: hi32 literal dword.
  };

  llvm::Error checkSpec(const StubSpec &Spec) const;
  llvm::Expected<const Template *> getTemplate(StubSpec::RegKind Form,
                                               unsigned SGPR) const;
  llvm::Expected<Template> buildTemplate(StubSpec::RegKind Form,
                                         unsigned SGPR) const;
  llvm::Error encodeHalf(const StubSpec &Spec, uint64_t HalfAddr,
                         uint64_t Target, uint8_t *Out) const;
  std::optional<int16_t> branchOffset(uint64_t StubAddr, uint64_t Target) const;

  TargetInfo TI;
  std::vector<uint8_t> Prologue;
  MCSource GetMC;
  bool HasOffset3fBug = false;

  /// Key: SGPR for SGPRPair, ~0u - Form for the others.
  mutable std::map<unsigned, Template> Templates;
};

/// Whether \p Bytes (at least 4) begin like a stub without prologue: a
/// SOP1 word (the s_getpc of the long form) or a SOPP word (s_branch). A
/// cheap test on raw bytes; decodeStub() decides.
bool looksLikeStubStart(llvm::ArrayRef<uint8_t> Bytes);

/// Whether the 256-byte slot \p Slot may hold a stub after a prologue of
/// \p PrologueSize bytes: it begins like one (looksLikeStubStart) and every
/// word after the longest jump of that start (4 bytes after a SOPP word, 24
/// after a SOP1 word) is \p TI's padding word. Code that merely starts
/// like a stub (a kernel that begins with s_getpc to reach its data) fails
/// this before MC is asked anything; decodeStub() decides.
bool looksLikeStubSlot(const TargetInfo &TI, llvm::ArrayRef<uint8_t> Slot,
                       uint64_t PrologueSize = 0);

/// Recognizes a stub at \p Addr: \p Bytes must start with \p ExpectedPrologue,
/// then hold a long-form or short-form jump on a single register pair, then
/// PadWord up to 256 bytes. The jump is decoded with the MC disassembler and
/// emulated with \p MC (for \p TI's processor). std::nullopt when the bytes
/// are not a stub; an error only when MC itself fails. With at least 512
/// bytes, the half at +256 is decoded too.
llvm::Expected<std::optional<DecodedStub>>
decodeStub(const TargetInfo &TI, const TargetMC &MC,
           llvm::ArrayRef<uint8_t> Bytes, uint64_t Addr,
           llvm::ArrayRef<uint8_t> ExpectedPrologue = {});

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_STUBENCODER_H
