//===- lib/AMDGPU/TargetMC.cpp - LLVM MC for one run ----------------------===//
//
// Creates the shared per-target MC tables once, and per-run MC state on
// them; uses it to assemble snippets, decode and print single instructions.
// Nothing here prints: assembler diagnostics are captured and returned as
// errors.
//
// LLVM 22's AMDGPU disassembler refuses GFX6/GFX7 subtargets with a fatal
// error ("disassembly not yet supported for subtarget"). For those processors
// decoding uses a GFX10 (gfx1010, wave64) TargetMC instead. This is only
// sound for the instructions the rewriter decodes (s_getpc_b64, s_setpc_b64,
// s_add_u32, s_addc_u32, s_branch, s_nop), whose encodings are identical on
// GFX6/7 and GFX10; unit tests check that identity with the assembler.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/TargetMC.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/Support/Endian.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCCodeEmitter.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCExpr.h"
#include "llvm/MC/MCFixup.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCObjectFileInfo.h"
#include "llvm/MC/MCParser/MCAsmParser.h"
#include "llvm/MC/MCParser/MCTargetAsmParser.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/TargetParser.h"

#include <cstring>
#include <mutex>

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUAsmParser();
void LLVMInitializeAMDGPUDisassembler();
}

using namespace llvm;

namespace hotswap {
namespace amdgpu {

namespace {

constexpr const char *TripleName = "amdgcn-amd-amdhsa";
/// The processor that decodes for GFX6/GFX7 (see the file comment).
constexpr const char *ProxyMCPU = "gfx1010";
constexpr const char *ProxyFeatures = "+wavefrontsize64";

void initializeAMDGPUOnce() {
  static std::once_flag Flag;
  std::call_once(Flag, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmParser();
    LLVMInitializeAMDGPUDisassembler();
  });
}

/// A streamer that encodes every instruction it is given and collects the
/// bytes; it refuses anything that would need an object file to resolve.
class CollectingStreamer final : public MCStreamer {
public:
  CollectingStreamer(MCContext &Ctx, const MCCodeEmitter &Emitter,
                     std::vector<uint8_t> &Out, std::string &Errors)
      : MCStreamer(Ctx), Emitter(Emitter), Out(Out), Errors(Errors) {}

  void emitInstruction(const MCInst &Inst,
                       const MCSubtargetInfo &STI) override {
    SmallVector<char, 16> Code;
    SmallVector<MCFixup, 2> Fixups;
    Emitter.encodeInstruction(Inst, Code, Fixups, STI);
    if (!Fixups.empty()) {
      fail("instruction needs a fixup (symbol or label operand), which stub "
           "assembly does not support");
      return;
    }
    Out.insert(Out.end(), Code.begin(), Code.end());
  }

  void emitBytes(StringRef Data) override {
    Out.insert(Out.end(), Data.begin(), Data.end());
  }

  void emitValueImpl(const MCExpr *Value, unsigned Size, SMLoc Loc) override {
    int64_t V;
    if (!Value->evaluateAsAbsolute(V)) {
      fail("data value is not an absolute expression");
      return;
    }
    emitIntValue(static_cast<uint64_t>(V), Size);
  }

  bool emitSymbolAttribute(MCSymbol *, MCSymbolAttr) override { return true; }
  void emitCommonSymbol(MCSymbol *, uint64_t, Align) override {
    fail("common symbols are not supported in stub assembly");
  }
  void emitZerofill(MCSection *, MCSymbol *, uint64_t, Align, SMLoc) override {
    fail("zerofill is not supported in stub assembly");
  }
  void emitFill(const MCExpr &, uint64_t, SMLoc) override {
    fail("fill directives are not supported in stub assembly");
  }
  void emitFill(const MCExpr &, int64_t, int64_t, SMLoc) override {
    fail("fill directives are not supported in stub assembly");
  }
  void emitValueToAlignment(Align, int64_t, uint8_t, unsigned) override {
    fail("alignment directives are not supported in stub assembly");
  }
  void emitCodeAlignment(Align, const MCSubtargetInfo *, unsigned) override {
    fail("alignment directives are not supported in stub assembly");
  }

private:
  void fail(const Twine &Msg) {
    if (!Errors.empty())
      Errors += "\n";
    Errors += Msg.str();
  }

