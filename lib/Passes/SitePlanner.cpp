//===- lib/Passes/SitePlanner.cpp - Code inserted at sites ----------------===//

#include "hotswap/Passes/SitePlanner.h"

#include "hotswap/Code/CallReads.h"

#include "hotswap/AMDGPU/Occupancy.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/InPlace.h"
#include "hotswap/Code/Liveness.h"
#include "hotswap/Code/SiteHazards.h"
#include "hotswap/Code/WaitCounts.h"
#include "hotswap/Pass/Pass.h"
#include "hotswap/Passes/PatchRecord.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

size_t KernelSites::applied() const {
  return llvm::count_if(Sites,
                        [](const SitePlan &S) { return S.Refusal.empty(); });
}

Expected<std::vector<SourceLine>> hotswap::readRuleFile(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getFile(Path);
  if (!B)
    return makeError("'" + Path + "': " + B.getError().message());
  std::vector<SourceLine> Out;
  SmallVector<StringRef, 16> Lines;
  (*B)->getBuffer().split(Lines, '\n');
  for (unsigned N = 0; N < Lines.size(); ++N) {
    StringRef L = Lines[N];
    for (StringRef C : {";", "#", "//"})
      L = L.split(C).first;
    L = L.trim();
    if (!L.empty())
      Out.push_back({N + 1, L.str(), Path.str()});
  }
  bool Empty = true;
  for (const SourceLine &L : Out) {
    if (L.Text == "%else" && Empty)
      return makeError("'" + Path + "' line " + Twine(L.Number) +
                       ": %else follows no instruction");
    Empty = L.Text == "%else";
  }
  if (Empty)
    return makeError("'" + Path + "': " +
                     (Out.empty() ? "holds no instruction"
                                  : "%else is followed by no instruction"));
  return Out;
}

namespace {

/// The placeholders of \p Lines: kind ("s", "sp", "v", "vp") and number.
struct Placeholders {
  /// In the order of first use.
  std::vector<std::pair<std::string, unsigned>> Uses;
  bool Orig = false;
};

Placeholders findPlaceholders(ArrayRef<SourceLine> Lines) {
  Placeholders P;
  for (const SourceLine &L : Lines) {
    StringRef T = L.Text;
    if (T == "%orig") {
      P.Orig = true;
      continue;
    }
    for (size_t I = T.find('%'); I != StringRef::npos; I = T.find('%', I + 1)) {
      StringRef Rest = T.drop_front(I + 1);
      StringRef Kind = Rest.starts_with("sp")   ? "sp"
                       : Rest.starts_with("s")  ? "s"
                       : Rest.starts_with("vp") ? "vp"
                       : Rest.starts_with("v")  ? "v"
                                                : "";
      if (Kind.empty())
        continue;
      StringRef Digits = Rest.drop_front(Kind.size()).take_while(isDigit);
      unsigned N;
      if (Digits.empty() || Digits.getAsInteger(10, N))
        continue;
      std::pair<std::string, unsigned> U{Kind.str(), N};
      if (!llvm::is_contained(P.Uses, U))
        P.Uses.push_back(U);
    }
  }
  return P;
}

/// One body of a rule's file: the file holds one, or several separated by
/// lines `%else`, tried in order at each site.
struct Alternative {
  std::vector<SourceLine> Lines;
  Placeholders P;
};

std::vector<Alternative> alternatives(ArrayRef<SourceLine> Lines) {
  std::vector<Alternative> Out(1);
  for (const SourceLine &L : Lines) {
    if (L.Text == "%else") {
      Out.emplace_back();
      continue;
    }
    Out.back().Lines.push_back(L);
  }
  for (Alternative &A : Out)
    A.P = findPlaceholders(A.Lines);
  return Out;
}

/// Indices of class \p C (SGPR or VGPR) all of whose units are in \p Set,
/// below \p Limit.
std::vector<unsigned> freeIndices(const RegisterModel &RM, const RegSet &Set,
                                  RegClass C, unsigned Limit) {
  std::vector<unsigned> Out;
  RegSet One = RM.emptySet();
  for (unsigned I = 0; I < Limit; ++I) {
    One.reset();
    if (C == RegClass::SGPR)
      RM.addSGPRs(I, 1, One);
    else
      RM.addVGPRs(I, 1, One);
    if (One.none())
      break;
    RegSet Outside = One;
    Outside.reset(Set);
    if (Outside.none())
      Out.push_back(I);
  }
  return Out;
}

/// The letters every text \p RE matches must start with: after a leading
/// '^', the run of [a-z0-9_] up to the first other character (less one when
/// that is a quantifier); empty when \p RE has an alternative ('|') or no
/// anchor. A mnemonic that does not start with them cannot match.
std::string literalMnemonicPrefix(StringRef RE) {
  if (!RE.consume_front("^") || RE.contains('|'))
    return "";
  size_t N = 0;
  while (N < RE.size() && (isLower(RE[N]) || isDigit(RE[N]) || RE[N] == '_'))
    ++N;
  if (N < RE.size() && StringRef("?*{").contains(RE[N]))
    N = N ? N - 1 : 0;
  return RE.take_front(N).str();
}

/// A register the launch sets that the entry's code may name: the
/// register as assembly, the SGPRs and VGPRs it is (none for a trap
/// temporary), or why the kernels are given none (Reg empty).
struct LaunchRegister {
  StringRef Name;
  std::string Reg;
  std::vector<unsigned> SGPRs, VGPRs;
  std::string Why;
  /// The value is half of Reg (a trap temporary): the low 16 bits
  /// (Shift 0) or the high ones (16). The entry's code extracts it into
  /// an SGPR of its own (extractPackedLaunch).
  std::optional<unsigned> Shift;
};

/// %kernarg, %wgid.x, %wgid.y, %wgid.z and %tid for code entered by
/// \p Kernels, from their descriptors (they must agree).
std::vector<LaunchRegister>
launchRegisters(ArrayRef<const KernelInfo *> Kernels,
                const amdgpu::TargetInfo &T) {
  std::vector<LaunchRegister> Out;
  auto Of = [&](StringRef Name, auto &&OfKernel) {
    LaunchRegister &LR = Out.emplace_back();
    LR.Name = Name;
    bool First = true;
    for (const KernelInfo *K : Kernels) {
      LaunchRegister One;
      OfKernel(*K, One);
      if (One.Reg.empty()) {
        LR.Reg.clear();
        LR.Why = One.Why;
        return;
      }
      if (!First && One.Reg != LR.Reg) {
        LR.Reg.clear();
        LR.Why = "the kernels entering this code are given it in different "
                 "registers";
        return;
      }
      LR.Reg = One.Reg;
      LR.SGPRs = One.SGPRs;
      LR.VGPRs = One.VGPRs;
      LR.Shift = One.Shift;
      First = false;
    }
    if (First)
      LR.Why = "no kernel enters this code";
  };
  Of("%kernarg", [&](const KernelInfo &K, LaunchRegister &LR) {
    if (std::optional<unsigned> At = K.KD.kernargSegmentPtrSGPR(T)) {
      LR.Reg = "s[" + std::to_string(*At) + ":" + std::to_string(*At + 1) + "]";
      LR.SGPRs = {*At, *At + 1};
    } else {
      LR.Why = "kernel '" + K.Name +
               "' is not given a kernarg segment pointer (its descriptor "
               "does not enable one)";
    }
  });
  static constexpr StringLiteral WG[] = {"%wgid.x", "%wgid.y", "%wgid.z"};
  for (unsigned D = 0; D < 3; ++D)
    Of(WG[D], [&](const KernelInfo &K, LaunchRegister &LR) {
      if (T.ArchitectedSGPRs) {
        // x in ttmp9; y and z in ttmp7, bits 0-15 and 16-31, where the
        // descriptor enables them.
        const bool Enabled[] = {true, K.KD.enablesWorkgroupIDY(),
                                K.KD.enablesWorkgroupIDZ()};
        if (!Enabled[D]) {
          LR.Why = "kernel '" + K.Name + "' is not given workgroup ID " +
                   "xyz"[D] + " (its descriptor does not enable it)";
        } else if (D == 0) {
          LR.Reg = "ttmp9";
        } else {
          LR.Reg = "ttmp7";
          LR.Shift = D == 1 ? 0 : 16;
        }
      } else if (std::optional<unsigned> At = K.KD.workgroupIDSGPR(T, D)) {
        LR.Reg = "s" + std::to_string(*At);
        LR.SGPRs = {*At};
      } else {
        LR.Why = "kernel '" + K.Name + "' is not given workgroup ID " +
                 "xyz"[D] + " (its descriptor does not enable it)";
      }
    });
  // The work-item ID x is always in v0 (y and z in bits 10-19 and 20-29
  // where the target packs them, else in v1 and v2).
  Of("%tid", [&](const KernelInfo &, LaunchRegister &LR) {
    LR.Reg = "v0";
    LR.VGPRs = {0};
  });
  return Out;
}

/// \p Lines (an entry's code) with each launch value that is half of a
/// register (LaunchRegister::Shift: gfx12's workgroup IDs y and z in
/// ttmp7) extracted first into an SGPR placeholder of its own, %sN past
/// every %s the lines name, which then stands for it: bound to a register
/// free at the entry like the others. s_pack_*_b32_b16 leave SCC alone.
std::vector<SourceLine> extractPackedLaunch(ArrayRef<SourceLine> Lines,
                                            ArrayRef<LaunchRegister> Launch) {
  unsigned Next = 0;
  for (const Alternative &A : alternatives(Lines))
    for (const auto &[Kind, N] : A.P.Uses)
      if (Kind == "s")
        Next = std::max(Next, N + 1);
  std::vector<SourceLine> Out(Lines.begin(), Lines.end());
  for (const LaunchRegister &LR : Launch) {
    if (!LR.Shift || LR.Reg.empty())
      continue;
    auto First = llvm::find_if(Out, [&](const SourceLine &L) {
      return StringRef(L.Text).contains(LR.Name);
    });
    if (First == Out.end())
      continue;
    const std::string Reg = "%s" + std::to_string(Next++);
    SourceLine Extract = *First;
    Extract.Text = (*LR.Shift ? "s_pack_hh_b32_b16 " : "s_pack_ll_b32_b16 ") +
                   Reg + ", " + LR.Reg + ", 0";
    for (SourceLine &L : Out)
      for (size_t At = L.Text.find(LR.Name.str()); At != std::string::npos;
           At = L.Text.find(LR.Name.str(), At + Reg.size()))
        L.Text.replace(At, LR.Name.size(), Reg);
    // First in every alternative (the entry's code may have several).
    std::vector<SourceLine> With;
    With.push_back(Extract);
    for (const SourceLine &L : Out) {
      With.push_back(L);
      if (L.Text == "%else")
        With.push_back(Extract);
    }
    Out = std::move(With);
  }
  return Out;
}

/// Everything one run of the rule needs, shared by the pass and the
/// printer.
class SitePlanner {
public:
  /// Plans with \p MC (the object's, or one of a thread's own); reads
  /// only what \p CA shares read-only.
  SitePlanner(const SiteRule &Rule, const CodeAnalysis::Result &CA,
              const amdgpu::TargetInfo &T, amdgpu::TargetMC &MC)
      : Rule(Rule), Alts(alternatives(Rule.Body)),
        Alts64(alternatives(Rule.BodyWave64.empty() ? Rule.Body
                                                    : Rule.BodyWave64)),
        CA(CA), T(T), MC(MC),
        Calls(MC, CA.functions(),
              [&CA](const CodeFunction &F) {
                return std::optional<ArrayRef<uint8_t>>(CA.bytes(F));
              }),
        RM(RegisterModel::get(MC.regInfo())) {
    if (!Rule.Match.empty()) {
      MatchRE.emplace(Rule.Match);
      MnemonicPrefix = literalMnemonicPrefix(Rule.Match);
    }
  }

