//===- hotswap/Passes/PatchInsns.h - patch-insns and print<sites> -*- C++
//-*-===//
//
// patch-insns<match=REGEX|at=OFFSET;where=before|after|replace;
//             insert=FILE;only=REGEX;grow-sgprs=N;grow-vgprs=N;
//             entry=FILE;reserve-sgpr-pairs=N;reserve-vgpr-pairs=N;
//             place=copy|site;far=clone|fail>
//   Requires:     a linked (ET_DYN) code object with kernels.
//   Establishes:  at every site of the rule in every selected kernel (an
//                 instruction whose text, as LLVM MC prints it, matches
//                 REGEX, or the one at byte OFFSET of the kernel's code),
//                 the assembly of FILE runs before the instruction, after
//                 it, or in its place. place=copy (the default): the
//                 kernel runs a copy of its code (clone-kernels'
//                 placement: code::relocate with the bodies inserted,
//                 proven, in the run's appended segment); its original
//                 bytes stay as they were. place=site: the kernel runs its
//                 own code, each site's instruction a branch to its body in
//                 the appended segment (InPlacePlan.h, Code/InPlace.h),
//                 recorded in `.hotswap.patches` (PatchRecord.h); a kernel
//                 not every site of which can be patched so is copied
//                 (far=clone, the default) or has its sites refused
//                 (far=fail).
//   Placeholders: FILE may name registers the pass binds, per site, to
//                 registers proven free there (code::siteRegisters: dead,
//                 not written by a load in flight, inside the kernel's
//                 allocation, not touched by the site's instruction):
//                 %s0, %s1... SGPRs; %sp0, %sp1... aligned SGPR pairs
//                 (s[2k:2k+1]; %sp0.0 and %sp0.1 its registers); %v0,
//                 %v1... VGPRs; %opN (%opN.K) operand
//                 N of the site's instruction (register K of a tuple). A
//                 line holding only %orig places the site's instruction
//                 itself (where=replace only). Lines `%else` separate
//                 alternative bodies: the first that binds and passes the
//                 checks at a site is used. Comments start with ';', '#'
//                 or '//'.
//   Entry code:   entry=FILE runs before the first instruction of every
//                 kernel with a site (SiteRule::EntryBeforeBody), with
//                 %kernarg bound to the SGPR pair of the launch's kernarg
//                 segment pointer, %wgid.x/y/z to the workgroup IDs'
//                 registers and %tid to v0 (the work-item ID).
//                 reserve-sgpr-pairs=N and reserve-vgpr-pairs=N bind %rpN
//                 and %rvpN to pairs above every register the kernel
//                 names, the same in the entry's code and at every site
//                 (the allocation grows).
//   Checks:       each body, per site, with code::checkBody: straight-line,
//                 writes only what the site gives, touches no register a
//                 load still writes, memory waited for inside.
//                 verify checks the same again from the bytes.
//   Records:      the `.hotswap.clones` line of each patched kernel, with
//                 its inserted ranges and replaced instructions; in place,
//                 the `.hotswap.patches` line of each site.
//   Refuses:      a site inside an s_clause window or the kernarg preload
//                 header, `after` an instruction control does not always
//                 leave to the next or whose next is a join, `replace` of a
//                 control-flow instruction: warned (errors with --strict),
//                 and the kernel is patched at its other sites; so is a
//                 site where a placeholder finds no free register; a kernel
//                 whose copy cannot be made is left as it is (warned). A
//                 body that does not assemble, a body writing what its
//                 site does not give:
//                 one error naming FILE, the line and the site, nothing
//                 written. A rule that matches nothing is a warning.
//   Kernels already running a copy (cloned or patched before) or patched
//   in place are left alone: patch before clone-kernels. A kernel entered
//   through a stub keeps it, led to the copy (StubRetarget.h).
//
// print<sites;...the same parameters...>
//   Every site of the rule, per kernel: applied (how: in the kernel's
//   copy, or in place with its body's address) with the registers bound
//   and the body's size, or refused and why; for a kernel place=site
//   copies, why; text or JSON. Nothing changes.
// print<sites;instrument=kernel|block[;per=wave|lane][;only=REGEX]>
//   The same for the sites instrument (Instrument.h) would count.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PATCHINSNS_H
#define HOTSWAP_PASSES_PATCHINSNS_H

