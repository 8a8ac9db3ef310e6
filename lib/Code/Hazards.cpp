//===- lib/Code/Hazards.cpp - What the hardware does not interlock --------===//

#include "hotswap/Code/Hazards.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"

#include <queue>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

StringRef code::hazardKindName(HazardKind K) {
  switch (K) {
  case HazardKind::SoftClause:
    return "a soft clause of memory operations whose results meet their "
           "operands (XNACK)";
  case HazardKind::VALUSGPRToVMEM:
    return "a VMEM reads an SGPR a VALU wrote";
  case HazardKind::VGPRToDPP:
    return "a DPP reads a VGPR written";
  case HazardKind::ExecToDPP:
    return "a DPP after a VALU writes EXEC";
  case HazardKind::VCCToDivFmas:
    return "v_div_fmas after a VALU writes VCC";
  case HazardKind::LaneSelect:
    return "a lane select a VALU wrote";
  case HazardKind::SetRegToGetReg:
    return "s_getreg after s_setreg of the same register";
  case HazardKind::SetRegToSetReg:
    return "s_setreg after s_setreg of the same register";
  case HazardKind::M0Read:
    return "an M0 reader after an SALU writes M0";
  case HazardKind::WideStoreData:
    return "a VALU overwrites the data of a store of more than 64 bits";
  case HazardKind::TransForwarding:
    return "a VALU reads a TRANS result";
  case HazardKind::VALUSGPRToVALU:
    return "a VALU reads an SGPR a VALU wrote";
  case HazardKind::ExecToReadLane:
    return "a lane read or write after a VALU writes EXEC";
  case HazardKind::VGPRToReadLane:
    return "a lane read of a VGPR a VALU wrote";
  case HazardKind::VMEMToScalarWrite:
    return "an SALU or SMEM writes a register a VMEM or DS read";
  case HazardKind::SMEMToVectorWrite:
    return "a VALU writes an SGPR an SMEM read";
  case HazardKind::VcmpxExecWAR:
    return "a VALU writes EXEC a non-VALU read";
  case HazardKind::LdsBranchVmem:
    return "DS and VMEM on either side of a branch";
  case HazardKind::VcmpxPermlane:
    return "v_permlane after v_cmpx";
  case HazardKind::TransUse:
    return "a VALU reads a TRANS result within 5 VALUs";
  case HazardKind::PartialForwarding:
    return "a VALU reads VGPRs written on either side of an EXEC write "
           "(wave64)";
  case HazardKind::MaskWrite:
    return "an SGPR a VALU read as a mask is written and read (wave64)";
  case HazardKind::SGPRReadAfterWrite:
    return "an SGPR pair a VALU read is written and read";
  case HazardKind::TransCoexec:
    return "a VALU right after a TRANS it depends on";
  }
  return "?";
}

StringRef code::hazardKindId(HazardKind K) {
  switch (K) {
  case HazardKind::SoftClause:
    return "soft-clause";
  case HazardKind::VALUSGPRToVMEM:
    return "valu-sgpr-vmem";
  case HazardKind::VGPRToDPP:
    return "vgpr-dpp";
  case HazardKind::ExecToDPP:
    return "exec-dpp";
  case HazardKind::VCCToDivFmas:
    return "vcc-div-fmas";
  case HazardKind::LaneSelect:
    return "lane-select";
  case HazardKind::SetRegToGetReg:
    return "setreg-getreg";
  case HazardKind::SetRegToSetReg:
    return "setreg-setreg";
  case HazardKind::M0Read:
    return "salu-m0";
  case HazardKind::WideStoreData:
    return "wide-store-data";
  case HazardKind::TransForwarding:
    return "trans-forwarding";
  case HazardKind::VALUSGPRToVALU:
    return "valu-sgpr-valu";
  case HazardKind::ExecToReadLane:
    return "exec-readlane";
  case HazardKind::VGPRToReadLane:
    return "vgpr-readlane";
  case HazardKind::VMEMToScalarWrite:
    return "vmem-scalar-write";
  case HazardKind::SMEMToVectorWrite:
    return "smem-vector-write";
  case HazardKind::VcmpxExecWAR:
    return "vcmpx-exec-war";
  case HazardKind::LdsBranchVmem:
    return "lds-branch-vmem";
  case HazardKind::VcmpxPermlane:
    return "vcmpx-permlane";
  case HazardKind::TransUse:
    return "trans-use";
  case HazardKind::PartialForwarding:
    return "partial-forwarding";
  case HazardKind::MaskWrite:
    return "mask-write";
  case HazardKind::SGPRReadAfterWrite:
    return "sgpr-read-after-write";
  case HazardKind::TransCoexec:
    return "trans-coexec";
  }
  return "?";
}

HazardRules HazardRules::of(const amdgpu::TargetMC &MC,
                            const amdgpu::TargetInfo &T, bool Wave32) {
  // LLVM checks soft clauses when XNACK is on or "any"; a processor
  // without XNACK has none.
  return of(MC, T.Gen, T.HasXnack && T.Xnack != amdgpu::FeatureSetting::Off,
            Wave32);
}

HazardRules HazardRules::of(const amdgpu::TargetMC &MC, amdgpu::Generation Gen,
                            bool Xnack, bool Wave32) {
  using amdgpu::Generation;
  HazardRules R;
  R.GFX6to9 = Gen <= Generation::GFX9;
  R.GFX7to9 = Gen >= Generation::GFX7 && Gen <= Generation::GFX9;
  R.GFX8to9 = Gen >= Generation::GFX8 && Gen <= Generation::GFX9;
  R.GFX9 = Gen == Generation::GFX9;
  R.GFX940 = MC.hasFeature("gfx940-insts");
  R.SoftClauses = Xnack;
  R.VMEMToScalarWrite = MC.hasFeature("vmem-to-scalar-write-hazard");
  R.SMEMToVectorWrite = MC.hasFeature("smem-to-vector-write-hazard");
  R.VcmpxExecWAR = MC.hasFeature("vcmpx-exec-war-hazard");
  R.LdsBranchVmem = MC.hasFeature("lds-branch-vmem-war-hazard");
  R.VcmpxPermlane = MC.hasFeature("vcmpx-permlane-hazard");
  R.TransUse = MC.hasFeature("valu-trans-use-hazard");
  R.PartialForwarding = Gen == Generation::GFX11 && !Wave32;
  R.MaskWrite = Gen == Generation::GFX11 && !Wave32;
  R.SGPRReadAfterWrite = Gen == Generation::GFX12;
  R.TransCoexec = Gen == Generation::GFX125;
  return R;
}

