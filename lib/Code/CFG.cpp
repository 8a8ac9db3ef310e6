//===- lib/Code/CFG.cpp - Control flow of one function --------------------===//

#include "hotswap/Code/CFG.h"

#include "hotswap/Code/Registers.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstrDesc.h"
#include "llvm/MC/MCInstrInfo.h"

#include <algorithm>
#include <set>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

StringRef code::edgeKindName(EdgeKind K) {
  switch (K) {
  case EdgeKind::FallThrough:
    return "fallthrough";
  case EdgeKind::Taken:
    return "taken";
  case EdgeKind::Jump:
    return "jump";
  case EdgeKind::Indirect:
    return "indirect";
  }
  return "?";
}

StringRef code::blockExitName(BlockExit E) {
  switch (E) {
  case BlockExit::None:
    return "none";
  case BlockExit::EndProgram:
    return "s_endpgm";
  case BlockExit::Return:
    return "return";
  case BlockExit::TailCall:
    return "tail-call";
  case BlockExit::Unresolved:
    return "unresolved";
  case BlockExit::FallsOff:
    return "falls-off";
  }
  return "?";
}

StringRef code::windowKindName(CodeWindow::Kind K) {
  switch (K) {
  case CodeWindow::Clause:
    return "clause";
  case CodeWindow::PreloadHeader:
    return "kernarg preload header";
  case CodeWindow::VGPRMSB:
    return "vgpr msb set";
  case CodeWindow::Priority:
    return "priority raised";
  }
  return "?";
}

bool FunctionCFG::mayInsertAt(uint64_t Addr) const {
  return llvm::none_of(
      Windows, [&](const CodeWindow &W) { return W.forbidsInsertAt(Addr); });
}

bool FunctionCFG::editable() const {
  return llvm::none_of(Findings,
                       [](const CodeFinding &F) { return F.Blocking; });
}

uint32_t FunctionCFG::blockOf(uint32_t I) const {
  auto It = llvm::upper_bound(
      Blocks, I, [](uint32_t I, const Block &B) { return I < B.First; });
  return static_cast<uint32_t>(It - Blocks.begin()) - 1;
}

std::optional<uint32_t> FunctionCFG::insnAt(uint64_t Addr) const {
  auto It = llvm::lower_bound(
      Insns, Addr, [](const Insn &I, uint64_t A) { return I.Addr < A; });
  if (It == Insns.end() || It->Addr != Addr)
    return std::nullopt;
  return static_cast<uint32_t>(It - Insns.begin());
}

namespace {
/// What one instruction does to SGPR constants, as far as the PC idioms
/// need: the arithmetic they use, and "clobbers" for every other write.
struct ScalarOp {
  enum Kind : uint8_t {
    GetPC,
    AddU,
    AddC,
    SubU,
    SubB,
    AddI,
    SubI,
    Mov32,
    /// s_sext_i32_i16: gfx12 code sign-extends the PC's high half so.
    SextI16,
    /// s_add_nc_u64 (gfx1250): a pair plus a 64-bit constant, no carry out.
    AddU64,
    SetPC,
    SwapPC,
    Clobber
  } K = Clobber;
  uint32_t Insn = 0;
  /// The SGPRs written, [Dst, Dst + DstCount), and whether SCC is.
  int Dst = -1;
  unsigned DstCount = 0;
  bool WritesSCC = false;
  /// Up to two sources: an SGPR index or a constant.
  struct Src {
    bool IsReg = false;
    int Reg = -1;
    int64_t Imm = 0;
  } S[2];
};

using Value = std::optional<uint32_t>;

/// The SGPR constants known at one point of straight-line code.
struct ConstState {
  DenseMap<int, uint32_t> SGPR;
  std::optional<bool> SCC;

  Value get(int R) const {
    auto It = SGPR.find(R);
    if (It == SGPR.end())
      return std::nullopt;
    return It->second;
  }
  Value src(const ScalarOp::Src &S) const {
    if (S.IsReg)
      return get(S.Reg);
    return static_cast<uint32_t>(S.Imm);
  }
  void set(int R, Value V) {
    if (V)
      SGPR[R] = *V;
    else
      SGPR.erase(R);
  }
  void clear() {
    SGPR.clear();
    SCC.reset();
  }
};
} // namespace

