//===- hotswap/Code/Hazards.h - What the hardware does not interlock -*- C++
//-*-===//
//
// Hazards: pairs (or chains) of instructions the hardware runs wrongly
// unless enough instructions lie between them, or a particular one does.
// A compiler's hazard recognizer (LLVM's GCNHazardRecognizer and, for
// gfx12, AMDGPUWaitSGPRHazards) puts the wait states and waits there when
// it emits the code; code inserted afterwards can create new ones: a body
// whose VMEM reads an SGPR a VALU of the guest wrote the instruction
// before, a DS of a body ahead of a guest branch and VMEM, an SALU write of
// a guest SGPR that a VALU read as a mask. This file finds them, rule by
// rule, by the facts of those LLVM passes (docs/ARCHITECTURE.md, "Hazards"):
//
//   gfx8-9   VMEM reads an SGPR a VALU wrote (5 wait states); DPP reads a
//            VGPR written (2) or after a VALU writes EXEC (5)
//   gfx6-9   v_div_fmas after a VALU writes VCC (4); v_readlane/v_writelane
//            lane select a VALU wrote (4); s_getreg/s_setreg after
//            s_setreg of the same register (2); a VALU overwriting the data
//            of a store of more than 64 bits (1, gfx7-9)
//   gfx8-9   an M0 reader (s_sendmsg, s_movrel, v_interp, LDS DMA, the
//            add-tid DS operations) after an SALU writes M0 (1)
//   gfx940   a VALU reads an SGPR a VALU wrote (2), a TRANS result (1);
//            v_readlane and friends after a VALU writes EXEC (4) or their
//            source VGPR (1)
//   xnack    a soft clause of SMEM (and, gfx8-9, VMEM) whose writes meet
//            its reads (1)
//   gfx10.1  VMEM/DS reads a register, then an SALU/SMEM writes it
//            (s_waitcnt_depctr vm_vsrc(0)); SMEM reads an SGPR, then a VALU
//            writes it (s_mov_b32 null, 0); a non-VALU reads EXEC, then a
//            VALU writes it (s_waitcnt_depctr sa_sdst(0)); DS, a branch,
//            then VMEM or the reverse (s_waitcnt_vscnt null, 0)
//   gfx10.1-12  v_cmpx, then v_permlane (a VALU between)
//   gfx11    a VALU reads a TRANS result within 5 VALUs (gfx11.0); wave64:
//            VALU writes of two sources of a VALU around an SALU write of
//            EXEC (partial forwarding); a VALU reads an SGPR as a mask, an
//            SALU/VALU writes it, and it is read (s_waitcnt_depctr)
//   gfx12.0  an SGPR pair a VALU has read, written and read again
//            (s_wait_alu sa_sdst / va_sdst / va_vcc)
//   gfx1250  a VALU right after a TRANS reading its result or writing its
//            source (v_nop)
//
// Wait states are counted as the hardware and LLVM count them: s_nop N is
// N+1, every other instruction 1; some rules count only VALUs. The walk
// goes back over every path of the function's graph (a kernel's entry has
// nothing before it; a device function's callers and a call's callee are
// outside: rules that assume the worst there say so).
//
// Not modelled (so code that needs them must carry its own waits, as
// before): MFMA/WMMA/accumulator hazards, LDS-direct and parameter loads,
// the gfx940 partial-write (SDWA, op_sel) forwarding, gfx11.5's export
// priority, gfx1250's MODE, scratch-base and tensor rules, and the NSA and
// FP-atomic rules of gfx10.1 MIMG and s_denorm_mode.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_HAZARDS_H
#define HOTSWAP_CODE_HAZARDS_H

#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Functions.h"
#include "hotswap/Code/Registers.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MCInst;
} // namespace llvm

namespace hotswap {
namespace amdgpu {
class TargetMC;
} // namespace amdgpu
namespace code {

enum class HazardKind : uint8_t {
  SoftClause,
  VALUSGPRToVMEM,
  VGPRToDPP,
  ExecToDPP,
  VCCToDivFmas,
  LaneSelect,
  SetRegToGetReg,
  SetRegToSetReg,
  M0Read,
  WideStoreData,
  TransForwarding,
  VALUSGPRToVALU,
  ExecToReadLane,
  VGPRToReadLane,
  VMEMToScalarWrite,
  SMEMToVectorWrite,
  VcmpxExecWAR,
  LdsBranchVmem,
  VcmpxPermlane,
  TransUse,
  PartialForwarding,
  MaskWrite,
  SGPRReadAfterWrite,
  TransCoexec,
};
/// What the rule is, as a person reads it ("a VMEM reads an SGPR a VALU
/// wrote").
llvm::StringRef hazardKindName(HazardKind K);
/// Its short name ("valu-sgpr-vmem"), for JSON and tests.
llvm::StringRef hazardKindId(HazardKind K);

/// Which rules hold on one target (LLVM's subtarget predicates).
struct HazardRules {
  bool GFX6to9 = false, GFX7to9 = false, GFX8to9 = false, GFX9 = false;
  bool GFX940 = false, SoftClauses = false;
  bool VMEMToScalarWrite = false, SMEMToVectorWrite = false;
  bool VcmpxExecWAR = false, LdsBranchVmem = false, VcmpxPermlane = false;
  bool TransUse = false, PartialForwarding = false, MaskWrite = false;
  bool SGPRReadAfterWrite = false, TransCoexec = false;

