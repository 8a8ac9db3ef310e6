//===- hotswap/Passes/SitePlanner.h - Code inserted at sites ----*- C++ -*-===//
//
// What every pass that inserts code at instructions of kernels shares
// (patch-insns, instrument): which sites a rule selects, and for each the
// body it places there, with its placeholders bound to registers proven
// free at the site (code::siteRegisters) and checked (code::checkBody), or
// why the site takes none.
//
// A rule selects its sites one of three ways: instructions whose text (as
// LLVM MC prints it) matches a regular expression, or that start at a byte
// offset of the kernel's code (patch-insns); the first instruction of every
// reachable block that is not alignment padding; or the kernel's first
// instruction (instrument). Its body is lines of assembly, as a rule file
// holds them (readRuleFile) or as a pass writes them, with placeholders:
// %s0, %s1... SGPRs; %sp0, %sp1... aligned SGPR pairs (%sp0.0, %sp0.1 its
// registers); %v0, %v1... VGPRs; %vp0, %vp1... aligned VGPR pairs (%vp0.0,
// %vp0.1);
// %opN (%opN.K) operand N of the site's instruction (register K of a
// tuple); a line `%orig` (the site's instruction, where=replace only);
// lines `%else` between alternative bodies (the first that binds and passes
// the checks at a site is used). In the code at a function's first
// instruction (SiteRule::EntryBody), also what the launch sets: %kernarg,
// the SGPR pair of the kernarg segment pointer; %wgid.x, %wgid.y,
// %wgid.z, the registers of the workgroup IDs (on gfx12 y and z, halves of
// ttmp7, extracted first into a free SGPR); %tid, v0, the work-item ID.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_SITEPLANNER_H
#define HOTSWAP_PASSES_SITEPLANNER_H

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/LongJump.h"
#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Passes/CodeAnalysis.h"
#include "hotswap/Passes/Kernels.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Regex.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hotswap {

class Object;
struct PassContext;

/// One line of a body, as written: its number and the file it comes from
/// (empty: SiteRule::BodyName), for errors.
struct SourceLine {
  unsigned Number = 0;
  std::string Text;
  std::string File;
};

/// The lines of rule file \p Path with comments (';', '#', '//') cut off
/// and blank ones dropped; an error for a file that holds no instruction or
/// a misplaced `%else`.
llvm::Expected<std::vector<SourceLine>> readRuleFile(llvm::StringRef Path);

/// How a rule selects its sites.
enum class SiteSelect : uint8_t {
  /// Instructions matching SiteRule::Match, or the one at SiteRule::At.
  Matched,
  /// The first instruction of every reachable block that is not padding.
  BlockStarts,
  /// The kernel's first instruction.
  KernelEntry,
};