/// The ScalarOp of \p MI, or nullopt when it writes neither SGPRs nor SCC
/// and is not s_setpc/s_swappc.
static std::optional<ScalarOp> scalarOp(const MCInst &MI, uint32_t Index,
                                        const InsnKinds &K,
                                        const MCInstrInfo &MII,
                                        const RegisterModel &RM) {
  const MCInstrDesc &D = MII.get(MI.getOpcode());
  ScalarOp Op;
  Op.Insn = Index;
  // Which SGPRs and SCC it writes.
  for (unsigned I = 0; I < D.getNumDefs() && I < MI.getNumOperands(); ++I) {
    const MCOperand &O = MI.getOperand(I);
    if (!O.isReg())
      continue;
    if (auto R = RM.sgprRange(O.getReg())) {
      Op.Dst = R->first;
      Op.DstCount = R->second;
    } else if (RM.classOf(O.getReg()) == RegClass::SCC) {
      Op.WritesSCC = true;
    }
  }
  for (MCPhysReg R : D.implicit_defs()) {
    RegClass C = RM.classOf(R);
    if (C == RegClass::SCC)
      Op.WritesSCC = true;
    else if (auto S = RM.sgprRange(R)) {
      Op.Dst = S->first;
      Op.DstCount = S->second;
    }
  }
  auto SrcOf = [&](unsigned I) -> std::optional<ScalarOp::Src> {
    if (I >= MI.getNumOperands())
      return std::nullopt;
    const MCOperand &O = MI.getOperand(I);
    ScalarOp::Src S;
    if (std::optional<int64_t> V = immediateValue(O)) {
      S.Imm = *V;
      return S;
    }
    if (O.isReg()) {
      auto R = RM.sgprRange(O.getReg());
      if (!R || R->second != 1)
        return std::nullopt;
      S.IsReg = true;
      S.Reg = R->first;
      return S;
    }
    return std::nullopt;
  };
  StringRef N = K.baseName(MI.getOpcode());
  auto Binary = [&](ScalarOp::Kind Kind) -> bool {
    if (Op.DstCount != 1)
      return false;
    auto A = SrcOf(1), B = SrcOf(2);
    if (!A || !B)
      return false;
    Op.K = Kind;
    Op.S[0] = *A;
    Op.S[1] = *B;
    return true;
  };
  if (N == "S_GETPC_B64" && Op.DstCount == 2) {
    Op.K = ScalarOp::GetPC;
  } else if (N == "S_SETPC_B64" || N == "S_SWAPPC_B64") {
    unsigned SrcIdx = N == "S_SETPC_B64" ? 0 : 1;
    if (SrcIdx >= MI.getNumOperands() || !MI.getOperand(SrcIdx).isReg())
      return std::nullopt;
    auto R = RM.sgprRange(MI.getOperand(SrcIdx).getReg());
    Op.K = N == "S_SETPC_B64" ? ScalarOp::SetPC : ScalarOp::SwapPC;
    if (R && R->second == 2) {
      Op.S[0].IsReg = true;
      Op.S[0].Reg = R->first;
    }
    if (Op.K == ScalarOp::SetPC) {
      Op.Dst = -1;
      Op.DstCount = 0;
    }
    return Op;
  } else if (N == "S_ADD_U32") {
    Binary(ScalarOp::AddU);
  } else if (N == "S_ADDC_U32") {
    Binary(ScalarOp::AddC);
  } else if (N == "S_SUB_U32") {
    Binary(ScalarOp::SubU);
  } else if (N == "S_SUBB_U32") {
    Binary(ScalarOp::SubB);
  } else if (N == "S_ADD_I32") {
    Binary(ScalarOp::AddI);
  } else if (N == "S_SUB_I32") {
    Binary(ScalarOp::SubI);
  } else if (N == "S_SEXT_I32_I16" && Op.DstCount == 1) {
    if (auto A = SrcOf(1)) {
      Op.K = ScalarOp::SextI16;
      Op.S[0] = *A;
    }
  } else if (N == "S_ADD_U64" && Op.DstCount == 2 && MI.getNumOperands() > 2 &&
             MI.getOperand(1).isReg()) {
    // The pair plus a constant (the form gfx1250 adds to its PC).
    auto R = RM.sgprRange(MI.getOperand(1).getReg());
    std::optional<int64_t> V = immediateValue(MI.getOperand(2));
    if (R && R->second == 2 && V) {
      Op.K = ScalarOp::AddU64;
      Op.S[0].IsReg = true;
      Op.S[0].Reg = R->first;
      Op.S[1].Imm = *V;
    }
  } else if (N == "S_MOV_B32" && Op.DstCount == 1) {
    if (auto A = SrcOf(1)) {
      Op.K = ScalarOp::Mov32;
      Op.S[0] = *A;
    }
  }
  if (Op.K == ScalarOp::Clobber && Op.DstCount == 0 && !Op.WritesSCC)
    return std::nullopt;
  return Op;
}