std::string HazardRules::names() const {
  std::string S;
  auto Add = [&](bool On, StringRef Name) {
    if (On)
      S += (S.empty() ? "" : ", ") + Name.str();
  };
  Add(SoftClauses, "soft-clause");
  Add(GFX8to9, "vmem-after-valu-sgpr");
  Add(GFX8to9, "dpp");
  Add(GFX6to9, "div-fmas");
  Add(GFX6to9, "lane-select");
  Add(GFX6to9, "setreg");
  Add(GFX8to9, "m0");
  Add(GFX7to9, "wide-store-data");
  Add(GFX940, "gfx940-forwarding");
  Add(VMEMToScalarWrite, "vmem-to-scalar-write");
  Add(SMEMToVectorWrite, "smem-to-vector-write");
  Add(VcmpxExecWAR, "vcmpx-exec-war");
  Add(LdsBranchVmem, "lds-branch-vmem");
  Add(VcmpxPermlane, "vcmpx-permlane");
  Add(TransUse, "trans-use");
  Add(PartialForwarding, "partial-forwarding");
  Add(MaskWrite, "mask-write");
  Add(SGPRReadAfterWrite, "sgpr-read-after-write");
  Add(TransCoexec, "trans-coexec");
  return S.empty() ? "none" : S;
}

//===----------------------------------------------------------------------===//
// What one instruction is
//===----------------------------------------------------------------------===//

static bool startsWithAny(StringRef N, ArrayRef<StringLiteral> Prefixes) {
  for (StringRef P : Prefixes)
    if (N.starts_with(P))
      return true;
  return false;
}

/// What an instruction's opcode alone says of it: its class and the flags
/// its name and description give.
static HazardInsn opcodeFacts(const MCInstrInfo &MII, const InsnKinds &K,
                              unsigned Opcode) {
  const MCInstrDesc &D = MII.get(Opcode);
  StringRef N = K.baseName(Opcode);
  HazardInsn H;
  static constexpr StringLiteral VMEM[] = {"BUFFER_",  "TBUFFER_", "GLOBAL_",
                                           "SCRATCH_", "FLAT_",    "IMAGE_"};
  static constexpr StringLiteral SMEM[] = {
      "S_LOAD_",          "S_BUFFER_LOAD_",   "S_STORE_",    "S_BUFFER_STORE_",
      "S_ATOMIC_",        "S_BUFFER_ATOMIC_", "S_SCRATCH_",  "S_DCACHE_",
      "S_MEMTIME",        "S_MEMREALTIME",    "S_ATC_PROBE", "S_PREFETCH_DATA",
      "S_BUFFER_PREFETCH"};
  static constexpr StringLiteral TransOps[] = {
      "V_EXP_F",      "V_LOG_F",      "V_RCP_F",      "V_RCP_IFLAG",
      "V_RSQ_F",      "V_SQRT_F",     "V_SIN_F",      "V_COS_F",
      "V_EXP_LEGACY", "V_LOG_LEGACY", "V_RCP_LEGACY", "V_RSQ_LEGACY",
      "V_RCP_CLAMP",  "V_RSQ_CLAMP"};
  static constexpr StringLiteral MaskReaders[] = {
      "V_CNDMASK",    "V_ADDC_",      "V_SUBB_",         "V_SUBBREV_",
      "V_ADD_CO_CI_", "V_SUB_CO_CI_", "V_SUBREV_CO_CI_", "V_DIV_FMAS"};
  if (N.starts_with("V_")) {
    H.C = HazardInsn::VALU;
  } else if (N.starts_with("DS_")) {
    H.C = HazardInsn::DS;
  } else if (startsWithAny(N, VMEM)) {
    H.C = HazardInsn::VMEM;
  } else if (N == "EXP" || N.starts_with("EXP_")) {
    H.C = HazardInsn::Export;
  } else if (N.starts_with("S_")) {
    H.C = startsWithAny(N, SMEM) ? HazardInsn::SMEM : HazardInsn::SALU;
  }
  H.Store = D.mayStore();
  if (H.C == HazardInsn::VALU) {
    // The base name drops the encoding ("V_MOV_B32_dpp_vi").
    H.DPP = MII.getName(Opcode).contains("_dpp");
    H.Trans = startsWithAny(N, TransOps);
    H.VNop = N.starts_with("V_NOP");
    H.DivFmas = N.starts_with("V_DIV_FMAS");
    H.ReadLane =
        N.starts_with("V_READLANE") || N.starts_with("V_READFIRSTLANE");
    H.WriteLane = N.starts_with("V_WRITELANE");
    H.Permlane = N.starts_with("V_PERMLANE");
    H.Cmpx = N.starts_with("V_CMPX");
    H.MaskRead = startsWithAny(N, MaskReaders);
    H.M0Read9 = N.starts_with("V_INTERP");
  }
  if (H.C == HazardInsn::SALU) {
    H.SetReg = N.starts_with("S_SETREG");
    H.GetReg = N.starts_with("S_GETREG");
    H.M0Read9 = N.starts_with("S_MOVREL");
    H.M0Read8 = N.starts_with("S_SENDMSG") || N.starts_with("S_TTRACEDATA");
    H.SALUDef = D.getNumDefs() > 0 || !D.implicit_defs().empty();
  }
  if (H.C == HazardInsn::DS)
    H.M0Read9 =
        N.starts_with("DS_READ_ADDTID") || N.starts_with("DS_WRITE_ADDTID");
  if (H.C == HazardInsn::DS)
    H.M0Read8 = N.starts_with("DS_GWS");
  if (H.C == HazardInsn::VMEM) {
    H.M0Read9 = N.contains("_LDS");
    H.BufferOrImage = !N.starts_with("GLOBAL_") && !N.starts_with("SCRATCH_") &&
                      !N.starts_with("FLAT_");
  }
  return H;
}

