//===- lib/Code/CounterCode.cpp - Code that counts a block ----------------===//

#include "hotswap/Code/CounterCode.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Code/Registers.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/MC/MCInst.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

std::optional<CounterForm> code::counterForm(amdgpu::Generation Gen) {
  switch (Gen) {
  case amdgpu::Generation::GFX8:
    return CounterForm::Flat;
  case amdgpu::Generation::GFX9:
    return CounterForm::Scalar;
  case amdgpu::Generation::GFX10:
  case amdgpu::Generation::GFX11:
  case amdgpu::Generation::GFX12:
  case amdgpu::Generation::GFX125:
    return CounterForm::Global;
  default:
    return std::nullopt;
  }
}

bool code::hasBasedForm(const CounterKind &Kind) {
  if (Kind.Unit != CounterUnit::Wave)
    return false;
  if (Kind.Form == CounterForm::Scalar)
    return true;
  return Kind.Form == CounterForm::Global &&
         Kind.Gen >= amdgpu::Generation::GFX10 &&
         Kind.Gen <= amdgpu::Generation::GFX125;
}

uint32_t code::basedCounterBias(const CounterKind &Kind) {
  if (Kind.Form == CounterForm::Global && Kind.Gen == amdgpu::Generation::GFX10)
    return 2048;
  if (Kind.Form == CounterForm::Global && Kind.Gen == amdgpu::Generation::GFX11)
    return 4096;
  return 0;
}

uint32_t code::basedCounterReach(const CounterKind &Kind) {
  // The offset's positive half past the bias.
  if (uint32_t Bias = basedCounterBias(Kind))
    return 2 * Bias - 8;
  return (1u << 20) - 8;
}

std::vector<std::string> code::basedCounterEntryLines(const CounterKind &Kind) {
  std::vector<std::string> L = {"s_getpc_b64 %rp0",
                                "s_add_u32 %rp0.0, %rp0.0, " +
                                    std::to_string(CounterDistancePlaceholder),
                                "s_addc_u32 %rp0.1, %rp0.1, 0"};
  if (Kind.Form == CounterForm::Scalar) {
    L.push_back("s_mov_b64 %rp1, 1");
    L.push_back("s_atomic_add_x2 %rp1, %rp0, 0");
    return L;
  }
  L.push_back("v_mov_b32 %rvp0.0, 1");
  L.push_back("v_mov_b32 %rvp0.1, 0");
  CounterKind Block = Kind;
  Block.Based = true;
  for (std::string Line : counterCodeLines(Block)) {
    if (size_t P = Line.find("%nth*8"); P != std::string::npos)
      Line.replace(P, 6, "0");
    L.push_back(std::move(Line));
  }
  return L;
}