  const MCCodeEmitter &Emitter;
  std::vector<uint8_t> &Out;
  std::string &Errors;
};

void captureDiag(const SMDiagnostic &D, void *Context) {
  auto &Errors = *static_cast<std::string *>(Context);
  if (D.getKind() != SourceMgr::DK_Error)
    return;
  if (!Errors.empty())
    Errors += "\n";
  raw_string_ostream OS(Errors);
  OS << "line " << D.getLineNo() << ": " << D.getMessage();
}

} // namespace

/// The immutable MC objects of one (processor, features): created once,
/// shared read-only by every TargetMC of the process.
struct MCTables {
  std::string MCPU;
  std::string Features;
  Triple TheTriple;
  const Target *TheTarget = nullptr;
  MCTargetOptions Options;
  std::unique_ptr<MCRegisterInfo> MRI;
  std::unique_ptr<MCAsmInfo> MAI;
  std::unique_ptr<MCSubtargetInfo> STI;
  std::unique_ptr<MCInstrInfo> MII;
  /// Decoding goes through ProxyMCPU (gfx6/gfx7).
  bool NeedsProxy = false;

  static Expected<std::unique_ptr<MCTables>> create(StringRef MCPU,
                                                    StringRef Features);
};

Expected<std::unique_ptr<MCTables>> MCTables::create(StringRef MCPU,
                                                     StringRef Features) {
  auto T = std::make_unique<MCTables>();
  T->MCPU = MCPU.str();
  T->Features = Features.str();
  T->TheTriple = Triple(TripleName);

  std::string Err;
  T->TheTarget = TargetRegistry::lookupTarget(T->TheTriple, Err);
  if (!T->TheTarget)
    return makeError("cannot find the AMDGPU target: " + Err);
  const Target &TT = *T->TheTarget;

  T->MRI.reset(TT.createMCRegInfo(T->TheTriple));
  if (!T->MRI)
    return makeError("cannot create AMDGPU register info");
  T->MAI.reset(TT.createMCAsmInfo(*T->MRI, T->TheTriple, T->Options));
  if (!T->MAI)
    return makeError("cannot create AMDGPU asm info");
  // Unknown processors and features would only produce a warning on stderr
  // from MCSubtargetInfo; check them first.
  {
    std::unique_ptr<MCSubtargetInfo> Probe(
        TT.createMCSubtargetInfo(T->TheTriple, "", ""));
    if (!Probe || !Probe->isCPUStringValid(MCPU))
      return makeError("unknown AMDGPU processor '" + MCPU + "'");
    SmallVector<StringRef, 4> Parts;
    Features.split(Parts, ',', -1, /*KeepEmpty=*/false);
    for (StringRef F : Parts) {
      StringRef Name = F.drop_front(F.starts_with("+") || F.starts_with("-"));
      bool Known = (F.starts_with("+") || F.starts_with("-")) &&
                   llvm::any_of(Probe->getAllProcessorFeatures(),
                                [&](const SubtargetFeatureKV &KV) {
                                  return Name == KV.Key;
                                });
      if (!Known)
        return makeError("unknown AMDGPU feature '" + F + "'");
    }
  }
  T->STI.reset(TT.createMCSubtargetInfo(T->TheTriple, MCPU, Features));
  if (!T->STI)
    return makeError("cannot create AMDGPU subtarget info for " + MCPU);
  T->MII.reset(TT.createMCInstrInfo());
  if (!T->MII)
    return makeError("cannot create AMDGPU instruction info");
  AMDGPU::IsaVersion ISA = AMDGPU::getIsaVersion(MCPU);
  T->NeedsProxy = ISA.Major != 0 && ISA.Major < 8;
  return std::move(T);
}

/// The tables of every target used so far. Looked up once per TargetMC, never
/// on the decode path.
static Expected<const MCTables &> tablesFor(StringRef MCPU,
                                            StringRef Features) {
  static std::mutex Lock;
  static StringMap<std::unique_ptr<MCTables>> Tables;
  initializeAMDGPUOnce();
  std::string Key = (MCPU + "\x1f" + Features).str();
  std::lock_guard<std::mutex> G(Lock);
  auto It = Tables.find(Key);
  if (It != Tables.end())
    return *It->second;
  Expected<std::unique_ptr<MCTables>> T = MCTables::create(MCPU, Features);
  if (!T)
    return T.takeError();
  return *Tables.try_emplace(Key, std::move(*T)).first->second;
}

TargetMC::TargetMC(const MCTables &T) : T(T) {}
TargetMC::~TargetMC() = default;

Expected<std::unique_ptr<TargetMC>> TargetMC::create(StringRef MCPU,
                                                     StringRef Features) {
  Expected<const MCTables &> Tab = tablesFor(MCPU, Features);
  if (!Tab)
    return Tab.takeError();
  const MCTables &T = *Tab;
  std::unique_ptr<TargetMC> M(new TargetMC(T));
  const Target &TT = *T.TheTarget;
  M->Ctx = std::make_unique<MCContext>(T.TheTriple, T.MAI.get(), T.MRI.get(),
                                       T.STI.get(), nullptr, &T.Options);
  M->Emitter.reset(TT.createMCCodeEmitter(*T.MII, *M->Ctx));
  if (!M->Emitter)
    return makeError("cannot create AMDGPU code emitter");
  M->Printer.reset(TT.createMCInstPrinter(T.TheTriple, /*SyntaxVariant=*/0,
                                          *T.MAI, *T.MII, *T.MRI));
  if (!M->Printer)
    return makeError("cannot create AMDGPU instruction printer");
  if (T.NeedsProxy) {
    Expected<std::unique_ptr<TargetMC>> P = create(ProxyMCPU, ProxyFeatures);
    if (!P)
      return P.takeError();
    M->Proxy = std::move(*P);
  } else {
    M->Disasm.reset(TT.createMCDisassembler(*T.STI, *M->Ctx));
    if (!M->Disasm)
      return makeError("cannot create AMDGPU disassembler");
    M->PreGFX10 = !T.STI->checkFeatures("+gfx10-insts");
    M->MaxInstBytes = T.MAI->getMaxInstLength(T.STI.get());
    if (M->MaxInstBytes > sizeof(MemoKey::W))
      return makeError("LLVM's AMDGPU instructions grew past " +
                       Twine(sizeof(MemoKey::W)) + " bytes (" +
                       Twine(M->MaxInstBytes) + " on " + MCPU + ")");
  }
  return std::move(M);
}

StringRef TargetMC::mcpu() const { return T.MCPU; }
StringRef TargetMC::features() const { return T.Features; }
const MCInstrInfo &TargetMC::instrInfo() const { return *T.MII; }
const MCRegisterInfo &TargetMC::regInfo() const { return *T.MRI; }

/// s_waitcnt_depctr (s_wait_alu on gfx12) with named fields, as a number.
/// LLVM's assembler gives the fields not named the values of the first
/// subtarget the process encoded such a wait for (a function-level static
/// in its AMDGPUBaseInfo: getDefaultDepCtrEncoding), so after a gfx10.1
/// object a gfx11 wait loses its hold_cnt bit, and what a run assembles
/// would depend on what the process did before. The fields, and the
/// default LLVM computes for each subtarget in a fresh process: every field
/// at its maximum (hold_cnt exists from gfx10.3 on).
static std::string depctrAsNumber(StringRef Line, bool GFX10_3) {
  StringRef L = Line.ltrim();
  StringRef Mnemonic =
      L.take_until([](char C) { return C == ' ' || C == '\t'; });
  if (Mnemonic != "s_waitcnt_depctr" && Mnemonic != "s_wait_alu")
    return std::string();
  StringRef Rest = L.drop_front(Mnemonic.size()).trim();
  if (!Rest.starts_with("depctr_"))
    return std::string();
  struct Field {
    StringRef Name;
    unsigned Shift, Width;
  };
  static constexpr Field Fields[] = {
      {"depctr_sa_sdst", 0, 1},  {"depctr_va_vcc", 1, 1},
      {"depctr_vm_vsrc", 2, 3},  {"depctr_hold_cnt", 7, 1},
      {"depctr_va_ssrc", 8, 1},  {"depctr_va_sdst", 9, 3},
      {"depctr_va_vdst", 12, 4},
  };
  uint32_t Value = GFX10_3 ? 0xff9f : 0xff1f;
  while (!Rest.empty()) {
    Rest = Rest.ltrim(" \t,&");
    if (Rest.empty())
      break;
    auto [Name, After] = Rest.split('(');
    auto [Digits, Tail] = After.split(')');
    uint64_t V;
    const StringRef FieldName = Name.trim();
    const Field *F = llvm::find_if(
        Fields, [&](const Field &X) { return X.Name == FieldName; });
    // Anything else is LLVM's to read (and to reject).
    if (F == std::end(Fields) || Digits.trim().getAsInteger(0, V) ||
        V >= (1u << F->Width) || (F->Shift == 7 && !GFX10_3) ||
        After.size() == Digits.size())
      return std::string();
    const uint32_t Mask = ((1u << F->Width) - 1) << F->Shift;
    Value = (Value & ~Mask) | (uint32_t(V) << F->Shift);
    Rest = Tail;
  }
  return (Mnemonic + " " + hex(Value)).str();
}

Expected<std::vector<uint8_t>> TargetMC::assemble(StringRef AsmText) const {
  // The same text gives the same bytes: clients assemble the same few
  // lines at many sites. Errors are not kept.
  if (auto It = AssembleMemo.find(AsmText); It != AssembleMemo.end())
    return It->second;
  Expected<std::vector<uint8_t>> B = assembleFresh(AsmText);
  if (B) {
    if (AssembleMemo.size() >= 4096)
      AssembleMemo.clear();
    AssembleMemo[AsmText] = *B;
  }
  return B;
}

Expected<std::vector<uint8_t>>
TargetMC::assembleFresh(StringRef AsmText) const {
  std::string Errors;
  SourceMgr SM;
  // Named dependency-counter fields as numbers (depctrAsNumber), where the
  // target has the counter (gfx10 on).
  std::string Text;
  if (AsmText.contains("depctr_") && T.STI->checkFeatures("+gfx10-insts")) {
    const bool GFX10_3 = T.STI->checkFeatures("+gfx10-3-insts");
    SmallVector<StringRef, 8> Lines;
    AsmText.split(Lines, '\n');
    for (StringRef L : Lines) {
      std::string N = depctrAsNumber(L, GFX10_3);
      Text += N.empty() ? L.str() : N;
      Text += '\n';
    }
    if (!AsmText.ends_with("\n"))
      Text.pop_back();
    AsmText = Text;
  }
  SM.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(AsmText, "<stub>"),
                        SMLoc());
  SM.setDiagHandler(captureDiag, &Errors);