/// Applies \p Op (instruction \p I) to \p St. Returns the 64-bit target of
/// s_setpc/s_swappc when both halves are known.
static std::optional<uint64_t> apply(const ScalarOp &Op, const Insn &I,
                                     ConstState &St) {
  auto Write = [&](Value V) { St.set(Op.Dst, V); };
  Value A = St.src(Op.S[0]);
  Value B = St.src(Op.S[1]);
  switch (Op.K) {
  case ScalarOp::GetPC: {
    uint64_t PC = I.end();
    St.set(Op.Dst, static_cast<uint32_t>(PC));
    St.set(Op.Dst + 1, static_cast<uint32_t>(PC >> 32));
    return std::nullopt;
  }
  case ScalarOp::SetPC:
  case ScalarOp::SwapPC: {
    std::optional<uint64_t> T;
    if (Op.S[0].IsReg) {
      Value Lo = St.get(Op.S[0].Reg), Hi = St.get(Op.S[0].Reg + 1);
      if (Lo && Hi)
        T = (static_cast<uint64_t>(*Hi) << 32) | *Lo;
    }
    if (Op.K == ScalarOp::SwapPC)
      St.clear(); // the callee may change anything
    return T;
  }
  case ScalarOp::AddU:
  case ScalarOp::AddC: {
    std::optional<bool> CarryIn =
        Op.K == ScalarOp::AddC ? St.SCC : std::optional<bool>(false);
    if (A && B && CarryIn) {
      uint64_t Sum = uint64_t(*A) + *B + (*CarryIn ? 1 : 0);
      Write(static_cast<uint32_t>(Sum));
      St.SCC = (Sum >> 32) != 0;
    } else {
      Write(std::nullopt);
      St.SCC.reset();
    }
    return std::nullopt;
  }
  case ScalarOp::SubU:
  case ScalarOp::SubB: {
    std::optional<bool> BorrowIn =
        Op.K == ScalarOp::SubB ? St.SCC : std::optional<bool>(false);
    if (A && B && BorrowIn) {
      uint64_t Sub = uint64_t(*B) + (*BorrowIn ? 1 : 0);
      Write(static_cast<uint32_t>(uint64_t(*A) - Sub));
      St.SCC = Sub > *A;
    } else {
      Write(std::nullopt);
      St.SCC.reset();
    }
    return std::nullopt;
  }
  case ScalarOp::AddI:
  case ScalarOp::SubI: {
    if (A && B) {
      int64_t X = static_cast<int32_t>(*A), Y = static_cast<int32_t>(*B);
      int64_t R = Op.K == ScalarOp::AddI ? X + Y : X - Y;
      Write(static_cast<uint32_t>(R));
      St.SCC = R != static_cast<int32_t>(R);
    } else {
      Write(std::nullopt);
      St.SCC.reset();
    }
    return std::nullopt;
  }
  case ScalarOp::Mov32:
    Write(A);
    return std::nullopt;
  case ScalarOp::AddU64: {
    Value Lo = St.get(Op.S[0].Reg), Hi = St.get(Op.S[0].Reg + 1);
    if (Lo && Hi) {
      uint64_t V = ((uint64_t(*Hi) << 32) | *Lo) + uint64_t(Op.S[1].Imm);
      St.set(Op.Dst, static_cast<uint32_t>(V));
      St.set(Op.Dst + 1, static_cast<uint32_t>(V >> 32));
    } else {
      St.set(Op.Dst, std::nullopt);
      St.set(Op.Dst + 1, std::nullopt);
    }
    if (Op.WritesSCC)
      St.SCC.reset();
    return std::nullopt;
  }
  case ScalarOp::SextI16:
    Write(A ? Value(static_cast<uint32_t>(
                  static_cast<int32_t>(static_cast<int16_t>(*A & 0xffff))))
            : Value());
    return std::nullopt;
  case ScalarOp::Clobber:
    for (unsigned K = 0; K < Op.DstCount; ++K)
      St.set(Op.Dst + K, std::nullopt);
    if (Op.WritesSCC)
      St.SCC.reset();
    return std::nullopt;
  }
  return std::nullopt;
}