#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Passes/KernelsPass.h"

#include "llvm/Support/Regex.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

/// One rule: which instructions, where, what.
struct PatchRule {
  std::string Match;
  std::optional<uint64_t> At;
  code::SiteWhere Where = code::SiteWhere::Before;
  std::string InsertFile;
  std::string Only;
  /// Registers above the kernels' allocation placeholders may take, whose
  /// descriptors and metadata counts then grow (grow-sgprs=N, gfx6-9;
  /// grow-vgprs=N; on the gfx90a class the AGPRs move up behind them).
  unsigned GrowSGPRs = 0, GrowVGPRs = 0;
  /// Code run before the first instruction of every kernel with a site
  /// (entry=FILE; SiteRule::EntryBeforeBody), and aligned register pairs
  /// reserved for the whole kernel above its allocation
  /// (reserve-sgpr-pairs=N, %rpN; reserve-vgpr-pairs=N, %rvpN), which the
  /// entry's code may set up for the sites to read.
  std::string EntryFile;
  unsigned ReserveSGPRPairs = 0, ReserveVGPRPairs = 0;
  /// Where the bodies go: in a copy of each kernel with a site
  /// (place=copy), or each site's instruction becomes a branch to its body
  /// in the appended code (place=site, Code/InPlace.h). A kernel whose
  /// sites cannot all be patched in place (out of a branch's reach, an
  /// instruction that cannot move) is copied (far=clone) or has every
  /// site refused (far=fail).
  bool InPlace = false;
  bool FarFail = false;

  /// Parses "match=...;where=...;insert=...;only=..." for pass \p Pass.
  static llvm::Expected<PatchRule> parse(llvm::StringRef Pass,
                                         llvm::StringRef Params);
  void print(llvm::raw_ostream &OS) const;
};

class PatchInsnsPass : public KernelsPassMixin<PatchInsnsPass> {
public:
  static constexpr llvm::StringLiteral Name = "patch-insns";
  static constexpr llvm::StringLiteral Invariant =
      "every selected kernel with a site of the rule runs its patched copy";

  explicit PatchInsnsPass(PatchRule Rule);
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);
  void printPipeline(llvm::raw_ostream &OS) const override;

  llvm::Expected<bool> holds(Object &Obj, KernelsAnalysis::Result &R,
                             AnalysisManager &AM, PassContext &Ctx);
  llvm::Expected<PreservedAnalyses> runOnKernels(Object &Obj,
                                                 KernelsAnalysis::Result &R,
                                                 AnalysisManager &AM,
                                                 PassContext &Ctx);

  ~PatchInsnsPass() override;

private:
  PatchRule Rule;
  /// The sites holds() found, for the run that follows it on the same
  /// object (planning decodes every candidate kernel: done once).
  struct Planned;
  std::unique_ptr<Planned> Plan;
};

class SitesPrinterPass : public Pass {
public:
  explicit SitesPrinterPass(PatchRule Rule);
  /// print<sites;instrument=kernel|block[;per=wave|lane][;base=auto|none]
  /// [;only=REGEX]>: the sites instrument would count, and why the others
  /// are not.
  SitesPrinterPass(bool InstrumentEntryOnly, bool PerLane, std::string Only,
                   bool Based = true);
  static llvm::Expected<std::unique_ptr<Pass>> create(llvm::StringRef Params);

  llvm::StringRef name() const override { return "print<sites>"; }
  void printPipeline(llvm::raw_ostream &OS) const override;
  bool isTransform() const override { return false; }
  llvm::Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                        PassContext &Ctx) override;

private:
  PatchRule Rule;
  /// Set: instrument's sites (true: the entry only), not Rule's.
  std::optional<bool> InstrumentEntryOnly;
  bool InstrumentPerLane = false, InstrumentBased = true;
};

} // namespace hotswap

#endif // HOTSWAP_PASSES_PATCHINSNS_H