  /// The sites of function \p FI, entered by kernels \p Kernels.
  Expected<KernelSites> plan(size_t FI, ArrayRef<const KernelInfo *> Kernels);

private:
  Expected<std::vector<uint8_t>> assembleLine(StringRef Text);
  /// Puts around \p S's body the guards its seam needs (Hazards.h), where
  /// the rule lets it, and keeps the body in \p SH for the seams after it;
  /// the hazard that stays, if any, at the body's instruction it lands on.
  Expected<std::optional<BodyProblem>>
  guardHazards(SeamHazards &SH, SitePlan &S, const CodeFunction &F);
  /// Replaces %opN (operand N of \p MI: a register as written, or a
  /// constant) and %opN.K (register K of a register tuple) in \p Text.
  Error substituteOperands(std::string &Text, const MCInst &MI) const;
  Error siteError(const CodeFunction &F, const SitePlan &S,
                  const SourceLine &Line, const Twine &What) const {
    return makeError("'" + (Line.File.empty() ? Rule.BodyName : Line.File) +
                     "' line " + Twine(Line.Number) + ": " + What +
                     " (site: kernel '" + F.Name + "' +" + hex(S.Offset) +
                     ": " + S.Text + ")");
  }

  const SiteRule &Rule;
  /// The rule's bodies for wave32 functions and for wave64 ones.
  std::vector<Alternative> Alts, Alts64;
  const CodeAnalysis::Result &CA;
  const amdgpu::TargetInfo &T;
  amdgpu::TargetMC &MC;
  /// What calls read: a register no callee names is free before a call.
  CallReads Calls;
  const RegisterModel &RM;
  std::optional<Regex> MatchRE;
  /// What every matching instruction's mnemonic starts with (empty: no
  /// such prefix is known), and each opcode's mnemonic: instructions whose
  /// mnemonic cannot match are not printed.
  std::string MnemonicPrefix;
  DenseMap<unsigned, std::string> Mnemonics;
};

Error SitePlanner::substituteOperands(std::string &Text,
                                      const MCInst &MI) const {
  for (size_t At = Text.find("%op"); At != std::string::npos;
       At = Text.find("%op", At)) {
    StringRef Rest = StringRef(Text).drop_front(At + 3);
    StringRef Digits = Rest.take_while(isDigit);
    unsigned N, K = 0;
    if (Digits.empty() || Digits.getAsInteger(10, N))
      return makeError("'%op' must be followed by an operand number");
    size_t Len = 3 + Digits.size();
    bool Part = false;
    if (Rest.drop_front(Digits.size()).starts_with(".")) {
      StringRef KD = Rest.drop_front(Digits.size() + 1).take_while(isDigit);
      if (KD.empty() || KD.getAsInteger(10, K))
        return makeError("'%op" + Digits +
                         ".' must be followed by a "
                         "register number");
      Len += 1 + KD.size();
      Part = true;
    }
    if (N >= MI.getNumOperands())
      return makeError("the site's instruction has no operand " + Twine(N));
    const MCOperand &O = MI.getOperand(N);
    std::string Value;
    if (O.isReg() && O.getReg().isValid()) {
      RegSet Units = RM.emptySet();
      RM.addUnits(O.getReg(), Units);
      RegClass C = RM.classOf(O.getReg());
      if (!Part) {
        Value = RM.format(Units);
      } else if (C == RegClass::SGPR || C == RegClass::VGPR ||
                 C == RegClass::AGPR) {
        unsigned Lo = ~0u, Hi = 0;
        for (unsigned U : Units.set_bits()) {
          Lo = std::min<unsigned>(Lo, RM.unit(U).Index);
          Hi = std::max<unsigned>(Hi, RM.unit(U).Index);
        }
        if (Lo + K > Hi)
          return makeError("operand " + Twine(N) + " (" + RM.format(Units) +
                           ") has no register " + Twine(K));
        Value = (C == RegClass::SGPR   ? "s"
                 : C == RegClass::VGPR ? "v"
                                       : "a") +
                std::to_string(Lo + K);
      } else {
        return makeError("operand " + Twine(N) + " (" + RM.format(Units) +
                         ") is not an SGPR, VGPR or AGPR tuple");
      }
    } else if (std::optional<int64_t> V = immediateValue(O); V && !Part) {
      Value = std::to_string(*V);
    } else {
      return makeError("operand " + Twine(N) +
                       " of the site's instruction is not a register or a "
                       "constant");
    }
    Text.replace(At, Len, Value);
    At += Value.size();
  }
  return Error::success();
}

Expected<std::vector<uint8_t>> SitePlanner::assembleLine(StringRef Text) {
  // TargetMC keeps what it assembled, across planners.
  return MC.assemble(Text);
}

Expected<std::optional<BodyProblem>>
SitePlanner::guardHazards(SeamHazards &SH, SitePlan &S, const CodeFunction &F) {
  // The body's instructions, and their offsets in it.
  std::vector<uint64_t> Offsets;
  auto Decode = [&](ArrayRef<uint8_t> Bytes) {
    std::vector<MCInst> Out;
    Offsets.clear();
    const uint64_t At = F.Begin + S.Offset;
    decodeRange(MC, Bytes, At, [&](const Insn &I, const MCInst &M) {
      Out.push_back(M);
      Offsets.push_back(I.Addr - At);
    });
    return Out;
  };
  std::vector<MCInst> Body0 = Decode(S.Body);
  const std::vector<uint64_t> Offsets0 = Offsets;
  // A hazard as a problem of the body: at the instruction it lands on
  // (\p Skip guard instructions before the body's first).
  auto Problem = [&](const SeamProblem &P, size_t Skip) {
    BodyProblem BP{std::nullopt, 0, "it makes a hazard: " + P.What};
    if (P.Insn && *P.Insn >= Skip && *P.Insn - Skip < Offsets0.size()) {
      BP.Insn = uint32_t(*P.Insn - Skip);
      BP.Offset = Offsets0[*BP.Insn];
    }
    return std::optional<BodyProblem>(std::move(BP));
  };
  SeamGuards G = SH.guards(S.Insn, S.Where, Body0);
  if (G.Problem)
    return Problem(*G.Problem, 0);
  if (G.Before.empty() && G.After.empty()) {
    // Nothing to guard: the body as it is makes no hazard.
    SH.keep(S.Insn, S.Where, Body0);
    return std::optional<BodyProblem>();
  }
  size_t GuardsBefore = 0;
  {
    if (!Rule.Guards)
      return Problem(SeamProblem{G.Why.front(), std::nullopt}, 0);
    // The body with its guards, as bytes and as assembly.
    std::vector<uint8_t> Body;
    std::vector<std::string> Asm;
    const std::string *Sides[] = {&G.Before, nullptr, &G.After};
    for (const std::string *Side : Sides) {
      if (!Side) {
        llvm::append_range(Body, S.Body);
        llvm::append_range(Asm, S.Asm);
        continue;
      }
      SmallVector<StringRef, 4> Lines;
      StringRef(*Side).split(Lines, '\n', -1, false);
      if (Side == &G.Before)
        GuardsBefore = Lines.size();
      for (StringRef L : Lines) {
        Expected<std::vector<uint8_t>> B = assembleLine(L);
        if (!B)
          return B.takeError();
        llvm::append_range(Body, *B);
        Asm.push_back(L.str());
      }
    }
    S.Body = std::move(Body);
    S.Asm = std::move(Asm);
    auto Add = [&](const std::string &Side, StringRef Where) {
      if (Side.empty())
        return;
      std::string Text = Side;
      std::replace(Text.begin(), Text.end(), '\n', ';');
      S.Guards.push_back(Text + " " + Where.str());
    };
    Add(G.Before, "before");
    Add(G.After, "after");
    S.GuardReasons = G.Why;
  }
  if (std::optional<SeamProblem> P = SH.accept(S.Insn, S.Where, Decode(S.Body)))
    return Problem(*P, GuardsBefore);
  return std::optional<BodyProblem>();
}

Expected<KernelSites> SitePlanner::plan(size_t FI,
                                        ArrayRef<const KernelInfo *> Kernels) {
  const FunctionMap &M = CA.functions();
  const CodeFunction &F = M.Functions[FI];
  KernelSites KS;
  KS.Function = FI;
  auto Code = std::make_shared<DecodedFunction>();
  std::vector<MCInst> &Decoded = Code->Decoded;
  ArrayRef<uint8_t> Bytes = CA.bytes(F);
  FunctionCFG &G = Code->G;
  G = buildCFG(MC, F, Bytes, M, &Decoded);
  if (Decoded.size() != G.Insns.size())
    return KS;
  // The sites, before anything is computed for them.
  std::vector<bool> Starts;
  if (Rule.Select == SiteSelect::BlockStarts) {
    Starts.resize(G.Insns.size());
    for (const Block &B : G.Blocks)
      if (B.Reachable && !B.Padding && B.First < B.End)
        Starts[B.First] = true;
  }
  for (uint32_t I = 0; I < G.Insns.size(); ++I) {
    uint64_t Off = G.Insns[I].Addr - F.Begin;
    if (Rule.Select != SiteSelect::Matched) {
      if (Rule.Select == SiteSelect::KernelEntry ? I != 0 : !Starts[I])
        continue;
      SitePlan S;
      S.Insn = I;
      S.Offset = Off;
      S.Text =
          StringRef(MC.printInst(Decoded[I], G.Insns[I].Addr)).trim().str();
      S.Where = Rule.Where;
      KS.Sites.push_back(std::move(S));
      continue;
    }
    if (Rule.At ? Off != *Rule.At : false)
      continue;
    if (!MnemonicPrefix.empty()) {
      auto [It, New] = Mnemonics.try_emplace(Decoded[I].getOpcode());
      if (New)
        It->second = StringRef(MC.printInst(Decoded[I], G.Insns[I].Addr))
                         .trim()
                         .split(' ')
                         .first.str();
      if (!StringRef(It->second).starts_with(MnemonicPrefix))
        continue;
    }
    std::string Text =
        StringRef(MC.printInst(Decoded[I], G.Insns[I].Addr)).trim().str();
    if (MatchRE && !MatchRE->match(Text))
      continue;
    SitePlan S;
    S.Insn = I;
    S.Offset = Off;
    S.Text = std::move(Text);
    S.Where = Rule.Where;
    KS.Sites.push_back(std::move(S));
  }
  if (KS.Sites.empty())
    return KS;
  // Code of its own before the first instruction, or first in the body of
  // a site there that runs before the instruction or in its place.
  if (Rule.EntryBeforeBody && !Rule.EntryBody.empty()) {
    SitePlan &First = KS.Sites.front();
    if (First.Insn == 0 && First.Where != SiteWhere::After) {
      First.Role = SiteRole::EntryThenRule;
    } else {
      SitePlan S;
      S.Offset = G.Insns[0].Addr - F.Begin;
      S.Text =
          StringRef(MC.printInst(Decoded[0], G.Insns[0].Addr)).trim().str();
      S.Role = SiteRole::Entry;
      KS.Sites.insert(KS.Sites.begin(), std::move(S));
    }
  }
  for (const CodeFinding &Fd : G.Findings)
    if (Fd.Blocking) {
      for (SitePlan &S : KS.Sites)
        S.Refusal = "the kernel's code cannot be followed: " + Fd.Message;
      return KS;
    }
  // gfx1250: after s_set_vgpr_msb, v5 may name v261. Liveness reads VGPR
  // numbers as written, so a kernel that switches banks has no VGPR known
  // to be free anywhere (a write of "v5" in a window is not one of v5).
  if (llvm::any_of(G.Windows, [](const CodeWindow &W) {
        return W.K == CodeWindow::VGPRMSB;
      })) {
    for (SitePlan &S : KS.Sites)
      S.Refusal = "the kernel switches VGPR banks (s_set_vgpr_msb): which "
                  "VGPRs are free is not known";
    return KS;
  }
  // The hazards of code at the seams, made on first need: the rules of
  // the target and the function's code with the bodies accepted so far.
  struct SeamsOfFunction {
    HazardRules Rules;
    SeamHazards Finder;
    SeamsOfFunction(amdgpu::TargetMC &MC, HazardRules R, const FunctionCFG &G,
                    ArrayRef<MCInst> Decoded, FunctionKind Kind)
        : Rules(R), Finder(MC, Rules, G, Decoded, Kind) {}
  };
  std::optional<SeamsOfFunction> Seams;
  // Liveness is made when a site needs it. A body that binds no register
  // is checked first against a bound of what is live (LiveBound: the
  // registers the function names, where nothing else can be live); only
  // where that does not let it pass, or where the bound does not hold, is
  // liveness computed. The bound is never less than liveness, so a body it
  // lets pass liveness lets pass too.
  const LiveBound Bound(RM, G, instructionRegs(MC, Decoded, F.Wave32));
  std::optional<Liveness> L;
  auto Live = [&]() -> const Liveness & {
    if (!L)
      L.emplace(computeLiveness(MC, G, Decoded, F.Kind, F.Wave32, &Calls));
    return *L;
  };
  WaitCounts WC = computeWaitCounts(MC, G, Decoded, F.Kind, CA.generation());
  RegisterLimits Limits{~0u, ~0u};
  for (const KernelInfo *K : Kernels) {
    Limits.SGPRs = std::min(Limits.SGPRs, K->KD.usableSGPRs(T));
    Limits.VGPRs = std::min(Limits.VGPRs, K->KD.usableVGPRs(T));
  }
  // What the entry's code may read of the launch (%kernarg, %wgid.x...),
  // the same for every kernel entering the function.
  const std::vector<LaunchRegister> Launch = launchRegisters(Kernels, T);
  auto UsesLaunch = [](const Alternative &A, const LaunchRegister &LR) {
    return llvm::any_of(A.Lines, [&](const SourceLine &L) {
      return StringRef(L.Text).contains(LR.Name);
    });
  };
  // SGPRs above the allocation are free everywhere: the original code
  // never names them. A rule may take some where the descriptor's
  // allocation can grow (gfx6-9); its pass raises the allocation.
  KS.SGPRsAllocated = Limits.SGPRs;
  if (Rule.ExtraSGPRs && T.HasSGPRGranule && Limits.SGPRs != ~0u)
    Limits.SGPRs = std::min(Limits.SGPRs + Rule.ExtraSGPRs, T.AddressableSGPRs);
  // VGPRs likewise, up to the 256 a wave addresses (on the gfx90a class
  // the AGPRs that follow move up: growDescriptors).
  KS.VGPRsAllocated = Limits.VGPRs;
  if (Rule.ExtraVGPRs && Limits.VGPRs != ~0u)
    Limits.VGPRs = std::min(Limits.VGPRs + Rule.ExtraVGPRs, 256u);
  // Registers reserved for the whole function (SiteRule::ReservedPairs).
  auto RefuseAll = [&KS](const std::string &Why) {
    KS.Refused = Why;
    KS.Reserved.reset();
    KS.ReservedVGPR.reset();
    KS.SGPRsUsed = KS.VGPRsUsed = 0;
    for (SitePlan &S : KS.Sites) {
      S.Refusal = Why;
      S.Body.clear();
      S.Bound.clear();
      S.Asm.clear();
      S.Guards.clear();
      S.GuardReasons.clear();
    }
  };
  std::optional<unsigned> Reserved, ReservedV;
  const unsigned ReservedCount = 2 * Rule.ReservedPairs,
                 ReservedVCount = 2 * Rule.ReservedVGPRPairs;
  // What a refusal of reserved registers says (instrument's are SGPRs).
  const std::string NoneReserved =
      ReservedCount ? "no SGPRs reserved: " : "no VGPRs reserved: ";
  if (ReservedCount || ReservedVCount) {
    // Above every register the code names: a kernel may name SGPRs above
    // what its allocation is sure to hold (the special registers it does
    // not use leave it more). gfx10+ allocates every SGPR to every wave.
    const RegSet &Named = Bound.named();
    auto Above = [&](unsigned From, unsigned Limit, bool Vector) {
      RegSet One = RM.emptySet();
      for (unsigned I = 0; I < Limit; ++I) {
        One.reset();
        if (Vector)
          RM.addVGPRs(I, 1, One);
        else
          RM.addSGPRs(I, 1, One);
        if (One.anyCommon(Named))
          From = std::max(From, I + 1);
      }
      return unsigned(alignTo(From, 2));
    };
    const unsigned Lo =
        Above(T.HasSGPRGranule ? KS.SGPRsAllocated : 0, T.AddressableSGPRs,
              /*Vector=*/false);
    const unsigned VLo = Above(0, 256, /*Vector=*/true);
    std::string Why;
    if (ReservedCount && KS.SGPRsAllocated == ~0u)
      Why = "the kernel's SGPR allocation is not known";
    else if (ReservedCount &&
             Lo + ReservedCount + T.SGPRGranuleExtra > T.AddressableSGPRs)
      Why = std::to_string(ReservedCount) + " SGPRs above the allocation (s" +
            std::to_string(Lo) + " up) are not addressable";
    else if (ReservedVCount && VLo + ReservedVCount > 256)
      Why = std::to_string(ReservedVCount) + " VGPRs above v" +
            std::to_string(VLo) + " are not addressable";
    else if (!G.Calls.empty())
      Why = std::string("the kernel calls (a callee may use ") +
            (ReservedCount ? "SGPRs" : "VGPRs") + " above the allocation)";
    else if (llvm::any_of(G.Windows, [](const CodeWindow &W) {
               return W.K == CodeWindow::PreloadHeader;
             }))
      Why = "firmware may start the kernel past its first instruction (a "
            "preload header)";
    if (!Why.empty()) {
      RefuseAll(NoneReserved + Why);
      return KS;
    }
    if (ReservedCount) {
      Reserved = Lo;
      // Registers a rule may take above the allocation (ExtraSGPRs) come
      // after the reserved ones.
      const unsigned Extra =
          Rule.ExtraSGPRs && T.HasSGPRGranule ? Rule.ExtraSGPRs : 0;
      Limits.SGPRs = std::max(Limits.SGPRs, std::min(Lo + ReservedCount + Extra,
                                                     T.AddressableSGPRs));
    }
    if (ReservedVCount) {
      ReservedV = VLo;
      Limits.VGPRs = std::max(
          Limits.VGPRs, std::min(VLo + ReservedVCount + Rule.ExtraVGPRs, 256u));
    }
  }
  // %rpN (%rpN.K), %rvpN (%rvpN.K) and %nth in \p Text.
  size_t Accepted = 0;
  // Placeholders \p Name N (N below \p Count) for the pairs from register
  // \p First of class \p Class ("s", "v").
  auto SubstitutePairs = [](std::string &Text, StringRef Name, unsigned First,
                            unsigned Count, StringRef Class) {
    for (size_t At = Text.find(Name.str()); At != std::string::npos;
         At = Text.find(Name.str(), At)) {
      StringRef Rest = StringRef(Text).drop_front(At + Name.size());
      StringRef Digits = Rest.take_while(isDigit);
      unsigned N;
      if (Digits.empty() || Digits.getAsInteger(10, N) || N >= Count) {
        ++At;
        continue;
      }
      const unsigned Lo = First + 2 * N;
      size_t Len = Name.size() + Digits.size();
      std::string Reg = Class.str() + "[" + std::to_string(Lo) + ":" +
                        std::to_string(Lo + 1) + "]";
      StringRef After = Rest.drop_front(Digits.size());
      if (After.size() >= 2 && After[0] == '.' &&
          (After[1] == '0' || After[1] == '1') &&
          (After.size() == 2 || !isDigit(After[2]))) {
        Reg = Class.str() + std::to_string(Lo + (After[1] - '0'));
        Len += 2;
      }
      Text.replace(At, Len, Reg);
      At += Reg.size();
    }
  };
  auto SubstituteReserved = [&](std::string &Text) {
    if (Reserved)
      SubstitutePairs(Text, "%rp", *Reserved, Rule.ReservedPairs, "s");
    if (ReservedV)
      SubstitutePairs(Text, "%rvp", *ReservedV, Rule.ReservedVGPRPairs, "v");
    for (size_t At = Text.find("%nth");
         Rule.MaxNth != ~0u && At != std::string::npos;
         At = Text.find("%nth", At)) {
      std::string N = std::to_string(Accepted);
      Text.replace(At, 4, N);
      At += N.size();
    }
  };
  const RegSet Outside = outsideLimits(RM, Limits);
  const std::vector<Alternative> EntryAlts = alternatives(extractPackedLaunch(
      !F.Wave32 && !Rule.EntryBodyWave64.empty() ? Rule.EntryBodyWave64
                                                 : Rule.EntryBody,
      Launch));
  for (SitePlan &S : KS.Sites) {
    S.Refusal = siteRefusal(G, S.Insn, S.Where);
    if (!S.Refusal.empty())
      continue;
    // The seam's registers: by the bound while it holds (Exact false).
    bool Exact = !Bound.holds();
    auto ExactRegs = [&] {
      Exact = true;
      return siteRegisters(RM, G, Live(), WC, S.Insn, S.Where, Limits);
    };
    SiteRegisters Regs =
        Exact ? ExactRegs()
              : seamRegisters(RM, Bound.at(S.Insn, S.Where),
                              WC.stateBefore(S.Where == SiteWhere::After
                                                 ? S.Insn + 1
                                                 : S.Insn)
                                  .inFlight(RM),
                              Bound.regs(S.Insn), S.Where, Outside);
    if (Regs.InFlight == RM.allTracked()) {
      S.Refusal = "what loads still write here is not known (after a call, "
                  "or a path the analysis cannot follow)";
      continue;
    }
    // The first alternative of the file that binds and passes the checks
    // here; none binding is a refusal, none passing an error.
    std::string NoRoom;
    std::optional<std::pair<const SourceLine *, std::string>> FirstProblem;
    bool Fits = false;
    const std::vector<Alternative> &RuleAlts = F.Wave32 ? Alts : Alts64;
    // The entry's lines, then the rule's: every pair of alternatives.
    std::vector<Alternative> Both;
    if (S.Role == SiteRole::EntryThenRule)
      for (const Alternative &E : EntryAlts)
        for (const Alternative &A : RuleAlts) {
          Alternative &B = Both.emplace_back();
          B.Lines = E.Lines;
          llvm::append_range(B.Lines, A.Lines);
          B.P = findPlaceholders(B.Lines);
        }
    // A rule that selects the first instruction itself may give it a body
    // of its own (instrument's).
    const bool EntryInstead =
        !Rule.EntryBeforeBody && S.Insn == 0 && !Rule.EntryBody.empty();
    const std::vector<Alternative> &Bodies =
        S.Role == SiteRole::Entry || EntryInstead ? EntryAlts
        : S.Role == SiteRole::EntryThenRule       ? Both
                                                  : RuleAlts;
    if (Accepted > Rule.MaxNth) {
      const std::string Why = "more sites than the code reaches (" +
                              std::to_string(Rule.MaxNth + 1) + ")";
      // Code that reads reserved registers is the function's or none.
      if (Reserved || ReservedV) {
        RefuseAll(NoneReserved + Why);
        return KS;
      }
      S.Refusal = Why;
      continue;
    }
    for (const Alternative &Alt : Bodies) {
      if (Alt.P.Orig && S.Where != SiteWhere::Replace) {
        auto Orig = llvm::find_if(
            Alt.Lines, [](const SourceLine &L) { return L.Text == "%orig"; });
        return makeError("'" +
                         (Orig->File.empty() ? Rule.BodyName : Orig->File) +
                         "': %orig places the site's instruction, which only "
                         "where=replace leaves out");
      }
      // A kernel the launch gives no such register takes no code that
      // reads it.
      if (S.Role != SiteRole::Rule)
        if (auto No = llvm::find_if(Launch,
                                    [&](const LaunchRegister &LR) {
                                      return LR.Reg.empty() &&
                                             UsesLaunch(Alt, LR);
                                    });
            No != Launch.end()) {
          if (NoRoom.empty())
            NoRoom = No->Name.str() + ": " + No->Why;
          continue;
        }
      bool Bound = true;
      // Bind: pairs first (they need alignment), then single registers.
      std::vector<unsigned> FreeS, FreeV;
      if (!Alt.P.Uses.empty() && !Exact)
        Regs = ExactRegs();
      if (!Alt.P.Uses.empty()) {
        FreeS = freeIndices(RM, Regs.Scratch, RegClass::SGPR, Limits.SGPRs);
        FreeV = freeIndices(RM, Regs.Scratch, RegClass::VGPR, Limits.VGPRs);
        // The reserved registers are free for the original code, not for
        // the bodies: they hold what the entry's code set up.
        auto Outside = [](std::vector<unsigned> &Free,
                          std::optional<unsigned> First, unsigned Count) {
          if (First)
            llvm::erase_if(Free, [&](unsigned I) {
              return I >= *First && I < *First + Count;
            });
        };
        Outside(FreeS, Reserved, ReservedCount);
        Outside(FreeV, ReservedV, ReservedVCount);
        // What the launch set is dead where the code never reads it, but
        // the entry's code does.
        if (S.Role != SiteRole::Rule)
          for (const LaunchRegister &LR : Launch)
            if (UsesLaunch(Alt, LR)) {
              llvm::erase_if(FreeS, [&](unsigned I) {
                return llvm::is_contained(LR.SGPRs, I);
              });
              llvm::erase_if(FreeV, [&](unsigned I) {
                return llvm::is_contained(LR.VGPRs, I);
              });
            }
      }
      // Registers taken by the body's placeholders, SGPRs and VGPRs; the
      // lowest free register (aligned pair) of a class not taken yet.
      std::vector<bool> TakenS, TakenV;
      auto Take = [](std::vector<bool> &Taken, unsigned I) {
        if (I >= Taken.size())
          Taken.resize(I + 1);
        Taken[I] = true;
      };
      auto IsTaken = [](const std::vector<bool> &Taken, unsigned I) {
        return I < Taken.size() && Taken[I];
      };
      auto TakeFree = [&](const std::vector<unsigned> &Free,
                          std::vector<bool> &Taken, char Prefix,
                          bool Pair) -> std::optional<std::string> {
        for (unsigned I : Free) {
          if (IsTaken(Taken, I))
            continue;
          if (!Pair) {
            Take(Taken, I);
            return Prefix + std::to_string(I);
          }
          // Even-aligned: SGPR pairs must be, and 64-bit VGPR operands on
          // the gfx90a class.
          if (I % 2 == 0 && !IsTaken(Taken, I + 1) &&
              llvm::is_contained(Free, I + 1)) {
            Take(Taken, I);
            Take(Taken, I + 1);
            return Prefix + ("[" + std::to_string(I) + ":" +
                             std::to_string(I + 1) + "]");
          }
        }
        return std::nullopt;
      };
      for (StringRef Kind : {"sp", "vp", "s", "v"})
        for (const auto &[K, N] : Alt.P.Uses) {
          if (K != Kind)
            continue;
          std::string Name = "%" + K + std::to_string(N);
          const bool Vector = K == "v" || K == "vp";
          std::optional<std::string> Reg =
              TakeFree(Vector ? FreeV : FreeS, Vector ? TakenV : TakenS,
                       Vector ? 'v' : 's', K.size() == 2);
          if (!Reg) {
            // The site has no room for the body: refused, like a site in a
            // window (raising the allocation is not built yet).
            if (NoRoom.empty())
              NoRoom =
                  "no free " +
                  std::string(K == "sp"   ? "aligned SGPR pair"
                              : K == "s"  ? "SGPR"
                              : K == "vp" ? "aligned VGPR pair"
                                          : "VGPR") +
                  " for " + Name + " (the kernel's allocation holds " +
                  std::to_string(Vector ? KS.VGPRsAllocated
                                        : KS.SGPRsAllocated) +
                  " " + (Vector ? "VGPRs" : "SGPRs") +
                  (!Vector && Limits.SGPRs > KS.SGPRsAllocated
                       ? ", and can grow by " +
                             std::to_string(Limits.SGPRs - KS.SGPRsAllocated)
                   : Vector && Limits.VGPRs > KS.VGPRsAllocated
                       ? ", and can grow by " +
                             std::to_string(Limits.VGPRs - KS.VGPRsAllocated)
                       : std::string()) +
                  "; the others are live here, used by the instruction or "
                  "taken)";
            Bound = false;
            continue;
          }
          S.Bound.push_back({Name, *Reg});
        }
      if (!Bound) {
        S.Bound.clear();
        continue;
      }
      // Assemble line by line, so that each byte has its line.
      // Offset -> line.
      std::vector<std::pair<uint64_t, const SourceLine *>> LineAt;
      for (const SourceLine &SL : Alt.Lines) {
        LineAt.push_back({S.Body.size(), &SL});
        if (SL.Text == "%orig") {
          const Insn &In = G.Insns[S.Insn];
          ArrayRef<uint8_t> Orig = Bytes.slice(In.Addr - F.Begin, In.Size);
          llvm::append_range(S.Body, Orig);
          // As data: printed and assembled again, an instruction's
          // encoding may change.
          for (size_t W = 0; W + 4 <= Orig.size(); W += 4)
            S.Asm.push_back(".long " +
                            hex(support::endian::read32le(Orig.data() + W)));
          continue;
        }
        // Longest names first: %sp1 before %s1.
        std::string Text = SL.Text;
        SubstituteReserved(Text);
        for (const LaunchRegister &LR : Launch) {
          if (!StringRef(Text).contains(LR.Name))
            continue;
          if (S.Role == SiteRole::Rule)
            return siteError(F, S, SL,
                             LR.Name + " names a register the kernel's launch "
                                       "sets, which only the entry's code "
                                       "reads");
          for (size_t At = Text.find(LR.Name.str()); At != std::string::npos;
               At = Text.find(LR.Name.str(), At + 1)) {
            // NAME.0 and NAME.1: one register of a pair.
            const size_t End = At + LR.Name.size();
            if (LR.SGPRs.size() == 2 && End + 2 <= Text.size() &&
                Text[End] == '.' &&
                (Text[End + 1] == '0' || Text[End + 1] == '1') &&
                (End + 2 == Text.size() || !isDigit(Text[End + 2]))) {
              const std::string One =
                  "s" + std::to_string(LR.SGPRs[Text[End + 1] - '0']);
              Text.replace(At, LR.Name.size() + 2, One);
              continue;
            }
            Text.replace(At, LR.Name.size(), LR.Reg);
          }
        }
        std::vector<std::pair<std::string, std::string>> ByLength = S.Bound;
        llvm::sort(ByLength, [](const auto &A, const auto &B) {
          return A.first.size() > B.first.size();
        });
        for (const auto &[Name, Reg] : ByLength)
          for (size_t At = Text.find(Name); At != std::string::npos;
               At = Text.find(Name, At)) {
            // %s1 must not match the start of %s12.
            size_t End = At + Name.size();
            if (End < Text.size() && isDigit(Text[End])) {
              At += 1;
              continue;
            }
            // %spN.0 and %spN.1 (%vpN.K): one register of the pair
            // s[L:L+1] (v[L:L+1]).
            unsigned Lo;
            const bool Pair = StringRef(Name).starts_with("%sp") ||
                              StringRef(Name).starts_with("%vp");
            if (Pair && End + 1 < Text.size() && Text[End] == '.' &&
                (Text[End + 1] == '0' || Text[End + 1] == '1') &&
                (End + 2 == Text.size() || !isDigit(Text[End + 2])) &&
                !StringRef(Reg).drop_front(2).take_while(isDigit).getAsInteger(
                    10, Lo)) {
              std::string One =
                  Reg.substr(0, 1) + std::to_string(Lo + (Text[End + 1] - '0'));
              Text.replace(At, Name.size() + 2, One);
              At += One.size();
              continue;
            }
            Text.replace(At, Name.size(), Reg);
            At += Reg.size();
          }
        if (Error E = substituteOperands(Text, Decoded[S.Insn]))
          return siteError(F, S, SL, toString(std::move(E)));
        if (StringRef(Text).contains('%'))
          return siteError(F, S, SL,
                           "'" + Text +
                               "' names a placeholder the pass does "
                               "not know (%sN, %spN, %vN, %vpN, %opN, "
                               "%orig; %rpN and %rvpN of reserved pairs)");
        Expected<std::vector<uint8_t>> B = assembleLine(Text);
        if (!B) {
          // The assembler saw one line: its own line number says nothing.
          std::string Msg = toString(B.takeError());
          StringRef M = Msg;
          if (size_t At = M.find("line 1: "); At != StringRef::npos)
            Msg = (M.take_front(At) + M.drop_front(At + 8)).str();
          return siteError(F, S, SL,
                           "'" + Text + "': " + StringRef(Msg).trim());
        }
        llvm::append_range(S.Body, *B);
        S.Asm.push_back(std::move(Text));
      }
      auto LineOf = [&](uint64_t Off) {
        const SourceLine *Line = LineAt.front().second;
        for (auto [O, N] : LineAt)
          if (O <= Off)
            Line = N;
        return Line;
      };
      std::vector<BodyProblem> Problems =
          checkBody(MC, S.Body, F.Wave32, WC.Set, Regs.Writable, Regs.InFlight,
                    Rule.BodyMayReadPC, Rule.StoresMayStay);
      if (!Problems.empty() && !Exact) {
        Regs = ExactRegs();
        Problems =
            checkBody(MC, S.Body, F.Wave32, WC.Set, Regs.Writable,
                      Regs.InFlight, Rule.BodyMayReadPC, Rule.StoresMayStay);
      }
      if (Problems.empty()) {
        // The hazards the body makes with the code around it.
        if (!Seams)
          Seams.emplace(MC, HazardRules::of(MC, T, F.Wave32), G, Decoded,
                        F.Kind);
        Expected<std::optional<BodyProblem>> Hazard =
            guardHazards(Seams->Finder, S, F);
        if (!Hazard)
          return Hazard.takeError();
        if (*Hazard) {
          Problems.push_back(std::move(**Hazard));
          S.Guards.clear();
          S.GuardReasons.clear();
        }
      }
      if (Problems.empty()) {
        Fits = true;
        ++Accepted;
        if (Bodies.size() > 1)
          S.Alternative = &Alt - Bodies.data() + 1;
        for (unsigned I = TakenS.size(); I-- > 0;)
          if (TakenS[I]) {
            KS.SGPRsUsed = std::max(KS.SGPRsUsed, I + 1);
            break;
          }
        for (unsigned I = TakenV.size(); I-- > 0;)
          if (TakenV[I]) {
            KS.VGPRsUsed = std::max(KS.VGPRsUsed, I + 1);
            break;
          }
        break;
      }
      if (!FirstProblem)
        FirstProblem.emplace(LineOf(Problems.front().Offset),
                             Problems.front().Message);
      S.Body.clear();
      S.Bound.clear();
      S.Asm.clear();
    }
    if (Fits)
      continue;
    if (FirstProblem && Rule.ProblemsRefuse) {
      S.Refusal = "the code does not fit here: " + FirstProblem->second;
      continue;
    }
    if (FirstProblem)
      return siteError(F, S, *FirstProblem->first, FirstProblem->second);
    S.Refusal = NoRoom;
  }
  if (Rule.EntryBeforeBody && !Rule.EntryBody.empty()) {
    // The rule's sites run after the entry's code, or not at all.
    SitePlan &E = KS.Sites.front();
    if (!E.Refusal.empty()) {
      RefuseAll("the entry's code cannot go before the kernel's first "
                "instruction: " +
                E.Refusal);
      return KS;
    }
    if (E.Role == SiteRole::Entry && KS.applied() == 1) {
      E.Refusal = "no site of the rule takes code in this kernel";
      E.Body.clear();
      E.Bound.clear();
      E.Asm.clear();
      E.Guards.clear();
      E.GuardReasons.clear();
      KS.SGPRsUsed = KS.VGPRsUsed = 0;
      return KS;
    }
  }
  if (Reserved || ReservedV) {
    // What the entry body sets up must run before every other site.
    if (KS.Sites.empty() || KS.Sites.front().Insn != 0 ||
        !KS.Sites.front().Refusal.empty()) {
      RefuseAll(NoneReserved +
                "the kernel's first instruction takes no "
                "code" +
                (KS.Sites.empty() || KS.Sites.front().Insn != 0
                     ? std::string()
                     : " (" + KS.Sites.front().Refusal + ")"));
      return KS;
    }
    if (Reserved) {
      KS.Reserved = Reserved;
      KS.ReservedCount = ReservedCount;
      KS.SGPRsUsed = std::max(KS.SGPRsUsed, *Reserved + ReservedCount);
    }
    if (ReservedV) {
      KS.ReservedVGPR = ReservedV;
      KS.ReservedVGPRCount = ReservedVCount;
      KS.VGPRsUsed = std::max(KS.VGPRsUsed, *ReservedV + ReservedVCount);
    }
  }
  // Registers for a gateway and a long jump back (patch-insns<place=site>),
  // within the allocation as it was and among the SGPRs the code names.
  if (Rule.LongJumps && KS.applied()) {
    const RegisterLimits Own{KS.SGPRsAllocated, KS.VGPRsAllocated};
    for (SitePlan &S : KS.Sites) {
      // Only where control goes on to the next instruction (one that
      // cannot move is not patched in place either).
      if (!S.Refusal.empty() || S.Role != SiteRole::Rule ||
          S.Insn + 1 >= G.Insns.size() || G.Insns[S.Insn].F != Flow::Next)
        continue;
      S.GatewayRegs = jumpRegisters(
          RM, siteRegisters(RM, G, Live(), WC, S.Insn, SiteWhere::Before, Own),
          Bound.named(), CA.generation());
      if (S.GatewayRegs)
        S.ReturnRegs = jumpRegisters(
            RM, siteRegisters(RM, G, Live(), WC, S.Insn, SiteWhere::After, Own),
            Bound.named(), CA.generation());
    }
  }
  if (Rule.KeepCode && KS.applied())
    KS.Code = std::move(Code);
  return KS;
}

} // namespace