/// What \p MI is, from \p Op, what its opcode is (opcodeFacts()).
static HazardInsn describe(const amdgpu::TargetMC &MC, const RegisterModel &RM,
                           const MCInst &MI, const HazardInsn &Op) {
  const MCInstrInfo &MII = MC.instrInfo();
  const MCInstrDesc &D = MII.get(MI.getOpcode());
  const InsnKinds &K = InsnKinds::get(MII);
  StringRef N = K.baseName(MI.getOpcode());
  HazardInsn H = Op;
  Flow F = K.flowOf(MI);
  H.Branch = F == Flow::Jump || F == Flow::CondJump ||
             F == Flow::IndirectJump || F == Flow::Call ||
             F == Flow::IndirectCall;
  H.Call =
      F == Flow::IndirectJump || F == Flow::Call || F == Flow::IndirectCall;
  if (H.C == HazardInsn::SALU) {
    if (N.starts_with("S_NOP") && MI.getNumOperands() &&
        MI.getOperand(0).isImm())
      H.WaitStates = uint8_t(std::min<int64_t>(
          std::max<int64_t>(MI.getOperand(0).getImm(), 0) + 1, 255));
    if (N.starts_with("S_WAITCNT_DEPCTR") && MI.getNumOperands() &&
        MI.getOperand(0).isImm())
      H.DepCtr = uint16_t(MI.getOperand(0).getImm());
    if (N == "S_WAITCNT" && MI.getNumOperands() && MI.getOperand(0).isImm()) {
      int64_t V = MI.getOperand(0).getImm();
      H.Waitcnt0 = V == 0;
      // gfx10's lgkmcnt is bits 13:8.
      H.LgkmWait0 = (V & 0x3f00) == 0;
    }
    if ((N.starts_with("S_WAITCNT_VSCNT") ||
         N.starts_with("S_WAITCNT_LGKMCNT")) &&
        MI.getNumOperands() == 2 && MI.getOperand(0).isReg() &&
        MI.getOperand(1).isImm() && MI.getOperand(1).getImm() == 0 &&
        MC.regName(MI.getOperand(0).getReg()).starts_with("SGPR_NULL")) {
      H.VscntNull0 = N.starts_with("S_WAITCNT_VSCNT");
      H.LgkmWait0 = !H.VscntNull0;
    }
    if ((H.SetReg || H.GetReg) && MI.getNumOperands() &&
        MI.getOperand(MI.getNumOperands() - 1).isImm())
      H.HwReg = int16_t(MI.getOperand(MI.getNumOperands() - 1).getImm() & 0x3f);
  }
  auto Units = [&](MCRegister R, SmallVectorImpl<uint16_t> &Out) {
    RM.appendUnits(R, Out);
  };
  const unsigned Defs = D.getNumDefs();
  SmallVector<MCRegister, 4> VRegs;
  auto Scalar = [&](ArrayRef<uint16_t> Us, SmallVectorImpl<uint16_t> &Out) {
    for (uint16_t U : Us)
      if (RM.unit(U).Class == RegClass::SGPR ||
          RM.unit(U).Class == RegClass::VCC)
        Out.push_back(U);
  };
  for (unsigned I = 0; I < MI.getNumOperands(); ++I) {
    const MCOperand &O = MI.getOperand(I);
    if (!O.isReg() || !O.getReg())
      continue;
    if (I < Defs) {
      Units(O.getReg(), H.Writes);
      Units(O.getReg(), H.ExplicitWrites);
      continue;
    }
    size_t Before = H.Reads.size();
    Units(O.getReg(), H.Reads);
    ArrayRef<uint16_t> New = ArrayRef(H.Reads).drop_front(Before);
    Scalar(New, H.SGPRReads);
    // The operand as LLVM numbers it: v_readlane_b32 sdst, src0, src1;
    // v_writelane_b32 vdst, src0, src1, vdst_in.
    if ((H.ReadLane || H.WriteLane) && I == 2 && !N.starts_with("V_READFIRST"))
      H.LaneSel.append(New.begin(), New.end());
    if (H.ReadLane && I == 1)
      H.Src0.append(New.begin(), New.end());
    // Sources by register: v_add v3, v3, v3 reads one.
    if (llvm::any_of(New, [&](uint16_t U) {
          return RM.unit(U).Class == RegClass::VGPR;
        })) {
      auto It = llvm::find(VRegs, O.getReg());
      if (It == VRegs.end())
        It = VRegs.insert(VRegs.end(), O.getReg());
      for (uint16_t U : New)
        if (RM.unit(U).Class == RegClass::VGPR)
          H.VSrc.push_back({uint8_t(It - VRegs.begin()), U});
    }
    if (H.C == HazardInsn::VMEM && H.Store) {
      std::optional<unsigned> Lo, Hi;
      for (uint16_t U : New)
        if (RM.unit(U).Class == RegClass::VGPR) {
          unsigned X = RM.unit(U).Index;
          Lo = Lo ? std::min(*Lo, X) : X;
          Hi = Hi ? std::max(*Hi, X) : X;
        }
      if (Lo && *Hi - *Lo >= 2) {
        H.WideStore = true;
        H.StoreData.append(New.begin(), New.end());
      }
    }
  }
  Scalar(H.ExplicitWrites, H.SGPRWrites);
  if (H.MaskRead)
    for (unsigned I = MI.getNumOperands(); I-- > Defs;)
      if (MI.getOperand(I).isReg() && MI.getOperand(I).getReg()) {
        SmallVector<uint16_t, 2> Us;
        Units(MI.getOperand(I).getReg(), Us);
        Scalar(Us, H.Mask);
        break;
      }
  for (MCPhysReg R : D.implicit_uses()) {
    size_t Before = H.Reads.size();
    Units(R, H.Reads);
    for (uint16_t U : ArrayRef(H.Reads).drop_front(Before))
      if (RM.unit(U).Class == RegClass::VCC) {
        H.SGPRReads.push_back(U);
        if (H.MaskRead)
          H.Mask.push_back(U);
      }
  }
  for (MCPhysReg R : D.implicit_defs()) {
    size_t Before = H.Writes.size();
    Units(R, H.Writes);
    for (uint16_t U : ArrayRef(H.Writes).drop_front(Before))
      if (RM.unit(U).Class == RegClass::VCC)
        H.SGPRWrites.push_back(U);
  }
  std::sort(H.Reads.begin(), H.Reads.end()); // not qsort (llvm::sort)
  H.Reads.erase(llvm::unique(H.Reads), H.Reads.end());
  std::sort(H.Writes.begin(), H.Writes.end());
  H.Writes.erase(llvm::unique(H.Writes), H.Writes.end());
  return H;
}

//===----------------------------------------------------------------------===//
// The code
//===----------------------------------------------------------------------===//

/// The facts of a function's instructions, each described on first use:
/// a function uses few opcodes many times, and a seam's walk reads few
/// instructions.
struct HazardCode::GuestFacts {
  const amdgpu::TargetMC &MC;
  const RegisterModel &RM;
  const InsnKinds &K;
  /// Per instruction: 1 + its index in Store, or 0 (not yet described).
  std::vector<uint32_t> At;
  std::deque<HazardInsn> Store;
  llvm::DenseMap<unsigned, HazardInsn> Ops;

  GuestFacts(const amdgpu::TargetMC &MC, const RegisterModel &RM, size_t N)
      : MC(MC), RM(RM), K(InsnKinds::get(MC.instrInfo())), At(N, 0) {}

  const HazardInsn &opcode(unsigned Opcode) {
    auto [It, New] = Ops.try_emplace(Opcode);
    if (New)
      It->second = opcodeFacts(MC.instrInfo(), K, Opcode);
    return It->second;
  }
  const HazardInsn &get(uint32_t I, const MCInst &MI) {
    if (At[I])
      return Store[At[I] - 1];
    Store.push_back(describe(MC, RM, MI, opcode(MI.getOpcode())));
    At[I] = uint32_t(Store.size());
    return Store.back();
  }
  /// An instruction a client adds (never stored here).
  HazardInsn describeAdded(const MCInst &MI) {
    return describe(MC, RM, MI, opcode(MI.getOpcode()));
  }
};

HazardCode::HazardCode(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                       ArrayRef<MCInst> Decoded, FunctionKind Kind)
    : MC(MC), RM(RegisterModel::get(MC.regInfo())) {
  const size_t N = std::min(G.Insns.size(), Decoded.size());
  Guest = std::make_shared<GuestFacts>(MC, RM, N);
  Insts.reserve(N);
  Addrs.reserve(N);
  Preds.resize(N);
  Open.assign(N, false);
  for (size_t I = 0; I < N; ++I) {
    Insts.push_back(&Decoded[I]);
    Addrs.push_back(G.Insns[I].Addr);
  }
  for (const Block &B : G.Blocks) {
    if (B.First >= N)
      continue;
    for (uint32_t I = B.First + 1; I < B.End && I < N; ++I)
      Preds[I].push_back(I - 1);
    for (uint32_t P : B.Preds)
      if (G.Blocks[P].End > G.Blocks[P].First && G.Blocks[P].End - 1 < N)
        Preds[B.First].push_back(G.Blocks[P].End - 1);
  }
  if (N && Kind == FunctionKind::Device)
    Open[0] = true;
}