/// The windows of \p G from the instructions that open and close them
/// (\p Marks) and, for a kernel with a preload header, its first 256
/// bytes. Straight-line order: a window ends at the instruction closing it
/// or at the function's end, whatever the branches between.
static void
addWindows(FunctionCFG &G, const CodeFunction &F,
           ArrayRef<std::tuple<uint32_t, int64_t, CodeWindow::Kind>> Marks) {
  if (G.Insns.empty())
    return;
  uint64_t End = G.Insns.back().end();
  if (F.PreloadHeader)
    G.Windows.push_back(
        {F.Begin, std::min(F.Begin + 256, End), CodeWindow::PreloadHeader});
  std::optional<uint64_t> OpenMSB, OpenPrio;
  for (auto &[I, Imm, K] : Marks) {
    const Insn &In = G.Insns[I];
    switch (K) {
    case CodeWindow::Clause: {
      // simm16[5:0] is the number of instructions grouped, minus one.
      uint64_t Last =
          std::min<uint64_t>(I + 1 + (Imm & 0x3f), G.Insns.size() - 1);
      G.Windows.push_back({In.Addr, G.Insns[Last].end(), CodeWindow::Clause});
      break;
    }
    case CodeWindow::VGPRMSB:
    case CodeWindow::Priority: {
      std::optional<uint64_t> &Open =
          K == CodeWindow::VGPRMSB ? OpenMSB : OpenPrio;
      // From the instruction that sets the state to the end of the one
      // that resets it: code inserted anywhere between runs in the state.
      if (Open)
        G.Windows.push_back({*Open, In.end(), K});
      Open.reset();
      if (Imm != 0)
        Open = In.Addr;
      break;
    }
    default:
      break;
    }
  }
  if (OpenMSB && *OpenMSB < End)
    G.Windows.push_back({*OpenMSB, End, CodeWindow::VGPRMSB});
  if (OpenPrio && *OpenPrio < End)
    G.Windows.push_back({*OpenPrio, End, CodeWindow::Priority});
  llvm::sort(G.Windows, [](const CodeWindow &A, const CodeWindow &B) {
    return std::tie(A.Begin, A.End) < std::tie(B.Begin, B.End);
  });
}

namespace {
/// buildCFG's state and its steps, in order: decode, leaders, the PC
/// idioms, blocks and their exits, calls, reachability.
class CFGBuilder {
public:
  CFGBuilder(const amdgpu::TargetMC &MC, const CodeFunction &F,
             const FunctionMap &Map)
      : MC(MC), F(F), Map(Map), K(InsnKinds::get(MC.instrInfo())) {
    G.Begin = F.Begin;
    G.End = F.End;
  }

  FunctionCFG build(ArrayRef<uint8_t> Bytes, std::vector<MCInst> *Decoded,
                    const DecodeHint *Hint) {
    decode(Bytes, Decoded, Hint);
    if (G.Insns.empty())
      return std::move(G);
    findLeaders();
    resolvePCIdioms();
    makeBlocks();
    for (uint32_t B = 0; B < G.Blocks.size(); ++B)
      addExit(B);
    addCalls();
    markReachable();
    llvm::sort(G.Findings, [](const CodeFinding &A, const CodeFinding &B) {
      return A.Addr < B.Addr;
    });
    return std::move(G);
  }

private:
  const amdgpu::TargetMC &MC;
  const CodeFunction &F;
  const FunctionMap &Map;
  const InsnKinds &K;
  FunctionCFG G;
  std::vector<ScalarOp> Ops;
  /// Where decoding stopped (bytes that do not decode), if it did.
  std::optional<uint64_t> StopAddr;
  std::set<uint32_t> Leaders;
  /// Targets of the PC idioms, by the index of their s_setpc/s_swappc.
  DenseMap<uint32_t, uint64_t> Resolved;
  DenseMap<uint32_t, const ScalarOp *> PCOps;