std::vector<std::pair<size_t, std::vector<size_t>>> hotswap::candidateFunctions(
    Object &Obj, const KernelsAnalysis::Result &R, const FunctionMap &M,
    const std::optional<Regex> &Only, PassContext *Ctx, StringRef PassName) {
  std::vector<std::pair<size_t, std::vector<size_t>>> Out;
  DenseMap<size_t, size_t> Slot;
  // Kernels with sites patched in place run code whose sites lead out of
  // it (a record that does not read is verify's to report).
  Expected<StringSet<>> Patched = patchedKernels(Obj);
  if (!Patched)
    consumeError(Patched.takeError());
  for (size_t I = 0; I < R.Kernels.size(); ++I) {
    const KernelInfo &K = R.Kernels[I];
    if (Only && !Only->match(K.Name))
      continue;
    const Section *S = Obj.sectionForAddress(K.CodeEntry);
    if (S && S->Name == CloneSectionName)
      continue; // runs a copy already
    if (Patched && Patched->count(K.Name)) {
      if (Ctx)
        Ctx->Warn("kernel '" + K.Name +
                  "' has sites patched in place: left alone (" + PassName +
                  " before patch-insns<place=site>)");
      continue;
    }
    const CodeFunction *F = M.startingAt(K.CodeEntry);
    if (!F)
      continue;
    size_t FI = M.indexOf(*F);
    auto [It, New] = Slot.try_emplace(FI, Out.size());
    if (New)
      Out.push_back({FI, {}});
    Out[It->second].second.push_back(I);
  }
  llvm::sort(Out);
  return Out;
}