std::vector<std::string> code::counterCodeLines(const CounterKind &Kind) {
  const std::string Distance = std::to_string(CounterDistancePlaceholder);
  std::vector<std::string> L;
  if (Kind.Based && Kind.Form == CounterForm::Scalar)
    return {"s_atomic_add_x2 %rp1, %rp0, %nth*8"};
  if (Kind.Based) {
    const std::string Exec = Kind.Wave32 ? "exec_lo" : "exec";
    const std::string Move = Kind.Wave32 ? "s_mov_b32 " : "s_mov_b64 ";
    const std::string Copy = Kind.Wave32 ? "%rp1.0" : "%rp1";
    const bool GFX10 = Kind.Gen == amdgpu::Generation::GFX10;
    return {
        Move + Copy + ", " + Exec, Move + Exec + ", 1",
        std::string(GFX10 ? "global_atomic_add_x2" : "global_atomic_add_u64") +
            " %rvp0.1, %rvp0, %rp0 offset:%nth*8" +
            (basedCounterBias(Kind)
                 ? "-" + std::to_string(basedCounterBias(Kind))
                 : std::string()),
        GFX10 ? "s_waitcnt_depctr 0" : "s_waitcnt_depctr depctr_sa_sdst(0)",
        Move + Exec + ", " + Copy};
  }
  if (Kind.Form == CounterForm::Scalar) {
    L = {"s_getpc_b64 %sp0", "s_mov_b32 %s0, " + Distance};
    if (Kind.Unit == CounterUnit::Wave) {
      L.push_back("s_mov_b64 %sp1, 1");
    } else {
      L.push_back("s_bcnt1_i32_b64 %sp1.0, exec");
      L.push_back("s_mov_b32 %sp1.1, 0");
    }
    L.push_back("s_atomic_add_x2 %sp1, %sp0, %s0");
    L.push_back("s_waitcnt lgkmcnt(0)");
    return L;
  }
  const bool Wave = Kind.Unit == CounterUnit::Wave;
  if (Kind.Form == CounterForm::Flat) {
    L = {"s_getpc_b64 %sp0", "s_add_u32 %sp0.0, %sp0.0, " + Distance,
         "s_addc_u32 %sp0.1, %sp0.1, 0"};
    if (Wave) {
      L.push_back("s_mov_b64 %sp1, exec");
      L.push_back("s_mov_b64 exec, 1");
    }
    L.push_back("v_mov_b32 %vp0.0, %sp0.0");
    L.push_back("v_mov_b32 %vp0.1, %sp0.1");
    L.push_back("v_mov_b32 %vp1.0, 1");
    L.push_back("v_mov_b32 %vp1.1, 0");
    L.push_back("flat_atomic_add_x2 %vp0, %vp1");
    L.push_back("s_waitcnt vmcnt(0) lgkmcnt(0)");
    if (Wave)
      L.push_back("s_mov_b64 exec, %sp1");
    return L;
  }
  const std::string Exec = Kind.Wave32 ? "exec_lo" : "exec";
  const std::string Move = Kind.Wave32 ? "s_mov_b32 " : "s_mov_b64 ";
  const std::string Copy = Kind.Wave32 ? "%s0" : "%sp1";
  L = {"s_waitcnt_depctr 0", "s_getpc_b64 %sp0"};
  if (Wave) {
    L.push_back(Move + Copy + ", " + Exec);
    L.push_back(Move + Exec + ", 1");
  }
  L.push_back("v_mov_b32 %v0, " + Distance);
  L.push_back("v_mov_b32 %vp0.0, 1");
  L.push_back("v_mov_b32 %vp0.1, 0");
  const bool GFX10 = Kind.Gen == amdgpu::Generation::GFX10;
  if (GFX10) // a guest DS before a branch before the atomic: no LDS WAR
    L.push_back("s_waitcnt_vscnt null, 0");
  L.push_back(
      std::string(GFX10 ? "global_atomic_add_x2" : "global_atomic_add_u64") +
      " %v0, %vp0, %sp0");
  L.push_back(Kind.Gen >= amdgpu::Generation::GFX12
                  ? "s_wait_storecnt 0"
                  : "s_waitcnt_vscnt null, 0");
  // Before EXEC is given back (Hazards.h): gfx10 waits for everything:
  // the atomic and the copy read EXEC, which the SALU giving it back (gfx10.1
  // VMEM-to-scalar write) or a guest v_cmpx next (v_cmpx EXEC WAR) writes.
  // gfx11+ counting waves: the copy of EXEC is an SALU write that its read
  // must wait for (sa_sdst) where a VALU has read that SGPR pair before
  // (gfx12's SGPR hazard, gfx11 wave64's mask write).
  if (GFX10)
    L.push_back("s_waitcnt_depctr 0");
  else if (Wave && Kind.Gen >= amdgpu::Generation::GFX11)
    L.push_back("s_waitcnt_depctr depctr_sa_sdst(0)");
  if (Wave)
    L.push_back(Move + Exec + ", " + Copy);
  return L;
}

CounterLayout code::counterLayout(const CounterKind &Kind) {
  if (Kind.Form == CounterForm::Scalar)
    return {4, CounterDistanceAt};
  if (Kind.Form == CounterForm::Flat) // s_add_u32's literal follows its 4
    return {4, 8};
  // s_waitcnt_depctr, s_getpc_b64, the two EXEC moves: 4 bytes each; the
  // literal follows v_mov_b32's 4.
  return {8, Kind.Unit == CounterUnit::Wave ? size_t(20) : size_t(12)};
}

namespace {
/// Decoded counter code, read operand by operand.
struct CodeReader {
  const amdgpu::TargetMC &MC;
  ArrayRef<std::pair<Insn, MCInst>> Insns;

  /// Instruction \p I as LLVM MC prints it.
  std::string text(size_t I) const {
    return StringRef(MC.printInst(Insns[I].second, Insns[I].first.Addr))
        .trim()
        .str();
  }
  /// Operand \p Op of instruction \p I: a register (none if it is not).
  MCRegister reg(size_t I, unsigned Op) const {
    const MCInst &M = Insns[I].second;
    return Op < M.getNumOperands() && M.getOperand(Op).isReg()
               ? M.getOperand(Op).getReg()
               : MCRegister();
  }
  /// The register units of \p Reg (none: an empty set).
  RegSet units(MCRegister Reg) const {
    const RegisterModel &RM = RegisterModel::get(MC.regInfo());
    RegSet S = RM.emptySet();
    if (Reg)
      RM.addUnits(Reg, S);
    return S;
  }
  /// Operand \p Op of instruction \p I: a constant (none if it is not).
  std::optional<int64_t> imm(size_t I, unsigned Op) const {
    const MCInst &M = Insns[I].second;
    return Op < M.getNumOperands() ? immediateValue(M.getOperand(Op))
                                   : std::nullopt;
  }
};
} // namespace