  void find(uint64_t Addr, const Twine &Msg, bool Blocking) {
    G.Findings.push_back({Addr, Msg.str(), Blocking});
  }
  std::string name(const Insn &I) const { return K.baseName(I.Opcode).lower(); }

  void decode(ArrayRef<uint8_t> Bytes, std::vector<MCInst> *Decoded,
              const DecodeHint *Hint) {
    const RegisterModel &RM = RegisterModel::get(MC.regInfo());
    // Instructions that open or close windows: index, immediate, kind.
    std::vector<std::tuple<uint32_t, int64_t, CodeWindow::Kind>> Marks;
    uint32_t Visited = 0;
    // No instruction is shorter than 4 bytes: the vector never grows (an
    // MCInst is copied, not moved, when it does: its operands' vector has
    // no noexcept move).
    if (Decoded)
      Decoded->reserve(Decoded->size() + Bytes.size() / 4 + 1);
    DecodedRange R = decodeRange(
        MC, Bytes, F.Begin,
        [&](const Insn &In, const MCInst &MI) {
          if (auto Op = scalarOp(MI, Visited, K, MC.instrInfo(), RM))
            Ops.push_back(*Op);
          StringRef N = K.baseName(In.Opcode);
          std::optional<CodeWindow::Kind> W;
          if (N == "S_CLAUSE")
            W = CodeWindow::Clause;
          else if (N == "S_SET_VGPR_MSB")
            W = CodeWindow::VGPRMSB;
          else if (N == "S_SETPRIO")
            W = CodeWindow::Priority;
          if (W && MI.getNumOperands() && MI.getOperand(0).isImm())
            Marks.emplace_back(Visited, MI.getOperand(0).getImm(), *W);
          if (Decoded)
            Decoded->push_back(MI);
          ++Visited;
        },
        Hint);
    G.Insns = std::move(R.Insns);
    addWindows(G, F, Marks);
    if (R.Stop) {
      StopAddr = R.Stop->Addr;
      find(*StopAddr, "bytes at " + hex(*StopAddr) + " do not decode", true);
    }
  }

  /// Leaders: the entry, every branch target in the function, and every
  /// instruction after one that ends a block.
  void findLeaders() {
    Leaders.insert(0);
    if (F.PreloadHeader && F.contains(F.Begin + 256)) {
      // The firmware's second entry.
      if (std::optional<uint32_t> I = G.insnAt(F.Begin + 256))
        Leaders.insert(*I);
      else
        find(F.Begin + 256,
             "the preload entry " + hex(F.Begin + 256) +
                 " (where firmware may start the kernel) is inside an "
                 "instruction",
             true);
    }
    for (uint32_t I = 0; I < G.Insns.size(); ++I) {
      const Insn &In = G.Insns[I];
      if (In.endsBlock() && I + 1 < G.Insns.size())
        Leaders.insert(I + 1);
      if (In.Target && In.F != Flow::Call)
        addTargetLeader(In);
    }
  }

  /// The leader at the target of branch \p In, or a finding for where it
  /// goes instead.
  void addTargetLeader(const Insn &In) {
    uint64_t T = *In.Target;
    if (std::optional<uint32_t> TI = G.insnAt(T)) {
      Leaders.insert(*TI);
      return;
    }
    std::string Where;
    if (StopAddr && T >= *StopAddr && F.contains(T))
      Where = "past the bytes that do not decode";
    else if (F.contains(T))
      Where = "inside an instruction";
    else if (const CodeFunction *Other = Map.containing(T))
      Where = "into function '" + Other->Name + "'";
    else
      Where = "outside every function";
    find(In.Addr,
         name(In) + " at " + hex(In.Addr) + " branches to " + hex(T) + ", " +
             Where,
         true);
  }