  // A fresh context per snippet: the parser defines symbols in it.
  MCContext LocalCtx(T.TheTriple, T.MAI.get(), T.MRI.get(), T.STI.get(), &SM,
                     &T.Options);
  LocalCtx.setDiagnosticHandler(
      [&Errors](const SMDiagnostic &D, bool, const SourceMgr &,
                std::vector<const MDNode *> &) { captureDiag(D, &Errors); });
  std::unique_ptr<MCObjectFileInfo> MOFI(
      T.TheTarget->createMCObjectFileInfo(LocalCtx, /*PIC=*/false));
  LocalCtx.setObjectFileInfo(MOFI.get());
  std::unique_ptr<MCCodeEmitter> LocalEmitter(
      T.TheTarget->createMCCodeEmitter(*T.MII, LocalCtx));
  if (!LocalEmitter)
    return makeError("cannot create AMDGPU code emitter");

  std::vector<uint8_t> Out;
  CollectingStreamer Streamer(LocalCtx, *LocalEmitter, Out, Errors);
  std::unique_ptr<MCAsmParser> Parser(
      createMCAsmParser(SM, LocalCtx, Streamer, *T.MAI));
  std::unique_ptr<MCTargetAsmParser> TAP(
      T.TheTarget->createMCAsmParser(*T.STI, *Parser, *T.MII, T.Options));
  if (!TAP)
    return makeError("cannot create AMDGPU assembly parser");
  Parser->setTargetParser(*TAP);
  bool Failed = Parser->Run(/*NoInitialTextSection=*/false);
  if (Failed || !Errors.empty() || LocalCtx.hadError())
    return makeError("cannot assemble for " + T.MCPU + ": " +
                     (Errors.empty() ? std::string("unknown error") : Errors));
  return Out;
}