HazardCode::~HazardCode() = default;
HazardCode::HazardCode(HazardCode &&) = default;
HazardCode::HazardCode(const HazardCode &Other)
    : MC(Other.MC), RM(Other.RM), Insts(Other.Insts), Addrs(Other.Addrs),
      Guest(Other.Guest), Open(Other.Open), Undo(Other.Undo) {
  // Added instructions live in Other.Owned, which Insts points into.
  assert(Other.Owned.empty() && "a copy of code with added instructions");
  // Room for what add() brings: growing would copy every instruction's
  // predecessors (their small vectors do not move without a copy).
  constexpr size_t Spare = 256;
  Preds.reserve(Other.Preds.size() + Spare);
  Preds.assign(Other.Preds.begin(), Other.Preds.end());
  Names.reserve(Other.Names.size() + Spare);
  Names.assign(Other.Names.begin(), Other.Names.end());
}

const HazardInsn &HazardCode::facts(uint32_t I) const {
  if (I < Guest->At.size())
    return Guest->get(I, *Insts[I]);
  return Added[I - Guest->At.size()];
}

uint64_t HazardCode::addr(uint32_t I) const { return Addrs[I]; }
const MCInst &HazardCode::inst(uint32_t I) const { return *Insts[I]; }

uint32_t HazardCode::add(const MCInst &MI, uint64_t Addr, ArrayRef<uint32_t> Ps,
                         StringRef Name) {
  Owned.push_back(MI);
  Insts.push_back(&Owned.back());
  Addrs.push_back(Addr);
  Names.resize(Insts.size());
  Names.back() = Name.str();
  Added.push_back(Guest->describeAdded(MI));
  Preds.emplace_back(Ps.begin(), Ps.end());
  Open.push_back(false);
  ++Epoch;
  return size() - 1;
}

void HazardCode::setPreds(uint32_t I, ArrayRef<uint32_t> Ps) {
  Undo.push_back({I, Preds[I]});
  Preds[I].assign(Ps.begin(), Ps.end());
  ++Epoch;
}

void HazardCode::restore(Mark M) {
  while (Undo.size() > M.Changes) {
    auto &[I, Ps] = Undo.back();
    Preds[I] = std::move(Ps);
    Undo.pop_back();
  }
  while (size() > M.Size) {
    if (Names.size() == size())
      Names.pop_back();
    Insts.pop_back();
    Addrs.pop_back();
    Added.pop_back();
    Preds.pop_back();
    Open.pop_back();
    Owned.pop_back();
  }
  ++Epoch;
}

//===----------------------------------------------------------------------===//
// The walk
//===----------------------------------------------------------------------===//

namespace hotswap {
namespace code {

class HazardFinder {
public:
  HazardFinder(const HazardCode &Code, const HazardRules &R, uint32_t To,
               std::vector<Hazard> &Out)
      : Code(Code), R(R), To(To), T(Code.facts(To)), RM(Code.regs()), Out(Out) {
  }
  void run();

private:
  enum class Step : uint8_t { Continue, Stop, Hit };
  enum class Count : uint8_t { WaitStates, VALUs };
  struct Found {
    uint32_t At = HazardCode::None;
    unsigned Dist = 0;
  };
  /// Walks back from \p From (To unless given) over every way to it,
  /// nearest first; Visit sees each instruction with the distance of those
  /// between it and \p From and a state it may change for the way on.
  /// Visit(None) stands for what lies before a device function. A walk
  /// that visits too much is taken as a hit there (the worst case).
  std::optional<Found>
  walk(uint32_t From, Count C, unsigned Limit, uint8_t State,
       function_ref<Step(uint32_t I, unsigned Dist, uint8_t &State)> Visit)
      const;

  const HazardInsn &F(uint32_t I) const { return Code.facts(I); }
  bool meets(ArrayRef<uint16_t> A, ArrayRef<uint16_t> B) const;
  std::string format(ArrayRef<uint16_t> A, ArrayRef<uint16_t> B) const;
  SmallVector<uint16_t, 8> scalarReads(const HazardInsn &H,
                                       bool WithVCC = true) const;
  SmallVector<uint16_t, 8> ofClass(ArrayRef<uint16_t> Us, RegClass C) const;
  void waitStates(HazardKind K, ArrayRef<uint16_t> Units, unsigned Need,
                  function_ref<bool(const HazardInsn &)> Producer,
                  bool AnyWriter = false);
  void add(HazardKind K, std::optional<Found> Hit, std::string Guard,
           std::string Regs, std::optional<uint32_t> Origin = std::nullopt,
           unsigned Need = 0);
  void softClause();
  void gfx10();
  void ldsBranchVmem();
  void gfx11();
  void maskWrite();
  void sgprReadAfterWrite();
  uint64_t pairsReadBefore(uint32_t I) const;

  const HazardCode &Code;
  const HazardRules &R;
  uint32_t To;
  const HazardInsn &T;
  const RegisterModel &RM;
  std::vector<Hazard> &Out;
};

} // namespace code
} // namespace hotswap

/// Visits past this many instructions in one walk count as a hit.
static constexpr unsigned WalkBudget = 1u << 22;

std::optional<HazardFinder::Found> HazardFinder::walk(
    uint32_t From, Count C, unsigned Limit, uint8_t State0,
    function_ref<Step(uint32_t, unsigned, uint8_t &)> Visit) const {
  using Item = std::tuple<unsigned, uint32_t, uint8_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> Q;
  DenseMap<uint64_t, unsigned> Seen;
  auto Outside = [&](unsigned D, uint8_t S) -> std::optional<Found> {
    if (Visit(HazardCode::None, D, S) == Step::Hit)
      return Found{HazardCode::None, D};
    return std::nullopt;
  };
  if (Code.open(From))
    if (auto H = Outside(0, State0))
      return H;
  for (uint32_t P : Code.preds(From))
    Q.push({0, P, State0});
  unsigned Budget = WalkBudget;
  while (!Q.empty()) {
    auto [D, I, S] = Q.top();
    Q.pop();
    uint64_t Key = (uint64_t(I) << 8) | S;
    auto [It, New] = Seen.try_emplace(Key, D);
    if (!New)
      continue;
    if (--Budget == 0)
      return Found{HazardCode::None, D};
    uint8_t St = S;
    Step X = Visit(I, D, St);
    if (X == Step::Hit)
      return Found{I, D};
    if (X == Step::Stop)
      continue;
    const HazardInsn &H = F(I);
    unsigned ND =
        D + (C == Count::WaitStates ? H.WaitStates : H.C == HazardInsn::VALU);
    if (ND >= Limit)
      continue;
    if (Code.open(I))
      if (auto Hit = Outside(ND, St))
        return Hit;
    for (uint32_t P : Code.preds(I))
      Q.push({ND, P, St});
  }
  return std::nullopt;
}

