//===- hotswap/Passes/SynthTrampolines.h - synth-trampolines ----*- C++ -*-===//
//
// synth-trampolines<prologue=none|gfx1250-vmem|asm:FILE;only=REGEX;
//                   form=auto|long;skip-unwrappable>
//   Requires:     a linked (ET_DYN) code object with kernels.
//   Establishes:  every selected kernel is entered through a stub or has a
//                 stub waiting for it in a pool section. Stubs are 256 bytes
//                 (512 for kernarg-preload kernels on gfx90a/942/950, whose
//                 firmware enters at +256), 256-byte aligned, in one new
//                 `.hotswap.text` section covered by a new last PT_LOAD (R+X)
//                 above every existing address, followed by the target's
//                 prefetch guard. Nothing loaded moves.
//   Form:         one `s_branch` when the kernel is within +-128 KiB of its
//                 stub (no register), else getpc/add/addc/setpc on a
//                 scratch SGPR pair; the form is decided first.
//   Scratch:      the stub runs before any instruction of the kernel, when
//                 the only SGPRs holding a value are those the hardware set
//                 up from the descriptor (AMDGPUUsage, "Initial Kernel
//                 Execution State"): USER_SGPR_COUNT user SGPRs (preloaded
//                 arguments included; 6 bits on gfx125x), then workgroup ID
//                 X/Y/Z, workgroup info and the private segment wave offset
//                 as RSRC2 enables them. Compiled code reads no other SGPR
//                 before writing it, so the pair is the lowest even one at
//                 or above those live-ins that lies inside the wave's
//                 allocation, even if the kernel uses it later
//                 (amdgpu::chooseScratch, from the descriptor and e_flags
//                 alone; no code is read): gfx10+ below s106; gfx6-9 below
//                 the special registers at the top of (granule + 1) * 8
//                 SGPRs (VCC; XNACK_MASK unless e_flags say xnack-;
//                 FLAT_SCRATCH when architected or when the descriptor
//                 enables flat scratch init). If it does not fit: VCC
//                 (undefined at entry, the topmost pair) when the live-ins
//                 lie below every special, else the pair with a larger
//                 granule (patch-descriptors writes it; never on gfx802/805),
//                 else VCC with one. docs/ARCHITECTURE.md has the argument.
//   Fails closed: a selected kernel that cannot be wrapped fails the object,
//                 unless skip-unwrappable (then it is a warning and counted).
//   Skipped when: no selected kernel needs a stub (second runs, and outputs
//                 of earlier versions, whose stubs are recognised by
//                 decoding them whatever register they use).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_SYNTHTRAMPOLINES_H
#define HOTSWAP_PASSES_SYNTHTRAMPOLINES_H

#include "hotswap/Passes/KernelsPass.h"

#include "llvm/Support/Regex.h"

namespace hotswap {

struct TrampolineOptions {
  enum class PrologueKind { None, GFX1250VMem, AsmFile };
  PrologueKind Prologue = PrologueKind::None;
  std::string PrologueFile;
  std::string Only; // regex on kernel names; empty = every kernel
  bool ForceLong = false;
  bool SkipUnwrappable = false;
};

class SynthTrampolinesPass : public KernelsPassMixin<SynthTrampolinesPass> {
public:
  static constexpr llvm::StringLiteral Name = "synth-trampolines";
  static constexpr llvm::StringLiteral Invariant =
      "every selected kernel has an entry stub";

  explicit SynthTrampolinesPass(TrampolineOptions Opts);
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
  void printPipeline(llvm::raw_ostream &OS) const override;

  llvm::Expected<bool> holds(Object &Obj, KernelsAnalysis::Result &R,
                             AnalysisManager &AM, PassContext &Ctx);
  llvm::Expected<PreservedAnalyses> runOnKernels(Object &Obj,
                                                 KernelsAnalysis::Result &R,
                                                 AnalysisManager &AM,
                                                 PassContext &Ctx);

private:
  /// Kernels that need a stub now (indices into the analysis result).
  std::vector<size_t> candidates(Object &Obj, const KernelsAnalysis::Result &R,
                                 llvm::ArrayRef<uint8_t> Prologue,
                                 PassContext *Ctx) const;
  /// The prologue's bytes (assembled with this run's MC), empty for none.
  llvm::Expected<std::vector<uint8_t>>
  prologueFor(Object &Obj, const KernelsAnalysis::Result &R,
              AnalysisManager &AM) const;
  llvm::Expected<std::vector<uint8_t>>
  prologueBytes(const amdgpu::TargetInfo &TI, const amdgpu::TargetMC &MC) const;

  TrampolineOptions Opts;
  std::optional<llvm::Regex> OnlyRE;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_SYNTHTRAMPOLINES_H