Expected<std::vector<KernelSites>>
hotswap::planAllSites(Object &Obj, const SiteRule &Rule,
                      KernelsAnalysis::Result &R, CodeAnalysis::Result &CA,
                      PassContext *Ctx, StringRef PassName,
                      ArrayRef<size_t> OnlyFunctions) {
  std::optional<Regex> Only;
  if (!Rule.Only.empty())
    Only.emplace(Rule.Only);
  std::vector<std::pair<size_t, std::vector<size_t>>> Work;
  for (auto &C :
       candidateFunctions(Obj, R, CA.functions(), Only, Ctx, PassName))
    if (OnlyFunctions.empty() || llvm::is_contained(OnlyFunctions, C.first))
      Work.push_back(std::move(C));
  // Each function's plan depends on it alone: functions are planned on the
  // pool's threads where there is one, each thread with a TargetMC and a
  // planner of its own (the code analysis' TargetMCs, kept with what they
  // decoded and assembled for the next call; the first thread has the
  // object's, idle while the caller waits, whose decodes the caller's next
  // steps reuse), and taken in function order (the first error too), so
  // the answer is the one a single thread gives.
  std::vector<std::optional<Expected<KernelSites>>> Plans(Work.size());
  auto PlanOne = [&](SitePlanner &P, size_t J) {
    std::vector<const KernelInfo *> Ks;
    for (size_t I : Work[J].second)
      Ks.push_back(&R.Kernels[I]);
    Plans[J].emplace(P.plan(Work[J].first, Ks));
  };
  llvm::ThreadPoolInterface *Pool = Ctx ? Ctx->ThreadPool : nullptr;
  if (Pool && Work.size() > 1 && Pool->getMaxConcurrency() > 1) {
    const size_t Chunks =
        std::min<size_t>(Pool->getMaxConcurrency(), Work.size());
    std::vector<amdgpu::TargetMC *> MCs(Chunks);
    for (size_t C = 0; C < Chunks; ++C) {
      Expected<amdgpu::TargetMC &> MC = CA.workerMC(C);
      if (!MC)
        return MC.takeError();
      MCs[C] = &*MC;
    }
    ThreadPoolTaskGroup Tasks(*Pool);
    for (size_t C = 0; C < Chunks; ++C)
      Tasks.async([&, C] {
        SitePlanner P(Rule, CA, R.Target, *MCs[C]);
        for (size_t J = C; J < Work.size(); J += Chunks)
          PlanOne(P, J);
      });
    Tasks.wait();
  } else {
    SitePlanner P(Rule, CA, R.Target, CA.mc());
    for (size_t J = 0; J < Work.size(); ++J) {
      PlanOne(P, J);
      if (!*Plans[J])
        break;
    }
  }
  std::vector<KernelSites> Out;
  std::optional<Error> First;
  for (size_t J = 0; J < Work.size(); ++J) {
    if (!Plans[J])
      continue;
    Expected<KernelSites> &KS = *Plans[J];
    if (!KS) {
      if (!First)
        First.emplace(KS.takeError());
      else
        consumeError(KS.takeError());
      continue;
    }
    KS->Kernels = Work[J].second;
    if (!KS->Sites.empty() && !First)
      Out.push_back(std::move(*KS));
  }
  if (First)
    return std::move(*First);
  return Out;
}

