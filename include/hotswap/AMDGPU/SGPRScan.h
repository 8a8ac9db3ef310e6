//===- hotswap/AMDGPU/SGPRScan.h - SGPR usage from the code -----*- C++ -*-===//
//
// When a code object carries no `<kernel>.numbered_sgpr` symbol (anything
// built before LLVM 22), the metadata `.sgpr_count` includes VCC,
// FLAT_SCRATCH and XNACK_MASK, which sit at the top of the allocation on
// gfx6-9: using it as "SGPRs in use" wastes the very registers a stub needs.
// Decoding the code with the MC disassembler and taking the highest
// explicitly numbered SGPR gives the exact count. A range that calls or
// jumps indirectly cannot be bounded by itself: the caller then scans all
// executable code.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_SGPRSCAN_H
#define HOTSWAP_AMDGPU_SGPRSCAN_H

#include "hotswap/AMDGPU/TargetInfo.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

namespace hotswap {
namespace amdgpu {

struct SGPRScan {
  /// 1 + the highest SGPR named by any operand (0 when none).
  unsigned NumSGPRs = 0;
  /// The range contains s_swappc/s_setpc/s_call: code elsewhere runs with
  /// the same SGPRs, so the count does not bound the range's usage.
  bool HasCalls = false;
  /// The range uses s_movrel* (SGPRs indexed by M0): no bound at all.
  bool IndexesSGPRs = false;
  /// Words that did not decode (data, padding of unknown form).
  uint64_t UndecodedWords = 0;
};

class TargetMC;

/// Whether a gfx8-9 instruction starting with the word \p W is in one of the
/// 32-bit encodings (VOP1, VOP2, VOPC: bit 31 clear; SOP1, SOP2, SOPK, SOPC,
/// SOPP: bits 31-30 = 0b10) and not their DPP or SDWA form (src0 = 0xfa,
/// 0xf9), whose second word names registers. What such an instruction is,
/// and its size, is decided by \p W alone: its second word, when it takes
/// one, is a 32-bit literal, an immediate. (Every 64-bit encoding of these
/// generations has bits 31-30 = 0b11.) ScratchSGPRTest checks this against
/// the MC disassembler on every opcode of these encodings.
bool isOneWordEncoding(uint32_t W);

/// The memo key of a gfx8-9 instruction whose first word \p W is a one-word
/// encoding (isOneWordEncoding): \p W with the VGPR fields reduced as for
/// the 64-bit encodings below: VOP2's vdst and vsrc1, VOPC's vsrc1, and a
/// VGPR in src0 of these and VOP1. VOP1's vdst is kept (v_readfirstlane_b32
/// writes an SGPR there).
uint32_t memoKey(uint32_t W);

/// The memo key of a gfx8-9 instruction of a 64-bit encoding whose first 8
/// bytes, little-endian, are \p Q: \p Q with each VGPR of the VOP3/VOP3P
/// sources, and of DS and FLAT addresses, data and destinations, reduced to
/// v1 (odd) or v2 (even); other encodings are their own key. Which VGPR an
/// instruction names does not change its opcode, its size or its SGPRs, so
/// instructions with one key summarize alike. What can change whether an
/// instruction decodes is kept: v0 (unused fields must be 0), parity
/// (tuples are even-aligned on gfx90a) and v224 and up (a tuple starting
/// there may run out of range). SGPRScanMemoTest checks this against the MC
/// disassembler on every opcode of these encodings.
uint64_t memoKey(uint64_t Q);

/// Scans code ranges with one MC state (one thread at a time), remembering
/// what each instruction decoded to: compiled code repeats a small set of
/// encodings (librocsparse0's largest gfx803 object: 405 000 instructions, of
/// which 26 000 distinct one-word encodings and 31 000 distinct two-word
/// ones, and 8 100 and 9 400 distinct memo keys), and the MC
/// disassembler tries dozens of decoder tables per instruction. On gfx8-9 an
/// instruction is at most 8 bytes (a 32-bit literal is the second word of a
/// 32-bit encoding; 64-bit encodings take none), so what the scan needs of
/// it -- its size, the highest SGPR it names, whether it calls or indexes
/// SGPRs -- depends on its first 8 bytes only, and on its first word alone
/// for the one-word encodings (isOneWordEncoding), as long as the bytes do
/// not end within the decoder's reach (there the scan decodes as before);
/// instructions are remembered by their memoKey, which drops which VGPRs
/// they name.
class SGPRScanner {
public:
  SGPRScanner(const TargetInfo &TI, const TargetMC &MC) : TI(TI), MC(MC) {}

  /// Scans \p Code (at address \p Addr). Error when the target has no
  /// disassembler in LLVM 22 (gfx6/gfx7).
  llvm::Expected<SGPRScan> scan(llvm::ArrayRef<uint8_t> Code, uint64_t Addr);

  /// Instructions decoded with the MC disassembler, and those whose
  /// encoding was seen before (for tests and profiling).
  uint64_t decoded() const { return Decoded; }
  uint64_t remembered() const { return Remembered; }

private:
  /// What the scan takes from one instruction; Size 0: not an instruction.
  struct InstSummary {
    uint8_t Size = 0;
    bool Call = false;
    bool MovRel = false;
    int MaxSGPR = -1;
  };
  InstSummary summarize(llvm::ArrayRef<uint8_t> Bytes, uint64_t Addr);

  /// Keys of the memo: instruction words, hashed by all their bits.
  /// DenseMap's default hash for 32-bit keys (Val * 37) depends only on a
  /// key's low bits, which for a word are register fields: words that differ
  /// in their opcode collide and the probes run long.
  template <typename T> struct WordInfo : llvm::DenseMapInfo<T> {
    static unsigned getHashValue(T W) {
      uint64_t X = uint64_t(W) * 0x9e3779b97f4a7c15u;
      return static_cast<unsigned>(X >> 32 ^ X);
    }
  };

  const TargetInfo &TI;
  const TargetMC &MC;
  // memoKey of the first 8 bytes -> summary
  llvm::DenseMap<uint64_t, InstSummary, WordInfo<uint64_t>> ByWords;
  // memoKey of a one-word encoding -> summary
  llvm::DenseMap<uint32_t, InstSummary, WordInfo<uint32_t>> ByWord;
  llvm::DenseMap<unsigned, int> RegMax; // register -> highest SGPR
  llvm::DenseMap<unsigned, std::pair<bool, bool>> OpcodeKind; // call, movrel
  uint64_t Decoded = 0, Remembered = 0;
};

/// Scans \p Code (at address \p Addr) with \p MC (one SGPRScanner for this
/// range alone). Error when the target has no disassembler in LLVM 22
/// (gfx6/gfx7).
llvm::Expected<SGPRScan> scanSGPRs(const TargetInfo &TI, const TargetMC &MC,
                                   llvm::ArrayRef<uint8_t> Code, uint64_t Addr);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_SGPRSCAN_H
