//===- lib/Code/Functions.cpp - The functions of a code object ------------===//

#include "hotswap/Code/Functions.h"

#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Code/Decode.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/BinaryFormat/ELF.h"

#include <algorithm>
#include <map>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

StringRef code::gapKindName(GapKind K) {
  switch (K) {
  case GapKind::Zeros:
    return "zeros";
  case GapKind::Nops:
    return "s_nop";
  case GapKind::CodeEnd:
    return "s_code_end";
  case GapKind::Unclaimed:
    return "unclaimed";
  }
  return "?";
}

const CodeFunction *FunctionMap::containing(uint64_t Addr) const {
  auto It =
      llvm::upper_bound(Functions, Addr, [](uint64_t A, const CodeFunction &F) {
        return A < F.Begin;
      });
  if (It == Functions.begin())
    return nullptr;
  --It;
  return It->contains(Addr) ? &*It : nullptr;
}

const CodeFunction *FunctionMap::startingAt(uint64_t Addr) const {
  const CodeFunction *F = containing(Addr);
  return F && F->Begin == Addr ? F : nullptr;
}

/// Whether code may be decoded in \p S: an executable section with bytes in
/// the file that is not the stub pool.
static bool holdsFunctions(const Section &S) {
  return S.isAlloc() && S.isExec() && !S.isNoBits() &&
         !S.hasExternalContents() && S.Name != StubSectionName;
}

static GapKind classifyGap(ArrayRef<uint8_t> Bytes, uint64_t Addr,
                           const amdgpu::TargetMC *MC) {
  if (llvm::all_of(Bytes, [](uint8_t B) { return B == 0; }))
    return GapKind::Zeros;
  if (!MC)
    return GapKind::Unclaimed;
  const InsnKinds &K = InsnKinds::get(MC->instrInfo());
  bool SawCodeEnd = false;
  uint64_t Off = 0;
  while (Off < Bytes.size()) {
    std::optional<amdgpu::DecodedInst> D = MC->decodeOne(
        Bytes.drop_front(Off), Addr + Off, /*AllowSoftFail=*/true);
    if (!D || D->Size == 0 || D->Size > Bytes.size() - Off)
      return GapKind::Unclaimed;
    StringRef N = K.baseName(D->Inst.getOpcode());
    if (N == "S_CODE_END")
      SawCodeEnd = true;
    else if (N != "S_NOP")
      return GapKind::Unclaimed;
    Off += D->Size;
  }
  return SawCodeEnd ? GapKind::CodeEnd : GapKind::Nops;
}

FunctionMap code::findFunctions(const Object &Obj,
                                ArrayRef<KernelEntry> Kernels,
                                const amdgpu::TargetMC *MC) {
  FunctionMap M;
  struct Start {
    std::string Name;
    FunctionKind Kind = FunctionKind::Device;
    std::optional<uint64_t> SymSize;
    bool Wave32 = false;
    bool PreloadHeader = false;
  };
  bool AllWave32 =
      !Kernels.empty() &&
      llvm::all_of(Kernels, [](const KernelEntry &K) { return K.Wave32; });
  // Per executable section, the functions starting in it by address.
  std::map<const Section *, std::map<uint64_t, Start>> Starts;

  for (const KernelEntry &K : Kernels) {
    Section *S = Obj.sectionForAddress(K.Entry);
    if (!S || !holdsFunctions(*S)) {
      M.Findings.push_back("kernel '" + K.Name + "' enters at " + hex(K.Entry) +
                           ", outside every executable section");
      continue;
    }
    Start &St = Starts[S][K.Entry];
    if (St.Name.empty() || St.Kind != FunctionKind::Kernel)
      St.Name = K.Name;
    St.Kind = FunctionKind::Kernel;
    St.Wave32 = K.Wave32;
    St.PreloadHeader = K.PreloadHeader;
  }
  for (SymbolTable *T : {Obj.symtab(), Obj.dynsym()}) {
    if (!T)
      continue;
    T->forEach([&](const Symbol &Sym) {
      if (Sym.Type != ELF::STT_FUNC || !Sym.Sec || !holdsFunctions(*Sym.Sec))
        return;
      const Section &S = *Sym.Sec;
      if (Sym.Value < S.Addr || Sym.Value - S.Addr >= S.size())
        return;
      Start &St = Starts[&S][Sym.Value];
      if (St.Name.empty())
        St.Name = Sym.Name;
      if (Sym.Size && (!St.SymSize || Sym.Size > *St.SymSize))
        St.SymSize = Sym.Size;
    });
  }

  // A section with no function in it is one gap.
  for (const auto &S : Obj.sections())
    if (holdsFunctions(*S) && !Starts.count(S.get()) && S->size())
      M.Gaps.push_back(
          {S.get(), S->Addr, S->Addr + S->size(), GapKind::Unclaimed});
  for (auto &[S, ByAddr] : Starts) {
    uint64_t SecEnd = S->Addr + S->size();
    uint64_t Covered = S->Addr; // everything below is a function or a gap
    for (auto It = ByAddr.begin(); It != ByAddr.end(); ++It) {
      auto Next = std::next(It);
      uint64_t Limit = Next == ByAddr.end() ? SecEnd : Next->first;
      CodeFunction F;
      F.Name = It->second.Name;
      F.Kind = It->second.Kind;
      F.Sec = S;
      F.Wave32 = F.Kind == FunctionKind::Kernel ? It->second.Wave32 : AllWave32;
      F.PreloadHeader =
          F.Kind == FunctionKind::Kernel && It->second.PreloadHeader;
      F.Begin = It->first;
      F.End = Limit;
      if (const std::optional<uint64_t> &Size = It->second.SymSize) {
        if (*Size > Limit - F.Begin) {
          M.Findings.push_back("function '" + F.Name + "' at " + hex(F.Begin) +
                               " has size " + hex(*Size) +
                               ", which reaches past " + hex(Limit) +
                               " (the next function or its section's end)");
        } else {
          F.End = F.Begin + *Size;
          F.SizeFromSymbol = true;
        }
      }
      if (F.Begin > Covered)
        M.Gaps.push_back({S, Covered, F.Begin, GapKind::Unclaimed});
      Covered = F.End;
      M.Functions.push_back(std::move(F));
    }
    if (Covered < SecEnd)
      M.Gaps.push_back({S, Covered, SecEnd, GapKind::Unclaimed});
  }
  llvm::sort(M.Functions, [](const CodeFunction &A, const CodeFunction &B) {
    return A.Begin < B.Begin;
  });
  for (CodeGap &G : M.Gaps) {
    ArrayRef<uint8_t> Bytes =
        G.Sec->contents().slice(G.Begin - G.Sec->Addr, G.End - G.Begin);
    G.Kind = classifyGap(Bytes, G.Begin, MC);
  }
  llvm::sort(M.Gaps, [](const CodeGap &A, const CodeGap &B) {
    return A.Begin < B.Begin;
  });
  return M;
}