Error hotswap::growDescriptors(KernelsAnalysis::Result &R,
                               const KernelSites &KS) {
  if (KS.SGPRsUsed > KS.SGPRsAllocated)
    for (size_t KI : KS.Kernels) {
      KernelInfo &K = R.Kernels[KI];
      const unsigned Need = KS.SGPRsUsed + R.Target.SGPRGranuleExtra;
      const unsigned Granule = std::max(K.KD.sgprGranule(), (Need + 7) / 8 - 1);
      if (Granule >= 16 || Need > 128)
        return makeError("kernel '" + K.Name + "': " + Twine(Need) +
                         " SGPRs do not fit its descriptor");
      K.KD.setSGPRGranule(Granule);
    }
  if (KS.VGPRsUsed > KS.VGPRsAllocated)
    for (size_t KI : KS.Kernels) {
      KernelInfo &K = R.Kernels[KI];
      // The encoding's granule (KernelDescriptor::usableVGPRs): 8 for
      // wave32 on gfx10+, 4 otherwise.
      const unsigned Unit =
          R.Target.IsGFX90AClass ||
                  (R.Target.Gen >= amdgpu::Generation::GFX10 && K.KD.isWave32())
              ? 8
              : 4;
      unsigned Total = KS.VGPRsUsed;
      if (R.Target.IsGFX90AClass) {
        // One register file: the AGPRs start at ACCUM_OFFSET, and the
        // granule counts both. The AGPRs (all the allocation holds above
        // the offset) move up behind the VGPRs; code names them relative
        // to the offset, so it reads the same registers.
        const unsigned Accum = K.KD.accumOffset();
        const unsigned Allocated = (K.KD.vgprGranule() + 1) * 8;
        const unsigned AGPRs = Allocated > Accum ? Allocated - Accum : 0;
        const unsigned NewAccum =
            std::max(Accum, unsigned(alignTo(KS.VGPRsUsed, 4)));
        Total = NewAccum + AGPRs;
        if (NewAccum > 256 || Total > 512)
          return makeError("kernel '" + K.Name + "': " + Twine(KS.VGPRsUsed) +
                           " VGPRs and " + Twine(AGPRs) +
                           " AGPRs do not fit its descriptor");
        K.KD.setAccumOffset(NewAccum);
      }
      const unsigned Granule =
          std::max(K.KD.vgprGranule(), (Total + Unit - 1) / Unit - 1);
      if (Granule >= 64 || KS.VGPRsUsed > 256)
        return makeError("kernel '" + K.Name + "': " + Twine(KS.VGPRsUsed) +
                         " VGPRs do not fit its descriptor");
      K.KD.setVGPRGranule(Granule);
    }
  return Error::success();
}