  /// The rules of \p T, for code running in wave32 (\p Wave32) or wave64.
  static HazardRules of(const amdgpu::TargetMC &MC, const amdgpu::TargetInfo &T,
                        bool Wave32);
  /// The same from the generation and whether XNACK may be on (where the
  /// target's flags are not at hand: true is the stricter reading).
  static HazardRules of(const amdgpu::TargetMC &MC, amdgpu::Generation Gen,
                        bool Xnack, bool Wave32);
  /// Whether a rule that holds reaches back further than a few wait
  /// states (one cleared only by an instruction, or counting VALUs only).
  bool farReaching() const {
    return VMEMToScalarWrite || SMEMToVectorWrite || VcmpxExecWAR ||
           LdsBranchVmem || VcmpxPermlane || TransUse || PartialForwarding ||
           MaskWrite || SGPRReadAfterWrite || TransCoexec;
  }
  /// The rules that hold, by name ("vmem-after-valu-sgpr, ...").
  std::string names() const;
};

/// One hazard: instruction To must not follow From as closely as it does
/// (or without the instruction the rule asks for between them).
struct Hazard {
  HazardKind Kind = HazardKind::SoftClause;
  /// Indices of HazardCode. For a chain, From is its last instruction
  /// before To (a guard between From and To clears it) and Origin its
  /// first (the VALU that read the SGPR, the DS before the branch).
  uint32_t From = 0, To = 0;
  std::optional<uint32_t> Origin;
  /// Wait states (or VALUs) between From and To, and how many the rule
  /// needs; Need is 0 for a rule only an instruction clears.
  unsigned Have = 0, Need = 0;
  /// The registers involved, as a person reads them ("s4", "exec").
  std::string Regs;
  /// The code that clears it placed between From and To ("s_nop 3",
  /// "s_waitcnt_depctr 0xffe3"); empty when no fixed code does (the rule
  /// needs a VALU of the code's own registers).
  std::string Guard;
};

/// What the rules read of one instruction.
struct HazardInsn {
  enum Class : uint8_t { Other, SALU, SMEM, VALU, VMEM, DS, Export };
  Class C = Other;
  /// Wait states it counts for (s_nop N: N+1).
  uint8_t WaitStates = 1;
  /// Transfers control (a branch, jump or call); a call or indirect jump.
  bool Branch = false, Call = false;
  bool DPP = false, Trans = false, VNop = false, WideStore = false;
  bool DivFmas = false, ReadLane = false, WriteLane = false;
  bool Permlane = false, Cmpx = false, MaskRead = false;
  bool SetReg = false, GetReg = false, M0Read9 = false, M0Read8 = false;
  /// An SALU with a result (not s_nop, s_waitcnt, a branch...).
  bool SALUDef = false, Store = false;
  /// s_setreg/s_getreg: the hardware register's id.
  int16_t HwReg = -1;
  /// s_waitcnt_depctr's immediate (0xffff: not one).
  uint16_t DepCtr = 0xffff;
  bool VscntNull0 = false, Waitcnt0 = false, LgkmWait0 = false;
  /// Tracked units read and written (explicit and implicit operands).
  llvm::SmallVector<uint16_t, 8> Reads, Writes;
  /// Units of the explicit results only.
  llvm::SmallVector<uint16_t, 4> ExplicitWrites;
  /// SGPR and VCC units of the explicit operands and of an implicit VCC
  /// (what gfx12's SGPR rule reads and writes).
  llvm::SmallVector<uint16_t, 4> SGPRReads, SGPRWrites;
  /// A buffer or image access (not FLAT, global or scratch).
  bool BufferOrImage = false;
  /// v_readlane/v_writelane's lane select; v_readlane(first)'s source; a
  /// wide store's data.
  llvm::SmallVector<uint16_t, 2> LaneSel, Src0;
  llvm::SmallVector<uint16_t, 4> StoreData;
  /// What a mask reader (v_cndmask, a carry-in, v_div_fmas) reads as its
  /// mask: its last register operand, or the VCC it reads implicitly.
  llvm::SmallVector<uint16_t, 2> Mask;
  /// The VGPR units of the vector sources, each with its source register's
  /// number (0, 1, ... by first use).
  llvm::SmallVector<std::pair<uint8_t, uint16_t>, 6> VSrc;
};

/// Code as the hazard walk reads it: instructions with what comes before
/// each on every way control reaches it. Built from a function's graph;
/// a client may add instructions (code it means to insert) and change what
/// comes before an instruction.
class HazardCode {
public:
  /// Before instruction I: nothing (a kernel's entry).
  static constexpr uint32_t None = ~0u;