  /// Constant SGPRs along straight-line code resolve the PC idioms; a
  /// resolved jump inside the function adds a leader, which may cut a
  /// straight line: repeat until nothing changes.
  void resolvePCIdioms() {
    for (const ScalarOp &Op : Ops)
      if (Op.K == ScalarOp::SetPC || Op.K == ScalarOp::SwapPC)
        PCOps[Op.Insn] = &Op;
    for (unsigned Round = 0; Round < 8; ++Round) {
      Resolved.clear();
      ConstState St;
      std::optional<uint32_t> Last;
      for (const ScalarOp &Op : Ops) {
        auto L = Last ? Leaders.upper_bound(*Last) : Leaders.begin();
        if (L != Leaders.end() && *L <= Op.Insn)
          St.clear();
        Last = Op.Insn;
        if (std::optional<uint64_t> T = apply(Op, G.Insns[Op.Insn], St))
          Resolved[Op.Insn] = *T;
      }
      bool Added = false;
      for (auto &[I, T] : Resolved)
        if (G.Insns[I].F == Flow::IndirectJump)
          if (std::optional<uint32_t> TI = G.insnAt(T))
            Added |= Leaders.insert(*TI).second;
      if (!Added)
        break;
    }
  }

  void makeBlocks() {
    std::vector<uint32_t> Starts(Leaders.begin(), Leaders.end());
    for (size_t B = 0; B < Starts.size(); ++B) {
      Block Bl;
      Bl.First = Starts[B];
      Bl.End = B + 1 < Starts.size() ? Starts[B + 1]
                                     : static_cast<uint32_t>(G.Insns.size());
      G.Blocks.push_back(std::move(Bl));
    }
  }

  std::optional<uint32_t> blockAt(uint64_t Addr) const {
    std::optional<uint32_t> I = G.insnAt(Addr);
    if (!I || !Leaders.count(*I))
      return std::nullopt;
    return G.blockOf(*I);
  }

  void fallThrough(uint32_t B) {
    Block &Bl = G.Blocks[B];
    if (B + 1 < G.Blocks.size()) {
      Bl.Succs.push_back({B + 1, EdgeKind::FallThrough});
      return;
    }
    const Insn &Last = G.Insns[Bl.End - 1];
    Bl.Exit = BlockExit::FallsOff;
    if (!StopAddr)
      find(Last.Addr,
           "execution continues past the function's end at " + hex(Last.end()) +
               " (after " + name(Last) + ")",
           Last.F != Flow::Trap);
  }

  /// Block \p B's successors, or how it leaves the function.
  void addExit(uint32_t B) {
    Block &Bl = G.Blocks[B];
    const Insn &Last = G.Insns[Bl.End - 1];
    switch (Last.F) {
    case Flow::Jump:
    case Flow::CondJump:
      if (Last.Target)
        if (std::optional<uint32_t> T = blockAt(*Last.Target))
          Bl.Succs.push_back(
              {*T, Last.F == Flow::Jump ? EdgeKind::Jump : EdgeKind::Taken});
      if (Bl.Succs.empty())
        Bl.Exit = BlockExit::Unresolved; // reported with the leaders
      if (Last.F == Flow::CondJump)
        fallThrough(B);
      break;
    case Flow::IndirectJump:
      addIndirectExit(Bl);
      break;
    case Flow::EndProgram:
      Bl.Exit = BlockExit::EndProgram;
      break;
    case Flow::CodeEnd:
      Bl.Exit = BlockExit::EndProgram;
      find(Last.Addr,
           "s_code_end at " + hex(Last.Addr) + " inside the function", false);
      break;
    case Flow::Unknown:
      Bl.Exit = BlockExit::Unresolved;
      find(Last.Addr,
           name(Last) + " at " + hex(Last.Addr) +
               " transfers control in a way this analysis does not follow",
           true);
      break;
    case Flow::Next:
    case Flow::Trap:
    case Flow::Call:
    case Flow::IndirectCall:
      fallThrough(B);
      break;
    }
  }