/// The global form (CounterCode.h), decoded: \p Insns; with \p Guarded
/// (gfx10), the waits around the atomic and the final dependency wait.
static Expected<CounterTarget>
globalCounterTarget(const amdgpu::TargetMC &MC,
                    ArrayRef<std::pair<Insn, MCInst>> Insns, bool Guarded,
                    bool SaWait) {
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  const CodeReader R{MC, Insns};
  auto Text = [&](size_t I) { return R.text(I); };
  auto Reg = [&](size_t I, unsigned Op) { return R.reg(I, Op); };
  auto Imm = [&](size_t I, unsigned Op) { return R.imm(I, Op); };
  auto Units = [&](MCRegister R) {
    RegSet S = RM.emptySet();
    if (R)
      RM.addUnits(R, S);
    return S;
  };
  // 7 instructions counting lanes, 10 counting waves (the EXEC moves);
  // guarded, 2 more; gfx11+ counting waves, one more (\p SaWait).
  const size_t Lanes = Guarded ? 9 : 7,
               Waves = Lanes + 3 + (SaWait && !Guarded);
  const bool Wave = Insns.size() == Waves;
  if (Insns.size() != Lanes && !Wave)
    return makeError(Twine(Insns.size()) + " instructions, not the " +
                     Twine(Lanes) + " or " + Twine(Waves) +
                     " of global counter code");
  auto WaitsForAll = [&](size_t I) {
    return K.baseName(Insns[I].second.getOpcode())
               .starts_with("S_WAITCNT_DEPCTR") &&
           Imm(I, 0) == 0;
  };
  if (!WaitsForAll(0))
    return makeError("its dependency wait is '" + Text(0) +
                     "', not a wait for everything");
  // The wait before EXEC is given back, or last.
  const size_t Final = Insns.size() - (Wave ? 2 : 1);
  if (Guarded && !WaitsForAll(Final))
    return makeError("instruction " + Twine(Final + 1) + " is '" + Text(Final) +
                     "', not a dependency wait for everything");
  const MCRegister A = Reg(1, 0);
  // gfx1250 names it s_get_pc_i64.
  if (!A || !(StringRef(Text(1)).starts_with("s_getpc_b64 ") ||
              StringRef(Text(1)).starts_with("s_get_pc_i64 ")))
    return makeError("instruction 2 is '" + Text(1) + "', not s_getpc_b64");
  RegSet SA = Units(A), SE = RM.emptySet();
  size_t At = 2;
  bool ExecLo = false;
  std::string Exec, Move;
  if (Wave) {
    // s_mov E, exec; s_mov exec, 1 ... s_mov exec, E.
    ExecLo = StringRef(Text(2)).ends_with(", exec_lo");
    Exec = ExecLo ? "exec_lo" : "exec";
    Move = ExecLo ? "s_mov_b32 " : "s_mov_b64 ";
    const MCRegister E = Reg(2, 0);
    SE = Units(E);
    if (!E || Text(2) != Move + RM.format(SE) + ", " + Exec)
      return makeError("instruction 3 is '" + Text(2) +
                       "', not a copy of EXEC");
    if (Text(3) != Move + Exec + ", 1")
      return makeError("instruction 4 is '" + Text(3) + "', not " + Move +
                       Exec + ", 1");
    const size_t Back = Insns.size() - 1;
    if (Text(Back) != Move + Exec + ", " + RM.format(SE))
      return makeError("instruction " + Twine(Back + 1) + " is '" + Text(Back) +
                       "', not EXEC given back from " + RM.format(SE));
    if (!Guarded && SaWait &&
        (!K.baseName(Insns[Back - 1].second.getOpcode())
              .starts_with("S_WAITCNT_DEPCTR") ||
         !Imm(Back - 1, 0) || (*Imm(Back - 1, 0) & 1)))
      return makeError("instruction " + Twine(Back) + " is '" + Text(Back - 1) +
                       "', not a wait for the SALU's write of " +
                       RM.format(SE) + " (sa_sdst)");
    At = 4;
  }
  // v_mov_b32 O, DISTANCE; v_mov_b32 D, 1; v_mov_b32 D+1, 0.
  const MCRegister O = Reg(At, 0), Lo = Reg(At + 1, 0), Hi = Reg(At + 2, 0);
  const std::optional<int64_t> Dist = Imm(At, 1);
  for (size_t I = At; I < At + 3; ++I)
    if (!StringRef(Text(I)).starts_with("v_mov_b32"))
      return makeError("instruction " + Twine(I + 1) + " is '" + Text(I) +
                       "', not v_mov_b32");
  if (!O || !Lo || !Hi || !Dist || Imm(At + 1, 1) != 1 || Imm(At + 2, 1) != 0)
    return makeError("its operands are not those of counter code");
  RegSet SO = Units(O), SD = Units(Lo);
  SD |= Units(Hi);
  if (SA.anyCommon(SE) || SA.anyCommon(SO) || SA.anyCommon(SD) ||
      SE.anyCommon(SO) || SE.anyCommon(SD) || SO.anyCommon(SD))
    return makeError("its registers overlap");
  // Guarded: the guest's stores are done before the atomic.
  if (Guarded) {
    if (Text(At + 3) != "s_waitcnt_vscnt null, 0x0")
      return makeError("instruction " + Twine(At + 4) + " is '" + Text(At + 3) +
                       "', not s_waitcnt_vscnt null, 0x0");
    ++At;
  }
  // The atomic: data v[d:d+1] (1, 0), offset O, base A, nothing else (no
  // immediate offset, no return, no cache bits).
  const std::string Want = std::string(Guarded ? "global_atomic_add_x2 "
                                               : "global_atomic_add_u64 ") +
                           RM.format(SO) + ", " + RM.format(SD) + ", " +
                           RM.format(SA);
  if (Text(At + 3) != Want)
    return makeError("its atomic is '" + Text(At + 3) + "', not '" + Want +
                     "'");
  const std::string Wait = Text(At + 4);
  if (Wait != "s_waitcnt_vscnt null, 0x0" && Wait != "s_wait_storecnt 0x0")
    return makeError("its wait is '" + Wait +
                     "', not one for its store to complete");
  return CounterTarget{Insns[1].first.end() + uint64_t(uint32_t(*Dist)),
                       Wave ? CounterUnit::Wave : CounterUnit::Lane,
                       ExecLo,
                       std::nullopt,
                       false,
                       0};
}