struct SiteRule {
  SiteSelect Select = SiteSelect::Matched;
  std::string Match;
  std::optional<uint64_t> At;
  code::SiteWhere Where = code::SiteWhere::Before;
  /// Kernels whose names match (empty: all).
  std::string Only;
  /// What errors call the body ("'FILE' line N: ...").
  std::string BodyName;
  std::vector<SourceLine> Body;
  /// The body for wave64 functions, where it must differ (EXEC is a pair):
  /// empty, Body serves both.
  std::vector<SourceLine> BodyWave64;
  /// The body may read the PC: its pass fixes its bytes up once placed.
  bool BodyMayReadPC = false;
  /// A body's stores and atomics without return may still be in flight
  /// when it ends (code::checkBody; counter code's own memory).
  bool StoresMayStay = false;
  /// SGPRs above the kernels' allocation placeholders may take (gfx6-9,
  /// where the descriptor's allocation can grow): the pass must raise the
  /// allocation to KernelSites::SGPRsUsed.
  unsigned ExtraSGPRs = 0;
  /// VGPRs above the kernels' allocation placeholders may take: the pass
  /// must raise the allocation to KernelSites::VGPRsUsed (on the gfx90a
  /// class, ACCUM_OFFSET too: the AGPRs move up behind them).
  unsigned ExtraVGPRs = 0;
  /// The body at the function's first instruction, where it differs
  /// (empty: Body there too): code that sets up what the others use. With
  /// EntryBeforeBody, code that runs before it instead.
  std::vector<SourceLine> EntryBody;
  /// The same for wave64 functions, where it must differ (empty:
  /// EntryBody serves both).
  std::vector<SourceLine> EntryBodyWave64;
  /// With SiteSelect::Matched: EntryBody is code of its own, before the
  /// first instruction of every function with a site (where the rule
  /// selects that instruction too, before it or in its place, EntryBody's
  /// lines come first in that site's body; after it, it is a site of its
  /// own). A function whose entry takes no code has every site refused,
  /// and one whose sites all are refused takes no entry code.
  bool EntryBeforeBody = false;
  /// Aligned SGPR pairs reserved for the whole function above its
  /// allocation (gfx6-9), %rp0, %rp1... (%rp0.0, %rp0.1 their registers):
  /// the same registers at every site, so a value the entry body puts
  /// there is still there at every other site (the original code never
  /// names them). A function where they do not fit, that calls (a callee
  /// may take them), that firmware may start past its first instruction
  /// (a preload header), or whose first instruction takes no body has
  /// every site refused (KernelSites::Refused says why); the pass raises
  /// the allocation (KernelSites::SGPRsUsed).
  unsigned ReservedPairs = 0;
  /// Aligned VGPR pairs reserved likewise (%rvp0, %rvp0.0, %rvp0.1...),
  /// above every VGPR the function names; the allocation may grow
  /// (KernelSites::VGPRsUsed, as ExtraVGPRs).
  unsigned ReservedVGPRPairs = 0;
  /// %nth, in a rule that sets MaxNth: how many of the function's sites
  /// took a body before this one. A site where it would exceed MaxNth is
  /// refused (with ReservedPairs, every site of the function).
  unsigned MaxNth = ~0u;
  /// A site where no body passes the checks is refused (with the first
  /// problem), not an error: for bodies a pass writes, which cannot be
  /// fixed by their user (instrument's lane count writes SCC).
  bool ProblemsRefuse = false;
  /// A body may be given the guards its seam needs against hazards
  /// (Code/SiteHazards.h); without, a hazard is a problem of the body (for
  /// code whose shape verify knows: instrument's counter code).
  bool Guards = true;
  /// Each function's graph and instructions are kept with its sites
  /// (KernelSites::Code), for a copy made next (planClones).
  bool KeepCode = false;
  /// Each applied site of the rule's own body (SiteRole::Rule) is given the
  /// registers of a gateway before it and of a long jump back after it
  /// (Code/InPlace.h), where there are some: patch-insns<place=site>.
  bool LongJumps = false;
};

/// Which body a site takes.
enum class SiteRole : uint8_t {
  /// The rule's (SiteRule::Body; SiteRule::EntryBody at the first
  /// instruction of a rule without EntryBeforeBody).
  Rule,
  /// The entry's alone (SiteRule::EntryBeforeBody: the rule does not
  /// select the instruction, or its site comes after it).
  Entry,
  /// The entry's lines, then the rule's (SiteRule::EntryBeforeBody).
  EntryThenRule,
};

/// One site and what it takes.
struct SitePlan {
  /// The instruction (an index of the function's graph) and its offset in
  /// the kernel's code.
  uint32_t Insn = 0;
  uint64_t Offset = 0;
  std::string Text;
  /// Where the body goes, and which body it is.
  code::SiteWhere Where = code::SiteWhere::Before;
  SiteRole Role = SiteRole::Rule;
  /// Why the site takes no code (empty: it does).
  std::string Refusal;
  std::vector<uint8_t> Body;
  /// Which body of the rule (1-based; 0 when it has one).
  unsigned Alternative = 0;
  /// Placeholder -> register, in the order of first use.
  std::vector<std::pair<std::string, std::string>> Bound;
  /// The body as assembly, one instruction per line, guards included
  /// (%orig as .long words): what verify assembles again.
  std::vector<std::string> Asm;
  /// The guards put around the body against hazards ("s_nop 4 before"),
  /// and the hazards they clear, as a person reads them.
  std::vector<std::string> Guards, GuardReasons;
  /// With SiteRule::LongJumps: registers a gateway may use before the
  /// instruction, and a long jump back after it (nullopt: none free).
  std::optional<code::LongJumpRegs> GatewayRegs, ReturnRegs;
};