  /// A block that ends in s_setpc: a resolved jump (in the function, or a
  /// tail call), a device function's return, or unresolved.
  void addIndirectExit(Block &Bl) {
    const uint32_t LastIdx = Bl.End - 1;
    const Insn &Last = G.Insns[LastIdx];
    auto It = Resolved.find(LastIdx);
    if (It != Resolved.end()) {
      uint64_t T = It->second;
      if (std::optional<uint32_t> TB = blockAt(T)) {
        Bl.Succs.push_back({*TB, EdgeKind::Indirect});
        G.Indirect.push_back({LastIdx, T});
      } else if (Map.startingAt(T)) {
        Bl.Exit = BlockExit::TailCall;
        G.Indirect.push_back({LastIdx, T});
      } else {
        Bl.Exit = BlockExit::Unresolved;
        find(Last.Addr,
             "s_setpc_b64 at " + hex(Last.Addr) + " jumps to " + hex(T) +
                 ", which is no instruction of this function and no "
                 "function's entry",
             true);
      }
      return;
    }
    auto PC = PCOps.find(LastIdx);
    bool ReturnPair = PC != PCOps.end() && PC->second->S[0].IsReg &&
                      PC->second->S[0].Reg == 30;
    if (F.Kind == FunctionKind::Device && ReturnPair) {
      Bl.Exit = BlockExit::Return;
      return;
    }
    Bl.Exit = BlockExit::Unresolved;
    find(Last.Addr,
         "s_setpc_b64 at " + hex(Last.Addr) +
             " jumps to an address this analysis cannot compute",
         true);
  }

  void addCalls() {
    for (uint32_t I = 0; I < G.Insns.size(); ++I) {
      const Insn &In = G.Insns[I];
      if (In.F != Flow::Call && In.F != Flow::IndirectCall)
        continue;
      CallSite C{I, In.Target};
      if (In.F == Flow::IndirectCall) {
        auto It = Resolved.find(I);
        if (It != Resolved.end()) {
          C.Target = It->second;
          G.Indirect.push_back({I, It->second});
        }
      }
      if (C.Target && !Map.startingAt(*C.Target))
        find(In.Addr,
             name(In) + " at " + hex(In.Addr) + " calls " + hex(*C.Target) +
                 ", which is no function's entry",
             false);
      G.Calls.push_back(C);
    }
    llvm::sort(G.Indirect);
  }

  /// Predecessors and reachability from the entry (and the preload entry).
  void markReachable() {
    for (uint32_t B = 0; B < G.Blocks.size(); ++B)
      for (const Edge &E : G.Blocks[B].Succs)
        G.Blocks[E.To].Preds.push_back(B);
    std::vector<uint32_t> Work{0};
    G.Blocks[0].Reachable = true;
    if (F.PreloadHeader)
      if (std::optional<uint32_t> I = G.insnAt(F.Begin + 256)) {
        uint32_t B = G.blockOf(*I);
        G.Blocks[B].Reachable = true;
        Work.push_back(B);
      }
    while (!Work.empty()) {
      uint32_t B = Work.back();
      Work.pop_back();
      for (const Edge &E : G.Blocks[B].Succs)
        if (!G.Blocks[E.To].Reachable) {
          G.Blocks[E.To].Reachable = true;
          Work.push_back(E.To);
        }
    }
    // Unreachable s_nop runs are padding the assembler put before an
    // aligned block (loops, a preload header's end): explained, not a
    // finding.
    for (Block &Bl : G.Blocks) {
      if (Bl.Reachable)
        continue;
      Bl.Padding =
          std::all_of(G.Insns.begin() + Bl.First, G.Insns.begin() + Bl.End,
                      [&](const Insn &In) { return K.is(In.Opcode, "S_NOP"); });
      if (!Bl.Padding)
        find(G.Insns[Bl.First].Addr,
             "block at " + hex(G.Insns[Bl.First].Addr) +
                 " is not reachable from the entry",
             false);
    }
  }
};
} // namespace

FunctionCFG code::buildCFG(const amdgpu::TargetMC &MC, const CodeFunction &F,
                           ArrayRef<uint8_t> Bytes, const FunctionMap &Map,
                           std::vector<MCInst> *Decoded,
                           const DecodeHint *Hint) {
  return CFGBuilder(MC, F, Map).build(Bytes, Decoded, Hint);
}