Expected<std::vector<uint8_t>> TargetMC::encode(const MCInst &Inst) const {
  SmallVector<char, 16> Code;
  SmallVector<MCFixup, 2> Fixups;
  Emitter->encodeInstruction(Inst, Code, Fixups, *T.STI);
  if (!Fixups.empty())
    return makeError("instruction needs a fixup");
  return std::vector<uint8_t>(Code.begin(), Code.end());
}

bool TargetMC::literalCrashesLLVM(ArrayRef<uint8_t> Bytes) const {
  // LLVM 22's AMDGPU disassembler dereferences a null comment stream when
  // an operand asks for a 32-bit literal that is not there. Before gfx10 a
  // 64-bit encoding leaves no room for one (VOP3/VOP3P sources and scalar
  // destinations, MUBUF/MTBUF soffset cannot be literals there), so such
  // words -- which no compiler emits and no hardware runs -- are treated as
  // undecodable without asking LLVM. (Found by the fuzzer and by decoding
  // every opcode of every encoding.)
  if (!PreGFX10 || Bytes.size() < 8)
    return false;
  uint32_t W0 = support::endian::read32le(Bytes.data());
  uint32_t W1 = support::endian::read32le(Bytes.data() + 4);
  switch (W0 >> 26) {
  case 0x34: { // VOP3, VOP3P
    if ((W1 & 0x1ff) == 0xff || ((W1 >> 9) & 0x1ff) == 0xff ||
        ((W1 >> 18) & 0x1ff) == 0xff)
      return true;
    if ((W0 & 0xff) != 0xff)
      return false;
    // vdst = 0xff is v255 where the destination is a VGPR, but a literal
    // where it is scalar (the sdst of VOPC and v_readlane in this encoding):
    // decode the word with vdst = 0 and see which.
    uint8_t Copy[16] = {};
    support::endian::write32le(Copy, W0 & ~0xffu);
    support::endian::write32le(Copy + 4, W1);
    MCInst Inst;
    uint64_t Size;
    if (Disasm->getInstruction(Inst, Size, Copy, 0, nulls()) !=
            MCDisassembler::Success ||
        Inst.getNumOperands() == 0 || !Inst.getOperand(0).isReg())
      return true;
    StringRef Dst = T.MRI->getName(Inst.getOperand(0).getReg());
    return !Dst.starts_with("VGPR") && !Dst.starts_with("AGPR");
  }
  case 0x38: // MUBUF
  case 0x3a: // MTBUF
    return (W1 >> 24) == 0xff;
  default:
    return false;
  }
}