bool HazardFinder::meets(ArrayRef<uint16_t> A, ArrayRef<uint16_t> B) const {
  for (uint16_t X : A)
    if (llvm::is_contained(B, X))
      return true;
  return false;
}

std::string HazardFinder::format(ArrayRef<uint16_t> A,
                                 ArrayRef<uint16_t> B) const {
  RegSet S = RM.emptySet();
  for (uint16_t X : A)
    if (llvm::is_contained(B, X))
      S.set(X);
  return RM.format(S);
}

SmallVector<uint16_t, 8> HazardFinder::ofClass(ArrayRef<uint16_t> Us,
                                               RegClass C) const {
  SmallVector<uint16_t, 8> R;
  for (uint16_t U : Us)
    if (RM.unit(U).Class == C)
      R.push_back(U);
  return R;
}

SmallVector<uint16_t, 8> HazardFinder::scalarReads(const HazardInsn &H,
                                                   bool WithVCC) const {
  SmallVector<uint16_t, 8> R;
  for (uint16_t U : H.Reads)
    if (RM.unit(U).Class == RegClass::SGPR ||
        (WithVCC && RM.unit(U).Class == RegClass::VCC))
      R.push_back(U);
  return R;
}

void HazardFinder::add(HazardKind K, std::optional<Found> Hit,
                       std::string Guard, std::string Regs,
                       std::optional<uint32_t> Origin, unsigned Need) {
  if (!Hit)
    return;
  Hazard H;
  H.Kind = K;
  H.From = Hit->At;
  H.To = To;
  H.Origin = Origin;
  H.Have = Hit->Dist;
  H.Need = Need;
  H.Regs = std::move(Regs);
  H.Guard = std::move(Guard);
  Out.push_back(std::move(H));
}

/// An s_nop sequence of \p N wait states.
static std::string nops(unsigned N) {
  std::string S;
  while (N) {
    unsigned K = std::min(N, 8u);
    S += (S.empty() ? "" : "\n") + ("s_nop " + std::to_string(K - 1));
    N -= K;
  }
  return S;
}

void HazardFinder::waitStates(HazardKind K, ArrayRef<uint16_t> Units,
                              unsigned Need,
                              function_ref<bool(const HazardInsn &)> Producer,
                              bool AnyWriter) {
  if (Units.empty())
    return;
  std::optional<Found> Hit = walk(
      To, Count::WaitStates, Need, 0, [&](uint32_t I, unsigned, uint8_t &) {
        if (I == HazardCode::None)
          return Step::Stop;
        const HazardInsn &H = F(I);
        if ((AnyWriter || Producer(H)) && meets(H.Writes, Units))
          return Step::Hit;
        return Step::Continue;
      });
  add(K, Hit, Hit ? nops(Need - std::min(Need, Hit->Dist)) : "",
      Hit && Hit->At != HazardCode::None ? format(F(Hit->At).Writes, Units)
                                         : "",
      std::nullopt, Need);
}

void HazardFinder::run() {
  auto IsVALU = [](const HazardInsn &H) { return H.C == HazardInsn::VALU; };
  auto IsSALU = [](const HazardInsn &H) { return H.C == HazardInsn::SALU; };
  if (R.SoftClauses)
    softClause();
  if (R.GFX8to9 && T.C == HazardInsn::VMEM)
    waitStates(HazardKind::VALUSGPRToVMEM, scalarReads(T), 5, IsVALU);
  if (R.GFX8to9 && T.DPP) {
    waitStates(HazardKind::VGPRToDPP, ofClass(T.Reads, RegClass::VGPR), 2,
               IsVALU, /*AnyWriter=*/true);
    waitStates(HazardKind::ExecToDPP, ofClass(T.Reads, RegClass::EXEC), 5,
               IsVALU);
  }
  if (R.GFX6to9 && T.DivFmas)
    waitStates(HazardKind::VCCToDivFmas, ofClass(T.Reads, RegClass::VCC), 4,
               IsVALU);
  if (R.GFX6to9 && !T.LaneSel.empty())
    waitStates(HazardKind::LaneSelect, T.LaneSel, 4, IsVALU);
  if (R.GFX6to9 && (T.GetReg || T.SetReg) && T.HwReg >= 0) {
    // The same hardware register: the "units" are the register's id.
    const unsigned Need = T.GetReg ? 2 : (R.GFX8to9 ? 2 : 1);
    std::optional<Found> Hit = walk(
        To, Count::WaitStates, Need, 0, [&](uint32_t I, unsigned, uint8_t &) {
          if (I == HazardCode::None)
            return Step::Stop;
          return F(I).SetReg && F(I).HwReg == T.HwReg ? Step::Hit
                                                      : Step::Continue;
        });
    add(T.GetReg ? HazardKind::SetRegToGetReg : HazardKind::SetRegToSetReg, Hit,
        Hit ? nops(Need - Hit->Dist) : "", "hwreg " + std::to_string(T.HwReg),
        std::nullopt, Need);
  }
  if (R.GFX8to9 && (T.M0Read8 || (R.GFX9 && T.M0Read9))) {
    // By the instruction, whether or not MC names M0 as its operand.
    RegSet M0 = RM.emptySet();
    RM.addClass(RegClass::M0, M0);
    SmallVector<uint16_t, 2> Us;
    for (unsigned U : M0.set_bits())
      Us.push_back(uint16_t(U));
    waitStates(HazardKind::M0Read, Us, 1, IsSALU);
  }
  if (R.GFX7to9 && T.C == HazardInsn::VALU) {
    SmallVector<uint16_t, 8> VW = ofClass(T.Writes, RegClass::VGPR);
    if (!VW.empty()) {
      std::optional<Found> Hit = walk(
          To, Count::WaitStates, 1, 0, [&](uint32_t I, unsigned, uint8_t &) {
            if (I == HazardCode::None)
              return Step::Stop;
            return F(I).WideStore && meets(F(I).StoreData, VW) ? Step::Hit
                                                               : Step::Continue;
          });
      add(HazardKind::WideStoreData, Hit, Hit ? nops(1) : "",
          Hit && Hit->At != HazardCode::None ? format(F(Hit->At).StoreData, VW)
                                             : "",
          std::nullopt, 1);
    }
  }
  if (R.GFX940 && T.C == HazardInsn::VALU) {
    if (!T.Trans)
      waitStates(HazardKind::TransForwarding, ofClass(T.Reads, RegClass::VGPR),
                 1, [](const HazardInsn &H) { return H.Trans; });
    waitStates(HazardKind::VALUSGPRToVALU, scalarReads(T), 2, IsVALU);
    if (T.ReadLane || T.WriteLane)
      waitStates(HazardKind::ExecToReadLane, ofClass(T.Reads, RegClass::EXEC),
                 4, IsVALU);
    if (T.ReadLane)
      waitStates(HazardKind::VGPRToReadLane, T.Src0, 1, IsVALU);
  }
  gfx10();
  gfx11();
  if (R.SGPRReadAfterWrite)
    sgprReadAfterWrite();
  if (R.TransCoexec && T.C == HazardInsn::VALU) {
    // A VALU right after a TRANS (no VALU between) that reads its result
    // or writes what it reads.
    std::optional<Found> Hit =
        walk(To, Count::VALUs, 1, 0, [&](uint32_t I, unsigned, uint8_t &) {
          if (I == HazardCode::None)
            return Step::Stop;
          const HazardInsn &H = F(I);
          if (!H.Trans)
            return Step::Continue;
          return meets(H.Writes, T.Reads) || meets(T.Writes, H.Reads)
                     ? Step::Hit
                     : Step::Stop;
        });
    add(HazardKind::TransCoexec, Hit, "v_nop", "");
  }
}