  HazardCode(const amdgpu::TargetMC &MC, const FunctionCFG &G,
             llvm::ArrayRef<llvm::MCInst> Decoded, FunctionKind Kind);
  ~HazardCode();
  HazardCode(HazardCode &&);
  /// A copy of \p Other, to which nothing was added yet (its instructions
  /// are the caller's; the two share what they describe of them).
  HazardCode(const HazardCode &Other);

  uint32_t size() const { return uint32_t(Insts.size()); }
  uint64_t addr(uint32_t I) const;
  const llvm::MCInst &inst(uint32_t I) const;
  llvm::ArrayRef<uint32_t> preds(uint32_t I) const { return Preds[I]; }
  /// Whether control may reach I from outside the function (a device
  /// function's entry).
  bool open(uint32_t I) const { return Open[I]; }

  /// Adds \p MI (at \p Addr, an address for messages, or named \p Name)
  /// after \p Preds; returns its index.
  uint32_t add(const llvm::MCInst &MI, uint64_t Addr,
               llvm::ArrayRef<uint32_t> Preds, llvm::StringRef Name = "");
  /// What messages call instruction \p I ("at 0x1000", or its name).
  std::string where(uint32_t I) const;
  void setPreds(uint32_t I, llvm::ArrayRef<uint32_t> Preds);
  /// Drops the instructions from \p Size on (added ones) and gives back
  /// the predecessors changed since \p Mark.
  struct Mark {
    uint32_t Size = 0;
    size_t Changes = 0;
  };
  Mark mark() const { return {size(), Undo.size()}; }
  void restore(Mark M);

  /// What the rules read of instruction \p I. The function's own are
  /// described when first asked for (a seam's walk reads few of them), and
  /// stay where they are (a reference outlives later calls).
  const HazardInsn &facts(uint32_t I) const;
  const RegisterModel &regs() const { return RM; }

private:
  const amdgpu::TargetMC &MC;
  const RegisterModel &RM;
  std::deque<llvm::MCInst> Owned;
  std::vector<const llvm::MCInst *> Insts;
  std::vector<uint64_t> Addrs;
  std::vector<std::string> Names;
  /// The function's instructions' facts, described on first use and shared
  /// with copies (not for use by two threads at once).
  struct GuestFacts;
  std::shared_ptr<GuestFacts> Guest;
  /// The added instructions' facts.
  std::deque<HazardInsn> Added;
  std::vector<llvm::SmallVector<uint32_t, 2>> Preds;
  std::vector<bool> Open;
  std::vector<std::pair<uint32_t, llvm::SmallVector<uint32_t, 2>>> Undo;
  /// gfx12: per instruction, the SGPR pairs a VALU may have read on some
  /// way to it (bit 63: the VCC pair; computed on first use).
  mutable std::vector<uint64_t> ReadPairs;
  /// Changes so far, and the change ReadPairs was computed at.
  uint64_t Epoch = 0;
  mutable uint64_t ReadPairsAt = ~0ull;
  friend class HazardFinder;
};

/// The hazards instruction \p To of \p Code is the last part of, by
/// \p Rules (at most one per rule: the nearest).
void findHazards(const HazardCode &Code, const HazardRules &Rules, uint32_t To,
                 std::vector<Hazard> &Out);

/// \p H as a person reads it: "s_nop 3 ... wrote s4 2 wait states before
/// (the rule needs 5)".
std::string describeHazard(const HazardCode &Code, const Hazard &H);

/// A hazard of a copy of a function (code moved, code inserted) that the
/// original does not have, as a person reads it.
struct NewHazard {
  Hazard H;
  std::string Message;
};

/// The hazards of \p Copy (the copy's code as \p CopyG and \p CopyDecoded)
/// that the original (\p G, \p Decoded) does not have: each that ends or
/// starts in code that is not an original instruction's copy, and each
/// between two original instructions that the original does not have
/// between them (code taking a replaced instruction's place may be
/// missing a wait it made). \p InsnAddr: the copy's address of each
/// original instruction (RelocationProof.h); \p Replaced: the original
/// instructions whose place inserted code took.
std::vector<NewHazard> newHazards(
    const amdgpu::TargetMC &MC, const HazardRules &Rules, FunctionKind Kind,
    const FunctionCFG &G, llvm::ArrayRef<llvm::MCInst> Decoded,
    const FunctionCFG &CopyG, llvm::ArrayRef<llvm::MCInst> CopyDecoded,
    llvm::ArrayRef<uint64_t> InsnAddr, llvm::ArrayRef<uint32_t> Replaced);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_HAZARDS_H