/// Whether \p L and \p H are the low and the high register of a pair.
static bool pairHalves(const amdgpu::TargetMC &MC, MCRegister L, MCRegister H) {
  // The number the name ends in (LLVM's "SGPR2", or "s2").
  auto Number = [&](MCRegister Reg) -> std::optional<unsigned> {
    if (!Reg)
      return std::nullopt;
    StringRef Name = MC.regName(Reg);
    StringRef Digits = Name.drop_front(Name.find_last_not_of("0123456789") + 1);
    unsigned N;
    if (Digits.empty() || Digits.size() == Name.size() ||
        Digits.getAsInteger(10, N))
      return std::nullopt;
    return N;
  };
  std::optional<unsigned> NL = Number(L), NH = Number(H);
  return NL && NH && *NH == *NL + 1;
}

/// The flat form (CounterCode.h), decoded: \p Insns.
static Expected<CounterTarget>
flatCounterTarget(const amdgpu::TargetMC &MC,
                  ArrayRef<std::pair<Insn, MCInst>> Insns) {
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  const CodeReader R{MC, Insns};
  auto Text = [&](size_t I) { return R.text(I); };
  auto Units = [&](MCRegister Reg, MCRegister Reg2 = MCRegister()) {
    RegSet S = RM.emptySet();
    for (MCRegister X : {Reg, Reg2})
      if (X)
        RM.addUnits(X, S);
    return S;
  };
  // 9 instructions counting lanes, 12 counting waves (the EXEC moves).
  const bool Wave = Insns.size() == 12;
  if (Insns.size() != 9 && !Wave)
    return makeError(Twine(Insns.size()) +
                     " instructions, not the 9 or 12 of flat counter code");
  // s_getpc_b64 A; s_add_u32 A.lo, A.lo, DIST; s_addc_u32 A.hi, A.hi, 0.
  const MCRegister A = R.reg(0, 0);
  if (!A || !StringRef(Text(0)).starts_with("s_getpc_b64 "))
    return makeError("instruction 1 is '" + Text(0) + "', not s_getpc_b64");
  const RegSet SA = Units(A);
  auto Halves = [&](MCRegister L, MCRegister H) {
    return pairHalves(MC, L, H);
  };
  const MCRegister Lo = R.reg(1, 0), Hi = R.reg(2, 0);
  const std::optional<int64_t> Dist = R.imm(1, 2);
  if (!Halves(Lo, Hi) || Units(Lo, Hi) != SA || !Dist ||
      !StringRef(Text(1)).starts_with("s_add_u32 ") || R.reg(1, 1) != Lo ||
      !StringRef(Text(2)).starts_with("s_addc_u32 ") || R.reg(2, 1) != Hi ||
      R.imm(2, 2) != 0)
    return makeError("instructions 2 and 3 are '" + Text(1) + "' and '" +
                     Text(2) + "', not the counter's address");
  size_t At = 3;
  RegSet SE = RM.emptySet();
  if (Wave) {
    const MCRegister E = R.reg(3, 0);
    SE = Units(E);
    if (!E || Text(3) != "s_mov_b64 " + RM.format(SE) + ", exec")
      return makeError("instruction 4 is '" + Text(3) +
                       "', not a copy of EXEC");
    if (Text(4) != "s_mov_b64 exec, 1")
      return makeError("instruction 5 is '" + Text(4) +
                       "', not s_mov_b64 exec, 1");
    if (Text(11) != "s_mov_b64 exec, " + RM.format(SE))
      return makeError("its last instruction is '" + Text(11) +
                       "', not EXEC given back from " + RM.format(SE));
    At = 5;
  }
  // v_mov_b32 P, A.lo; v_mov_b32 P+1, A.hi; v_mov_b32 D, 1; v_mov_b32 D+1, 0.
  for (size_t I = At; I < At + 4; ++I)
    if (!StringRef(Text(I)).starts_with("v_mov_b32") || !R.reg(I, 0))
      return makeError("instruction " + Twine(I + 1) + " is '" + Text(I) +
                       "', not v_mov_b32");
  RegSet SP = Units(R.reg(At, 0), R.reg(At + 1, 0));
  RegSet SD = Units(R.reg(At + 2, 0), R.reg(At + 3, 0));
  if (R.reg(At, 1) != Lo || R.reg(At + 1, 1) != Hi || R.imm(At + 2, 1) != 1 ||
      R.imm(At + 3, 1) != 0 || !Halves(R.reg(At, 0), R.reg(At + 1, 0)) ||
      !Halves(R.reg(At + 2, 0), R.reg(At + 3, 0)))
    return makeError("its operands are not those of counter code");
  if (SA.anyCommon(SE) || SP.anyCommon(SD))
    return makeError("its registers overlap");
  const std::string Want =
      "flat_atomic_add_x2 " + RM.format(SP) + ", " + RM.format(SD);
  if (Text(At + 4) != Want)
    return makeError("its atomic is '" + Text(At + 4) + "', not '" + Want +
                     "'");
  if (Text(At + 5) != "s_waitcnt vmcnt(0) lgkmcnt(0)")
    return makeError("its wait is '" + Text(At + 5) +
                     "', not s_waitcnt vmcnt(0) lgkmcnt(0)");
  return CounterTarget{Insns[0].first.end() + uint64_t(uint32_t(*Dist)),
                       Wave ? CounterUnit::Wave : CounterUnit::Lane,
                       false,
                       std::nullopt,
                       false,
                       0};
}