void HazardFinder::softClause() {
  // A run of SMEM (or, gfx8-9, VMEM) ending at To whose results meet the
  // operands of one of them must be broken by another instruction.
  const bool SMEM = T.C == HazardInsn::SMEM;
  if (!SMEM && !(R.GFX8to9 && T.C == HazardInsn::VMEM))
    return;
  SmallVector<uint16_t, 16> Defs, Uses;
  std::optional<uint32_t> Nearest;
  bool Any = false;
  walk(To, Count::WaitStates, ~0u, 0, [&](uint32_t I, unsigned, uint8_t &) {
    if (I == HazardCode::None || F(I).C != T.C)
      return Step::Stop;
    if (!Nearest)
      Nearest = I;
    Any = true;
    Defs.append(F(I).Writes.begin(), F(I).Writes.end());
    Uses.append(F(I).Reads.begin(), F(I).Reads.end());
    return Step::Continue;
  });
  // As LLVM reads it: a clause before To that writes nothing (stores,
  // atomics without return) takes To whatever it is; else a store starts
  // a clause of its own, and any other instruction one whose results do
  // not meet its operands.
  if (!Any || Defs.empty())
    return;
  const bool Store = SMEM && T.Store;
  Defs.append(T.Writes.begin(), T.Writes.end());
  Uses.append(T.Reads.begin(), T.Reads.end());
  // EXEC and the like are read by every one of them and written by none;
  // only what one writes and another reads breaks the clause.
  if (Store || meets(Defs, Uses))
    add(HazardKind::SoftClause, Found{*Nearest, 0}, "s_nop 0",
        format(Defs, Uses), std::nullopt, 1);
}

void HazardFinder::gfx10() {
  auto DepCtrField = [](uint16_t V, uint16_t Mask) {
    return V != 0xffff && (V & Mask) == 0;
  };
  // LLVM reads the writer's explicit results only (s_and_saveexec's EXEC
  // is implicit).
  if (R.VMEMToScalarWrite &&
      (T.C == HazardInsn::SALU || T.C == HazardInsn::SMEM) &&
      !T.ExplicitWrites.empty()) {
    std::optional<Found> Hit = walk(
        To, Count::WaitStates, ~0u, 0, [&](uint32_t I, unsigned, uint8_t &) {
          if (I == HazardCode::None)
            return Step::Stop;
          const HazardInsn &H = F(I);
          if (H.C == HazardInsn::VALU || H.Waitcnt0 ||
              DepCtrField(H.DepCtr, 0x1c))
            return Step::Stop;
          if ((H.C == HazardInsn::VMEM || H.C == HazardInsn::DS) &&
              meets(H.Reads, T.ExplicitWrites))
            return Step::Hit;
          return Step::Continue;
        });
    add(HazardKind::VMEMToScalarWrite, Hit,
        "s_waitcnt_depctr depctr_vm_vsrc(0)",
        Hit && Hit->At != HazardCode::None
            ? format(F(Hit->At).Reads, T.ExplicitWrites)
            : "");
  }
  if (R.SMEMToVectorWrite && T.C == HazardInsn::VALU) {
    SmallVector<uint16_t, 8> SW;
    for (uint16_t U : T.Writes)
      if (RM.unit(U).Class == RegClass::SGPR ||
          RM.unit(U).Class == RegClass::VCC)
        SW.push_back(U);
    if (!SW.empty()) {
      std::optional<Found> Hit = walk(
          To, Count::WaitStates, ~0u, 0, [&](uint32_t I, unsigned, uint8_t &) {
            if (I == HazardCode::None)
              return Step::Stop;
            const HazardInsn &H = F(I);
            if (H.SALUDef || H.LgkmWait0)
              return Step::Stop;
            if (H.C == HazardInsn::SMEM && meets(H.Reads, SW))
              return Step::Hit;
            return Step::Continue;
          });
      add(HazardKind::SMEMToVectorWrite, Hit, "s_mov_b32 null, 0",
          Hit && Hit->At != HazardCode::None ? format(F(Hit->At).Reads, SW)
                                             : "");
    }
  }
  if (R.VcmpxExecWAR && T.C == HazardInsn::VALU &&
      !ofClass(T.Writes, RegClass::EXEC).empty()) {
    SmallVector<uint16_t, 8> EW = ofClass(T.Writes, RegClass::EXEC);
    std::optional<Found> Hit = walk(
        To, Count::WaitStates, ~0u, 0, [&](uint32_t I, unsigned, uint8_t &) {
          if (I == HazardCode::None)
            return Step::Stop;
          const HazardInsn &H = F(I);
          if (DepCtrField(H.DepCtr, 0x1))
            return Step::Stop;
          if (H.C == HazardInsn::VALU) {
            for (uint16_t U : H.Writes)
              if (RM.unit(U).Class == RegClass::SGPR ||
                  RM.unit(U).Class == RegClass::VCC)
                return Step::Stop;
            return Step::Continue;
          }
          return meets(H.Reads, EW) ? Step::Hit : Step::Continue;
        });
    add(HazardKind::VcmpxExecWAR, Hit, "s_waitcnt_depctr depctr_sa_sdst(0)",
        "exec");
  }
  if (R.LdsBranchVmem)
    ldsBranchVmem();
  if (R.VcmpxPermlane && T.Permlane) {
    std::optional<Found> Hit = walk(To, Count::WaitStates, ~0u, 0,
                                    [&](uint32_t I, unsigned, uint8_t &) {
                                      if (I == HazardCode::None)
                                        return Step::Stop;
                                      const HazardInsn &H = F(I);
                                      if (H.C != HazardInsn::VALU || H.VNop)
                                        return Step::Continue;
                                      return H.Cmpx ? Step::Hit : Step::Stop;
                                    });
    // The fix is a VALU of the permlane's own registers: not a fixed code.
    add(HazardKind::VcmpxPermlane, Hit, "", "exec");
  }
}