std::optional<DecodedInst> TargetMC::decodeOne(ArrayRef<uint8_t> Bytes,
                                               uint64_t Addr,
                                               bool AllowSoftFail) const {
  DecodedView V = decodeView(Bytes, Addr, AllowSoftFail);
  if (!V.Inst)
    return std::nullopt;
  DecodedInst D;
  D.Inst = *V.Inst;
  D.Size = V.Size;
  D.SoftFail = V.SoftFail;
  return D;
}

DecodedView TargetMC::decodeView(ArrayRef<uint8_t> Bytes, uint64_t Addr,
                                 bool AllowSoftFail) const {
  ++Decodes;
  if (Proxy)
    return Proxy->decodeView(Bytes, Addr, AllowSoftFail);
  // The decoder is given the instruction's bytes as far as the longest
  // instruction reaches, nothing after them: what it returns is a function
  // of those bytes alone (branch targets are decoded as offsets, and no
  // symbolizer is attached), so a decode of the same bytes is reused.
  ArrayRef<uint8_t> Window = Bytes.take_front(MaxInstBytes);
  auto Answer = [&](const MemoDecode &M) -> DecodedView {
    if (M.Status == 0 || (M.Status == 2 && !AllowSoftFail) ||
        M.Size > Bytes.size())
      return DecodedView();
    return DecodedView{&M.Inst, M.Size, M.Status == 2};
  };
  MemoKey Key;
  std::memcpy(Key.W, Window.data(), Window.size());
  Key.Len = uint8_t(Window.size());
  const bool Word = MaxInstBytes == 8 && Window.size() == 8 &&
                    Key.W[0] != WordInfo::getEmptyKey() &&
                    Key.W[0] != WordInfo::getTombstoneKey();
  if (Word) {
    if (auto It = DecodeMemo8.find(Key.W[0]); It != DecodeMemo8.end())
      return Answer(MemoDecodes[It->second]);
  } else if (auto It = DecodeMemo.find(Key); It != DecodeMemo.end()) {
    return Answer(MemoDecodes[It->second]);
  }
  MemoDecode M;
  std::string Comments;
  raw_string_ostream CS(Comments);
  // LLVM 22's AMDGPU disassembler crashes (a dangling Twine in its error
  // path) when an instruction's literal operand is cut off by the end of the
  // bytes. Decode from a zero-padded copy instead, and reject anything that
  // needs the padding (Answer: the size against the bytes there are).
  constexpr size_t Pad = 16;
  SmallVector<uint8_t, 48> Input(Window.begin(), Window.end());
  Input.append(Pad, 0);
  if (!literalCrashesLLVM(Input)) {
    uint64_t Size = 0;
    MCDisassembler::DecodeStatus S =
        Disasm->getInstruction(M.Inst, Size, Input, Addr, CS);
    if (S != MCDisassembler::Fail && Size != 0 && Size <= Window.size()) {
      M.Size = uint8_t(Size);
      M.Status = S == MCDisassembler::SoftFail ? 2 : 1;
    }
  }
  // An operand the decoder made an expression of could depend on Addr:
  // not reused (none is made without a symbolizer).
  if (llvm::any_of(M.Inst, [](const MCOperand &O) { return O.isExpr(); })) {
    Unshared = std::move(M);
    return Answer(Unshared);
  }
  // Bounded: clients decode a function at a time, and hit in what they
  // decoded last.
  if (MemoDecodes.size() >= (1u << 17)) {
    DecodeMemo.clear();
    DecodeMemo8.clear();
    MemoDecodes.clear();
  }
  if (Word)
    DecodeMemo8[Key.W[0]] = uint32_t(MemoDecodes.size());
  else
    DecodeMemo[Key] = uint32_t(MemoDecodes.size());
  MemoDecodes.push_back(std::move(M));
  return Answer(MemoDecodes.back());
}