std::pair<unsigned, unsigned>
hotswap::occupancyChange(const amdgpu::TargetMC &MC,
                         const KernelsAnalysis::Result &R, const KernelInfo &K,
                         const KernelSites &KS) {
  const amdgpu::TargetInfo &T = R.Target;
  const bool Wave32 = T.Gen >= amdgpu::Generation::GFX10 && K.KD.isWave32();
  const amdgpu::OccupancyModel Model = amdgpu::occupancyModel(MC, T, Wave32);
  // Registers as LLVM counts them for occupancy: the metadata's counts
  // (on the gfx90a class VGPRs, aligned to 4, then the AGPRs), else what
  // the descriptor allocates.
  const bool Unified = T.IsGFX90AClass;
  const unsigned AGPRs =
      Unified && K.MD && K.MD->AGPRCount ? unsigned(*K.MD->AGPRCount) : 0;
  auto VGPRTotal = [&](unsigned V) {
    return Unified ? unsigned(alignTo(V, 4)) + AGPRs : V;
  };
  unsigned VGPRs = K.MD && K.MD->VGPRCount ? VGPRTotal(*K.MD->VGPRCount)
                                           : K.KD.usableVGPRs(T);
  unsigned SGPRs = K.MD && K.MD->SGPRCount ? unsigned(*K.MD->SGPRCount)
                                           : K.KD.allocatedSGPRs(T).value_or(0);
  const unsigned Before = amdgpu::wavesPerSIMD(Model, VGPRs, SGPRs);
  if (KS.VGPRsUsed > KS.VGPRsAllocated)
    VGPRs = std::max(VGPRs, VGPRTotal(KS.VGPRsUsed));
  if (KS.SGPRsUsed > KS.SGPRsAllocated)
    SGPRs = std::max(SGPRs, KS.SGPRsUsed + T.SGPRGranuleExtra);
  return {Before, amdgpu::wavesPerSIMD(Model, VGPRs, SGPRs)};
}