void HazardFinder::ldsBranchVmem() {
  auto Type = [](const HazardInsn &H) {
    return H.C == HazardInsn::DS ? 1 : H.C == HazardInsn::VMEM ? 2 : 0;
  };
  const int Mine = Type(T);
  if (!Mine)
    return;
  std::optional<uint32_t> Origin;
  std::optional<Found> Hit =
      walk(To, Count::WaitStates, ~0u, 0, [&](uint32_t I, unsigned, uint8_t &) {
        if (I == HazardCode::None)
          return Step::Stop;
        const HazardInsn &H = F(I);
        if (Type(H) || H.VscntNull0)
          return Step::Stop;
        if (!H.Branch)
          return Step::Continue;
        std::optional<Found> Other = walk(
            I, Count::WaitStates, ~0u, 0, [&](uint32_t J, unsigned, uint8_t &) {
              if (J == HazardCode::None)
                return Step::Stop;
              const HazardInsn &H2 = F(J);
              if (H2.VscntNull0 || Type(H2) == Mine)
                return Step::Stop;
              return Type(H2) ? Step::Hit : Step::Continue;
            });
        if (!Other)
          return Step::Continue;
        Origin = Other->At;
        return Step::Hit;
      });
  if (Hit && Origin && *Origin != HazardCode::None) {
    // The wait may go anywhere between the first memory operation and To.
    Hit->At = *Origin;
    add(HazardKind::LdsBranchVmem, Hit, "s_waitcnt_vscnt null, 0x0", "",
        Origin);
  } else if (Hit) {
    add(HazardKind::LdsBranchVmem, Hit, "s_waitcnt_vscnt null, 0x0", "");
  }
}

void HazardFinder::gfx11() {
  auto VaVdst0 = [](const HazardInsn &H) {
    return H.DepCtr != 0xffff && (H.DepCtr & 0xf000) == 0;
  };
  auto Expires = [&](const HazardInsn &H) {
    return H.C == HazardInsn::VMEM || H.C == HazardInsn::DS ||
           H.C == HazardInsn::Export || VaVdst0(H);
  };
  if (R.TransUse && T.C == HazardInsn::VALU) {
    SmallVector<uint16_t, 8> VR = ofClass(T.Reads, RegClass::VGPR);
    if (!VR.empty()) {
      // Within 5 VALUs, at most one other TRANS between (state: TRANS seen).
      std::optional<Found> Hit =
          walk(To, Count::VALUs, 6, 0, [&](uint32_t I, unsigned, uint8_t &S) {
            if (I == HazardCode::None)
              return Step::Stop;
            const HazardInsn &H = F(I);
            if (Expires(H))
              return Step::Stop;
            if (H.Trans) {
              if (meets(H.Writes, VR))
                return Step::Hit;
              if (++S > 1)
                return Step::Stop;
            }
            return Step::Continue;
          });
      add(HazardKind::TransUse, Hit, "s_waitcnt_depctr depctr_va_vdst(0)",
          Hit && Hit->At != HazardCode::None ? format(F(Hit->At).Writes, VR)
                                             : "");
    }
  }
  if (R.PartialForwarding && T.C == HazardInsn::VALU && !T.VSrc.empty() &&
      T.VSrc.back().first > 0) {
    // Walking back: a VALU writes source B after an SALU writes EXEC, and
    // another VALU writes a different source A before it, within 8 VALUs.
    // State: bit 0 EXEC written; bits 1.. the operands written after it.
    std::optional<Found> Hit =
        walk(To, Count::VALUs, 9, 0, [&](uint32_t I, unsigned, uint8_t &S) {
          if (I == HazardCode::None)
            return Step::Stop;
          const HazardInsn &H = F(I);
          if (Expires(H))
            return Step::Stop;
          if (H.C == HazardInsn::SALU &&
              !ofClass(H.Writes, RegClass::EXEC).empty()) {
            S |= 1;
            return Step::Continue;
          }
          if (H.C != HazardInsn::VALU)
            return Step::Continue;
          for (auto [Op, U] : T.VSrc) {
            if (!llvm::is_contained(H.Writes, U))
              continue;
            const uint8_t Bit = uint8_t(2u << std::min<unsigned>(Op, 6));
            if (!(S & 1))
              S |= Bit;
            else if (S & ~Bit & 0xfe)
              return Step::Hit;
          }
          return Step::Continue;
        });
    add(HazardKind::PartialForwarding, Hit,
        "s_waitcnt_depctr depctr_va_vdst(0)", "");
  }
  if (R.MaskWrite)
    maskWrite();
}

void HazardFinder::maskWrite() {
  // gfx11 wave64 (LLVM's fixVALUMaskWriteHazard and the merging of its
  // waits): a VALU reads an SGPR as its lane mask, an SALU later writes it
  // (an explicit result), and an SALU or VALU reads it with no wait for
  // sa_sdst after the write. Looking back for the mask read ends at such a
  // wait and at any VALU that reads an SGPR otherwise.
  if (T.C != HazardInsn::SALU && T.C != HazardInsn::VALU)
    return;
  SmallVector<uint16_t, 8> U = scalarReads(T);
  if (U.empty())
    return;
  auto SaSdst0 = [](const HazardInsn &H) {
    return H.DepCtr != 0xffff && (H.DepCtr & 1) == 0;
  };
  std::optional<uint32_t> Origin, Writer;
  std::optional<Found> Hit =
      walk(To, Count::WaitStates, ~0u, 0, [&](uint32_t I, unsigned, uint8_t &) {
        if (I == HazardCode::None)
          return Step::Stop;
        const HazardInsn &H = F(I);
        if (SaSdst0(H))
          return Step::Stop;
        SmallVector<uint16_t, 8> W;
        if (H.C == HazardInsn::SALU)
          for (uint16_t X : H.ExplicitWrites)
            if (llvm::is_contained(U, X))
              W.push_back(X);
        if (W.empty())
          return meets(H.Writes, U) ? Step::Stop : Step::Continue;
        std::optional<Found> Mask = walk(
            I, Count::WaitStates, ~0u, 0, [&](uint32_t J, unsigned, uint8_t &) {
              if (J == HazardCode::None)
                return Step::Stop;
              const HazardInsn &H2 = F(J);
              if (H2.MaskRead && meets(H2.Mask, W))
                return Step::Hit;
              if (SaSdst0(H2) || meets(H2.Writes, W) ||
                  (H2.C == HazardInsn::VALU && !H2.SGPRReads.empty()))
                return Step::Stop;
              return Step::Continue;
            });
        if (!Mask)
          return Step::Stop;
        Origin = Mask->At;
        Writer = I;
        return Step::Hit;
      });
  if (!Hit)
    return;
  add(HazardKind::MaskWrite, Hit, "s_waitcnt_depctr depctr_sa_sdst(0)",
      Writer ? format(F(*Writer).ExplicitWrites, U) : std::string(),
      Origin && *Origin != HazardCode::None ? Origin : std::nullopt);
}

/// The bit of SGPR pair of unit \p U (bit 63: VCC); -1 for other units.
static int pairBit(const RegisterModel &RM, unsigned U) {
  const RegUnitInfo &I = RM.unit(U);
  if (I.Class == RegClass::VCC)
    return 63;
  if (I.Class == RegClass::SGPR && I.Index < 126)
    return I.Index / 2;
  return -1;
}