/// The base based code's entry sets up in \p A (units \p SA): its first
/// three instructions, s_getpc_b64 A; s_add_u32 A.lo, A.lo, DIST;
/// s_addc_u32 A.hi, A.hi, 0, give the PC after s_getpc_b64 plus DIST.
static Expected<uint64_t> baseAddress(const amdgpu::TargetMC &MC,
                                      const CodeReader &R, MCRegister A,
                                      const RegSet &SA) {
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  auto Op = [&](size_t I) { return K.baseName(R.Insns[I].second.getOpcode()); };
  const MCRegister Lo = R.reg(1, 0), Hi = R.reg(2, 0);
  const std::optional<int64_t> Dist = R.imm(1, 2);
  RegSet Pair = R.units(Lo);
  Pair |= R.units(Hi);
  if (R.reg(0, 0) != A || !pairHalves(MC, Lo, Hi) || Pair != SA || !Dist ||
      !Op(0).starts_with("S_GETPC_B64") || !Op(1).starts_with("S_ADD_U32") ||
      R.reg(1, 1) != Lo || !Op(2).starts_with("S_ADDC_U32") ||
      R.reg(2, 1) != Hi || R.imm(2, 2) != 0)
    return makeError("instructions 1 to 3 are '" + R.text(0) + "', '" +
                     R.text(1) + "' and '" + R.text(2) +
                     "', not the base's address");
  return R.Insns[0].first.end() + uint64_t(uint32_t(*Dist));
}