std::string TargetMC::printInst(const MCInst &Inst, uint64_t Addr) const {
  if (Proxy)
    return Proxy->printInst(Inst, Addr);
  std::string S;
  raw_string_ostream OS(S);
  Printer->printInst(&Inst, Addr, "", *T.STI, OS);
  return std::string(StringRef(S).trim());
}

std::string TargetMC::disassemble(ArrayRef<uint8_t> Bytes,
                                  uint64_t Addr) const {
  std::string S;
  raw_string_ostream OS(S);
  uint64_t Off = 0;
  while (Off < Bytes.size()) {
    std::optional<DecodedInst> D = decodeOne(Bytes.drop_front(Off), Addr + Off);
    OS << format_hex(Addr + Off, 10) << ": ";
    if (!D) {
      OS << "<invalid>\n";
      break;
    }
    OS << printInst(D->Inst, Addr + Off) << "\n";
    Off += D->Size;
  }
  return S;
}

Expected<unsigned> TargetMC::decodedOpcodeOf(StringRef AsmText) const {
  auto It = OpcodeMemo.find(AsmText);
  if (It != OpcodeMemo.end())
    return It->second;
  auto BytesOrErr = assemble(AsmText);
  if (!BytesOrErr)
    return BytesOrErr.takeError();
  std::optional<DecodedInst> D = decodeOne(*BytesOrErr, 0);
  if (!D || D->Size != BytesOrErr->size())
    return makeError("'" + AsmText +
                     "' does not decode back to one "
                     "instruction on " +
                     T.MCPU);
  OpcodeMemo[AsmText] = D->Inst.getOpcode();
  return D->Inst.getOpcode();
}

StringRef TargetMC::regName(MCRegister Reg) const {
  return T.MRI->getName(Reg);
}

bool TargetMC::hasFeature(StringRef Name) const {
  auto [It, New] = FeatureMemo.try_emplace(Name, false);
  if (New)
    It->second = T.STI->checkFeatures(("+" + Name).str());
  return It->second;
}

} // namespace amdgpu
} // namespace hotswap