Error hotswap::growMetadataCounts(const amdgpu::TargetMC &MC,
                                  KernelsAnalysis::Result &R,
                                  const KernelSites &KS, PassContext &Ctx,
                                  StringRef PassName, bool &MetadataChanged,
                                  bool WarnDrops) {
  // The occupancy each kernel had and has now, from the counts before
  // they are raised.
  if (KS.VGPRsUsed > KS.VGPRsAllocated || KS.SGPRsUsed > KS.SGPRsAllocated)
    for (size_t KI : KS.Kernels) {
      auto [Before, After] = occupancyChange(MC, R, R.Kernels[KI], KS);
      if (After >= Before)
        continue;
      Ctx.Stats.add(PassName, "occupancy-dropped",
                    "kernels whose occupancy drops (registers)");
      if (WarnDrops)
        Ctx.Warn("kernel '" + R.Kernels[KI].Name +
                 "': its occupancy drops from " + Twine(Before) + " to " +
                 Twine(After) + " waves per SIMD (the registers it takes now)");
    }
  if (KS.VGPRsUsed > KS.VGPRsAllocated)
    for (size_t KI : KS.Kernels) {
      KernelInfo &K = R.Kernels[KI];
      Ctx.Stats.add(PassName, "vgprs-raised",
                    "kernels whose VGPR allocation grew");
      if (R.Metadata && K.MD && K.MD->VGPRCount &&
          *K.MD->VGPRCount < KS.VGPRsUsed) {
        if (Error E = R.Metadata->setField(
                K.KDSymbol, amdgpu::KernelField::VGPRCount, KS.VGPRsUsed))
          return prefixError("kernel '" + K.Name + "'", std::move(E));
        MetadataChanged = true;
      }
    }
  if (KS.SGPRsUsed <= KS.SGPRsAllocated)
    return Error::success();
  for (size_t KI : KS.Kernels) {
    KernelInfo &K = R.Kernels[KI];
    Ctx.Stats.add(PassName, "sgprs-raised",
                  "kernels whose SGPR allocation grew");
    const uint64_t Count = KS.SGPRsUsed + R.Target.SGPRGranuleExtra;
    if (R.Metadata && K.MD && K.MD->SGPRCount && *K.MD->SGPRCount < Count) {
      if (Error E = R.Metadata->setSGPRCount(K.KDSymbol, Count))
        return prefixError("kernel '" + K.Name + "'", std::move(E));
      MetadataChanged = true;
    }
  }
  return Error::success();
}

bool hotswap::anySelectedKernelRunsACopy(const Object &Obj,
                                         const KernelsAnalysis::Result &R,
                                         StringRef Only) {
  std::optional<Regex> RE;
  if (!Only.empty())
    RE.emplace(Only);
  Expected<StringSet<>> Patched = patchedKernels(Obj);
  if (!Patched)
    consumeError(Patched.takeError());
  for (const KernelInfo &K : R.Kernels)
    if (!RE || RE->match(K.Name)) {
      if (const Section *S = Obj.sectionForAddress(K.CodeEntry);
          S && S->Name == CloneSectionName)
        return true;
      if (Patched && Patched->count(K.Name))
        return true;
    }
  return false;
}