/// The based form (CounterCode.h), decoded: \p Insns, the entry's five
/// instructions or another block's one.
static Expected<CounterTarget>
basedCounterTarget(const amdgpu::TargetMC &MC,
                   ArrayRef<std::pair<Insn, MCInst>> Insns) {
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  const CodeReader R{MC, Insns};
  auto Units = [&](MCRegister Reg) { return R.units(Reg); };
  // The atomic, last: data D, base A, a constant offset, no return.
  const size_t At = Insns.size() - 1;
  if (K.baseName(Insns[At].second.getOpcode()).contains("_RTN"))
    return makeError("its atomic '" + R.text(At) +
                     "' returns the old value (it writes a register)");
  const MCRegister D = R.reg(At, 0), A = R.reg(At, 1);
  const std::optional<int64_t> Off = R.imm(At, 2);
  if (!K.baseName(Insns[At].second.getOpcode())
           .starts_with("S_ATOMIC_ADD_X2") ||
      !D || !A || !Off || *Off < 0 || *Off > basedCounterReach(CounterKind{}) ||
      *Off % 8)
    return makeError("its atomic is '" + R.text(At) +
                     "', not s_atomic_add_x2 of a counter");
  const RegSet SD = Units(D), SA = Units(A);
  if (SD.count() != SA.count() || SD.anyCommon(SA))
    return makeError("its registers overlap");
  const std::string Want = "s_atomic_add_x2 " + RM.format(SD) + ", " +
                           RM.format(SA) + ", " + hex(uint64_t(*Off));
  if (R.text(At) != Want)
    return makeError("its atomic is '" + R.text(At) + "', not '" + Want + "'");
  CounterTarget T;
  RegSet Both = SA;
  Both |= SD;
  T.Based = BasedRegisters{RM.format(SA), RM.format(SD), std::move(Both)};
  T.Counter = uint64_t(*Off);
  if (Insns.size() == 1)
    return T;
  // The entry's: s_getpc_b64 A; s_add_u32 A.lo, A.lo, DIST;
  // s_addc_u32 A.hi, A.hi, 0; s_mov_b64 D, 1; the atomic at offset 0.
  if (*Off != 0)
    return makeError("its atomic adds at offset " + hex(uint64_t(*Off)) +
                     ", not to the base");
  Expected<uint64_t> Base = baseAddress(MC, R, A, SA);
  if (!Base)
    return Base.takeError();
  if (R.text(3) != "s_mov_b64 " + RM.format(SD) + ", 1")
    return makeError("instruction 4 is '" + R.text(3) + "', not s_mov_b64 " +
                     RM.format(SD) + ", 1");
  T.SetsBase = true;
  T.Counter = T.BaseAddr = *Base;
  return T;
}

/// The based global form (CounterCode.h), decoded: \p Insns, the entry's
/// ten instructions or another block's five; \p GFX10 names the atomic
/// and the wait its own way.
static Expected<CounterTarget>
basedGlobalCounterTarget(const amdgpu::TargetMC &MC,
                         ArrayRef<std::pair<Insn, MCInst>> Insns, bool GFX10) {
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  const CodeReader R{MC, Insns};
  auto Units = [&](MCRegister Reg) { return R.units(Reg); };
  const size_t B = Insns.size() - 5;
  // The EXEC moves: a copy, one lane, the copy back.
  const MCRegister E = R.reg(B, 0);
  const bool Wave32 = StringRef(R.text(B)).ends_with(", exec_lo");
  const std::string Exec = Wave32 ? "exec_lo" : "exec";
  const std::string Move = Wave32 ? "s_mov_b32 " : "s_mov_b64 ";
  const RegSet SE = Units(E);
  if (!E || R.text(B) != Move + RM.format(SE) + ", " + Exec)
    return makeError("instruction " + Twine(B + 1) + " is '" + R.text(B) +
                     "', not a copy of EXEC");
  if (R.text(B + 1) != Move + Exec + ", 1")
    return makeError("instruction " + Twine(B + 2) + " is '" + R.text(B + 1) +
                     "', not " + Move + Exec + ", 1");
  if (R.text(B + 4) != Move + Exec + ", " + RM.format(SE))
    return makeError("its last instruction is '" + R.text(B + 4) +
                     "', not EXEC given back from " + RM.format(SE));
  // The atomic: data V (1, 0), address its high half, base A, no return.
  const MCRegister V = R.reg(B + 2, 1), A = R.reg(B + 2, 2);
  // The offset as printed: signed, of the width the generation encodes.
  std::optional<int64_t> Off = 0;
  if (const std::string Text = R.text(B + 2);
      StringRef(Text).contains(" offset:")) {
    int64_t X;
    Off = StringRef(Text).split(" offset:").second.getAsInteger(10, X)
              ? std::nullopt
              : std::optional<int64_t>(X);
  }
  const RegSet SV = Units(V), SA = Units(A);
  const std::string VName = RM.format(SV); // v[L:L+1]
  StringRef Range = StringRef(VName).drop_front(2).drop_back();
  const std::string High = "v" + Range.split(':').second.str();
  const std::string Low = "v" + Range.split(':').first.str();
  if (!V || !A || !Off || *Off % 8 || SV.count() < 2 || SA.anyCommon(SE))
    return makeError("its atomic '" + R.text(B + 2) +
                     "' does not add to a counter");
  const std::string Want =
      std::string(GFX10 ? "global_atomic_add_x2 " : "global_atomic_add_u64 ") +
      High + ", " + VName + ", " + RM.format(SA) +
      (*Off ? " offset:" + std::to_string(*Off) : std::string());
  if (R.text(B + 2) != Want)
    return makeError("its atomic is '" + R.text(B + 2) + "', not '" + Want +
                     "'");
  // The wait before EXEC is given back (the atomic and the copy read it).
  // (gfx12 prints it s_wait_alu.)
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  auto Op = [&](size_t I) { return K.baseName(Insns[I].second.getOpcode()); };
  const std::optional<int64_t> Wait = R.imm(B + 3, 0);
  if (!Op(B + 3).starts_with("S_WAITCNT_DEPCTR") ||
      Wait != (GFX10 ? 0 : 0xff9e))
    return makeError("instruction " + Twine(B + 4) + " is '" + R.text(B + 3) +
                     "', not the wait before EXEC is given back");
  CounterTarget T;
  RegSet Both = SA;
  Both |= SV;
  T.Based = BasedRegisters{RM.format(SA), VName, std::move(Both)};
  T.Counter = uint64_t(*Off);
  T.ExecLo = Wave32;
  if (B == 0)
    return T;
  // The entry's: the base's address, then the one and the zero; its atomic
  // adds to the kernel's first counter, an offset from the base (verify
  // checks which: the counter map's).
  Expected<uint64_t> Base = baseAddress(MC, R, A, SA);
  if (!Base)
    return Base.takeError();
  if (R.text(3) != "v_mov_b32_e32 " + Low + ", 1" ||
      R.text(4) != "v_mov_b32_e32 " + High + ", 0")
    return makeError("instructions 4 and 5 are '" + R.text(3) + "' and '" +
                     R.text(4) + "', not " + VName + " set to 1 and 0");
  T.SetsBase = true;
  T.BaseAddr = *Base;
  T.Counter = T.BaseAddr + uint64_t(*Off);
  return T;
}