uint64_t HazardFinder::pairsReadBefore(uint32_t I) const {
  // Forward over the code: the pairs a VALU may have read on some way to
  // each instruction (before it runs); a device function's callers may
  // have read any.
  if (Code.ReadPairsAt != Code.Epoch) {
    const uint32_t N = Code.size();
    std::vector<SmallVector<uint32_t, 2>> Succs(N);
    for (uint32_t J = 0; J < N; ++J)
      for (uint32_t P : Code.preds(J))
        Succs[P].push_back(J);
    std::vector<uint64_t> In(N, 0), Gen(N, 0);
    for (uint32_t J = 0; J < N; ++J) {
      if (Code.open(J))
        In[J] = ~0ull;
      if (F(J).C == HazardInsn::VALU)
        for (uint16_t U : F(J).SGPRReads)
          if (int B = pairBit(RM, U); B >= 0)
            Gen[J] |= 1ull << B;
      if (F(J).Call)
        Gen[J] = ~0ull;
    }
    std::vector<uint32_t> Work;
    for (uint32_t J = N; J-- > 0;)
      Work.push_back(J);
    std::vector<bool> Queued(N, true);
    while (!Work.empty()) {
      uint32_t J = Work.back();
      Work.pop_back();
      Queued[J] = false;
      uint64_t Out = In[J] | Gen[J];
      for (uint32_t S : Succs[J])
        if ((In[S] | Out) != In[S]) {
          In[S] |= Out;
          if (!Queued[S]) {
            Queued[S] = true;
            Work.push_back(S);
          }
        }
    }
    Code.ReadPairs = std::move(In);
    Code.ReadPairsAt = Code.Epoch;
  }
  return Code.ReadPairs[I];
}

void HazardFinder::sgprReadAfterWrite() {
  // gfx12.0 (AMDGPUWaitSGPRHazards): an SGPR pair is tracked once a VALU
  // has read it (after a call, and in a device function, every pair is).
  // A write of a tracked SGPR by an SALU must be waited for (sa_sdst)
  // before an SALU or VALU reads it; one by a VALU (va_sdst; VCC: va_vcc)
  // before a VALU reads it. A buffer, image or scalar memory access waits
  // for all; an SALU reading a tracked SGPR for the VALU writes of SGPRs
  // (of VCC, when it reads VCC).
  if ((T.C != HazardInsn::SALU && T.C != HazardInsn::VALU) || T.Call)
    return;
  SmallVector<uint16_t, 4> U;
  for (uint16_t X : T.SGPRReads)
    if (pairBit(RM, X) >= 0)
      U.push_back(X);
  if (U.empty())
    return;
  const bool ToVALU = T.C == HazardInsn::VALU;
  auto Tracked = [&](uint32_t I, uint16_t X) {
    int B = pairBit(RM, X);
    return B >= 0 && (pairsReadBefore(I) >> B & 1);
  };
  // State: bit 0 SALU writes waited for, bit 1 VALU writes of SGPRs, bit 2
  // VALU writes of VCC, bit 3 VCC's last writer passed.
  std::string Guard;
  std::optional<uint32_t> Writer;
  std::optional<Found> Hit = walk(
      To, Count::WaitStates, ~0u, ToVALU ? 0 : 2 | 4,
      [&](uint32_t I, unsigned, uint8_t &S) {
        if (I == HazardCode::None)
          return Step::Stop;
        const HazardInsn &H = F(I);
        if (H.BufferOrImage || H.C == HazardInsn::SMEM)
          return Step::Stop;
        if (H.DepCtr != 0xffff) {
          S |= (H.DepCtr & 1) ? 0 : 1;
          S |= (H.DepCtr & 0xe00) ? 0 : 2;
          S |= (H.DepCtr & 2) ? 0 : 4;
          return (S & 7) == 7 ? Step::Stop : Step::Continue;
        }
        if (H.C != HazardInsn::SALU && H.C != HazardInsn::VALU)
          return Step::Continue;
        // Its writes (processed after its reads, so before them here).
        for (uint16_t X : H.SGPRWrites) {
          if (!llvm::is_contained(U, X))
            continue;
          const bool VCC = RM.unit(X).Class == RegClass::VCC;
          if (VCC && (S & 8))
            continue; // a nearer write of VCC replaced this one
          // Tracked when the write happens: a VALU's own reads count.
          bool IsTracked = Tracked(I, X);
          if (!IsTracked && H.C == HazardInsn::VALU)
            for (uint16_t Y : H.SGPRReads)
              IsTracked |= pairBit(RM, Y) == pairBit(RM, X);
          if (!IsTracked)
            continue;
          if (H.C == HazardInsn::SALU && !(S & 1)) {
            Guard = "s_waitcnt_depctr depctr_sa_sdst(0)";
            Writer = I;
            return Step::Hit;
          }
          if (H.C == HazardInsn::VALU && !(S & (VCC ? 4 : 2))) {
            Guard = VCC ? "s_waitcnt_depctr depctr_va_vcc(0)"
                        : "s_waitcnt_depctr depctr_va_sdst(0)";
            Writer = I;
            return Step::Hit;
          }
        }
        for (uint16_t X : H.SGPRWrites)
          if (RM.unit(X).Class == RegClass::VCC && llvm::is_contained(U, X))
            S |= 8;
        // Its reads: an SALU reading a tracked SGPR retires VALU writes.
        if (H.C == HazardInsn::SALU)
          for (uint16_t X : H.SGPRReads)
            if (Tracked(I, X))
              S |= RM.unit(X).Class == RegClass::VCC ? 4 : 2;
        if (H.Call)
          return Step::Stop; // waited for before calls and returns
        return Step::Continue;
      });
  if (!Hit)
    return;
  if (!Writer)
    Guard =
        "s_waitcnt_depctr depctr_va_sdst(0) depctr_va_vcc(0) depctr_sa_sdst(0)";
  add(HazardKind::SGPRReadAfterWrite, Hit, Guard,
      Writer ? format(F(*Writer).SGPRWrites, U) : std::string());
}

void code::findHazards(const HazardCode &Code, const HazardRules &Rules,
                       uint32_t To, std::vector<Hazard> &Out) {
  HazardFinder(Code, Rules, To, Out).run();
}

std::string HazardCode::where(uint32_t I) const {
  if (I == None)
    return "code before the function";
  if (I < Names.size() && !Names[I].empty())
    return Names[I];
  return "the instruction at " + hex(Addrs[I]);
}

std::string code::describeHazard(const HazardCode &Code, const Hazard &H) {
  std::string S = hazardKindName(H.Kind).str();
  if (!H.Regs.empty())
    S += " (" + H.Regs + ")";
  S += ": " + Code.where(H.To) + " follows ";
  if (H.Need)
    return S + Code.where(H.From) + " by " + std::to_string(H.Have) +
           " wait states (" + std::to_string(H.Need) + " needed)";
  return S + Code.where(H.Origin ? *H.Origin : H.From) +
         (H.Guard.empty() ? std::string(" with no VALU between")
                          : " with no '" + H.Guard + "' between");
}