/// The sites of one function and the kernels that enter it.
struct KernelSites {
  size_t Function = 0;
  std::vector<size_t> Kernels;
  std::vector<SitePlan> Sites;
  /// The SGPRs the kernels' descriptors allocate (usable ones), and the
  /// highest SGPR bound at an applied site + 1 (0: none).
  unsigned SGPRsAllocated = 0, SGPRsUsed = 0;
  /// The same for VGPRs.
  unsigned VGPRsAllocated = 0, VGPRsUsed = 0;
  /// Why the function took no reserved registers (SiteRule::ReservedPairs)
  /// and so no body at any site (empty: it took them, or none were asked).
  std::string Refused;
  /// The first reserved register (s<Reserved>, v<ReservedVGPR>), when
  /// some were taken, and how many (2 per pair).
  std::optional<unsigned> Reserved, ReservedVGPR;
  unsigned ReservedCount = 0, ReservedVGPRCount = 0;
  /// With SiteRule::KeepCode, where a site takes code: the graph and the
  /// instructions the sites were planned on.
  std::shared_ptr<code::DecodedFunction> Code;
  size_t applied() const;
};

/// Selected kernels (names matching \p Only) that run their own code (not
/// a copy; through a stub or not) and have no sites patched in place
/// (warned of, with \p Ctx), grouped by function (an index of \p M),
/// in function order.
std::vector<std::pair<size_t, std::vector<size_t>>>
candidateFunctions(Object &Obj, const KernelsAnalysis::Result &R,
                   const code::FunctionMap &M,
                   const std::optional<llvm::Regex> &Only, PassContext *Ctx,
                   llvm::StringRef PassName);

/// Every candidate function's sites of \p Rule (functions without one are
/// left out; with \p OnlyFunctions, only those functions). A body that
/// does not assemble or fails the checks at a site (when no alternative
/// passes) is an error naming the line and the site.
llvm::Expected<std::vector<KernelSites>>
planAllSites(Object &Obj, const SiteRule &Rule, KernelsAnalysis::Result &R,
             CodeAnalysis::Result &CA, PassContext *Ctx,
             llvm::StringRef PassName,
             llvm::ArrayRef<size_t> OnlyFunctions = {});

/// Whether a selected kernel (names matching \p Only) runs a copy of its
/// code (`.hotswap.clone.text`) or has sites patched in place
/// (`.hotswap.patches`): a pass that places code at sites has run.
/// Raises the descriptors of \p KS's kernels to hold the registers bound
/// above their allocation (SiteRule::ExtraSGPRs/ExtraVGPRs), before their
/// copies are placed. An error when they do not fit a descriptor.
llvm::Error growDescriptors(KernelsAnalysis::Result &R, const KernelSites &KS);

/// Once \p KS's copy is placed: the metadata's .sgpr_count and .vgpr_count
/// of its kernels raised likewise, -stats counting the kernels whose
/// allocation grew and those whose occupancy drops (occupancyChange, with
/// \p MC; with \p WarnDrops each such kernel is a warning too). Sets
/// \p MetadataChanged when a value changed (the caller commits the
/// metadata).
llvm::Error growMetadataCounts(const amdgpu::TargetMC &MC,
                               KernelsAnalysis::Result &R,
                               const KernelSites &KS, PassContext &Ctx,
                               llvm::StringRef PassName, bool &MetadataChanged,
                               bool WarnDrops = false);

/// Waves per SIMD kernel \p K of \p KS's function holds by its registers
/// (AMDGPU/Occupancy.h) before and after the allocation grows to what
/// \p KS binds (KernelSites::SGPRsUsed, VGPRsUsed): from its metadata's
/// .sgpr_count, .vgpr_count and .agpr_count, its descriptor's allocation
/// where the metadata has none.
std::pair<unsigned, unsigned> occupancyChange(const amdgpu::TargetMC &MC,
                                              const KernelsAnalysis::Result &R,
                                              const KernelInfo &K,
                                              const KernelSites &KS);

bool anySelectedKernelRunsACopy(const Object &Obj,
                                const KernelsAnalysis::Result &R,
                                llvm::StringRef Only);

} // namespace hotswap

#endif // HOTSWAP_PASSES_SITEPLANNER_H