Expected<CounterTarget> code::counterCodeTarget(const amdgpu::TargetMC &MC,
                                                ArrayRef<uint8_t> Bytes,
                                                uint64_t Addr) {
  const InsnKinds &K = InsnKinds::get(MC.instrInfo());
  const RegisterModel &RM = RegisterModel::get(MC.regInfo());
  std::vector<std::pair<Insn, MCInst>> Insns;
  DecodedRange DR =
      decodeRange(MC, Bytes, Addr, [&](const Insn &I, const MCInst &M) {
        Insns.push_back({I, M});
      });
  if (DR.Stop)
    return makeError("the bytes at " + hex(DR.Stop->Addr) +
                     " are not an instruction");
  // gfx10 (and only gfx10) has the hazards the guarded form avoids.
  const bool GFX10 =
      MC.hasFeature("gfx10-insts") && !MC.hasFeature("gfx11-insts");
  // Based global code, with the waits its seam may need on either side.
  if (MC.hasFeature("gfx10-insts")) {
    ArrayRef<std::pair<Insn, MCInst>> Core = Insns;
    auto IsWait = [&](const std::pair<Insn, MCInst> &I) {
      StringRef B = K.baseName(I.second.getOpcode());
      return B == "S_NOP" || B.starts_with("S_WAITCNT") ||
             B.starts_with("S_WAIT_ALU");
    };
    while (!Core.empty() && IsWait(Core.front()))
      Core = Core.drop_front();
    while (!Core.empty() && IsWait(Core.back()))
      Core = Core.drop_back();
    if ((Core.size() == 5 || Core.size() == 10) &&
        StringRef(CodeReader{MC, Core}.text(Core.size() - 3))
            .starts_with("global_atomic_add_") &&
        K.baseName(Core.back().second.getOpcode()).starts_with("S_MOV_B"))
      return basedGlobalCounterTarget(MC, Core, GFX10);
  }
  if (!Insns.empty() &&
      K.baseName(Insns[0].second.getOpcode()).starts_with("S_WAITCNT_DEPCTR"))
    return globalCounterTarget(MC, Insns, GFX10, MC.hasFeature("gfx11-insts"));
  if (GFX10)
    return makeError("it is not the global form gfx10 counter code takes");
  // Based code, with the s_nop its seam may need on either side (a soft
  // clause of SMEM operations with a guest's: SiteHazards.h).
  {
    ArrayRef<std::pair<Insn, MCInst>> Core = Insns;
    auto IsNop = [&](const std::pair<Insn, MCInst> &I) {
      return K.baseName(I.second.getOpcode()) == "S_NOP";
    };
    while (!Core.empty() && IsNop(Core.front()))
      Core = Core.drop_front();
    while (!Core.empty() && IsNop(Core.back()))
      Core = Core.drop_back();
    if ((Core.size() == 1 || Core.size() == 5) &&
        K.baseName(Core.back().second.getOpcode())
            .starts_with("S_ATOMIC_ADD_X2") &&
        (Core.size() == 1 ||
         K.baseName(Core[2].second.getOpcode()).starts_with("S_ADDC_U32")))
      return basedCounterTarget(MC, Core);
  }
  if (Insns.size() > 1 &&
      K.baseName(Insns[1].second.getOpcode()).starts_with("S_ADD_U32"))
    return flatCounterTarget(MC, Insns);
  static constexpr StringLiteral WaveShape[] = {
      "S_GETPC_B64", "S_MOV_B32", "S_MOV_B64", "S_ATOMIC_ADD_X2", "S_WAITCNT"};
  static constexpr StringLiteral LaneShape[] = {"S_GETPC_B64",     "S_MOV_B32",
                                                "S_BCNT1_I32_B64", "S_MOV_B32",
                                                "S_ATOMIC_ADD_X2", "S_WAITCNT"};
  const bool Lane = Insns.size() == std::size(LaneShape);
  ArrayRef<StringLiteral> Shape = Lane ? ArrayRef<StringLiteral>(LaneShape)
                                       : ArrayRef<StringLiteral>(WaveShape);
  if (Insns.size() != Shape.size())
    return makeError(Twine(Insns.size()) + " instructions, not the " +
                     Twine(std::size(WaveShape)) + " or " +
                     Twine(std::size(LaneShape)) + " of counter code");
  for (size_t I = 0; I < Insns.size(); ++I)
    if (!K.baseName(Insns[I].second.getOpcode()).starts_with(Shape[I]))
      return makeError(
          "instruction " + Twine(I + 1) + " is " +
          StringRef(MC.printInst(Insns[I].second, Insns[I].first.Addr)).trim() +
          ", not " + StringRef(Shape[I]).lower());
  const CodeReader R{MC, Insns};
  auto Reg = [&](size_t I, unsigned Op) { return R.reg(I, Op); };
  auto Imm = [&](size_t I, unsigned Op) { return R.imm(I, Op); };
  auto Text = [&](size_t I) { return R.text(I); };
  MCRegister A = Reg(0, 0), C = Reg(1, 0);
  std::optional<int64_t> Dist = Imm(1, 1);
  RegSet SA = RM.emptySet(), SC = RM.emptySet(), SD = RM.emptySet();
  if (!A || !C || !Dist)
    return makeError("its operands are not those of counter code");
  RM.addUnits(A, SA);
  RM.addUnits(C, SC);
  if (!Lane) {
    MCRegister D = Reg(2, 0);
    if (!D || Imm(2, 1) != 1)
      return makeError("its operands are not those of counter code");
    RM.addUnits(D, SD);
  } else {
    // The count of EXEC's lanes in the low half, 0 in the high half.
    MCRegister Lo = Reg(2, 0), Hi = Reg(3, 0);
    if (!Lo || !Hi || Imm(3, 1) != 0)
      return makeError("its operands are not those of counter code");
    RM.addUnits(Lo, SD);
    RM.addUnits(Hi, SD);
    std::string Count = "s_bcnt1_i32_b64 " + RM.format([&] {
      RegSet S = RM.emptySet();
      RM.addUnits(Lo, S);
      return S;
    }()) + ", exec";
    if (Text(2) != Count)
      return makeError("its lane count is '" + Text(2) + "', not '" + Count +
                       "'");
  }
  // The address is the PC's until the atomic: nothing between writes A.
  if (SA.anyCommon(SC) || SA.anyCommon(SD) || SC.anyCommon(SD))
    return makeError("its registers overlap");
  // The atomic: data D, base A, offset C, no return, nothing else.
  const size_t At = Lane ? 4 : 3;
  std::string Want = "s_atomic_add_x2 " + RM.format(SD) + ", " + RM.format(SA) +
                     ", " + RM.format(SC);
  if (Text(At) != Want)
    return makeError("its atomic is '" + Text(At) + "', not '" + Want + "'");
  if (Text(At + 1) != "s_waitcnt lgkmcnt(0)")
    return makeError("its wait is '" + Text(At + 1) +
                     "', not s_waitcnt lgkmcnt(0)");
  return CounterTarget{Insns[0].first.end() + uint64_t(uint32_t(*Dist)),
                       Lane ? CounterUnit::Lane : CounterUnit::Wave,
                       false,
                       std::nullopt,
                       false,
                       0};
}
