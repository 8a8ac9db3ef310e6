//===- lib/Passes/Verify.cpp - verify -------------------------------------===//

#include "hotswap/Passes/Verify.h"

#include "hotswap/Object/Writer.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/RealignShdrs.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

static std::string hex(uint64_t V) { return "0x" + utohexstr(V, true); }

Expected<std::unique_ptr<Pass>> VerifyPass::create(StringRef Params) {
  if (!Params.empty())
    return createStringError("unknown parameter '" + Params + "'");
  return std::make_unique<VerifyPass>();
}

static void checkStructure(const Object &Obj, const Layout &L,
                           std::vector<std::string> &P) {
  // PT_LOADs: table order = address order, disjoint, congruent.
  const Segment *Prev = nullptr;
  for (const Segment &S : L.Segments) {
    if (S.Type != ELF::PT_LOAD)
      continue;
    if (S.Align > 1 && S.Offset % S.Align != S.VAddr % S.Align)
      P.push_back("PT_LOAD at " + hex(S.VAddr) + ": offset " + hex(S.Offset) +
                  " is not congruent to its address modulo " + hex(S.Align));
    if (S.FileSize > S.MemSize)
      P.push_back("PT_LOAD at " + hex(S.VAddr) + ": p_filesz exceeds p_memsz");
    if (S.Offset + S.FileSize > L.FileSize)
      P.push_back("PT_LOAD at " + hex(S.VAddr) + " extends past end of file");
    if (Prev) {
      if (S.VAddr < Prev->VAddr)
        P.push_back("PT_LOAD at " + hex(S.VAddr) +
                    " comes after the higher PT_LOAD at " + hex(Prev->VAddr) +
                    " in the program header table");
      else if (Prev->VAddr + Prev->MemSize > S.VAddr)
        P.push_back("PT_LOADs at " + hex(Prev->VAddr) + " and " +
                    hex(S.VAddr) + " overlap");
    }
    Prev = &S;
  }
  // Loaded sections inside a PT_LOAD, at the matching file offset.
  for (size_t I = 1; I < Obj.Sections.size(); ++I) {
    const Section &S = *Obj.Sections[I];
    if (!S.isAlloc() || S.size() == 0 || L.Segments.empty())
      continue;
    bool Ok = false;
    for (const Segment &G : L.Segments) {
      if (G.Type != ELF::PT_LOAD || S.Addr < G.VAddr ||
          S.Addr + S.size() > G.VAddr + G.MemSize)
        continue;
      Ok = S.isNoBits() ||
           (L.SectionOffsets[I] - G.Offset == S.Addr - G.VAddr &&
            S.Addr + S.size() <= G.VAddr + G.FileSize);
      if (Ok)
        break;
    }
    if (!Ok)
      P.push_back("section '" + S.Name + "' at " + hex(S.Addr) +
                  " is not inside a loaded segment at its file offset");
  }
  // Section header table last and aligned.
  Expected<bool> Aligned = sectionHeadersAligned(Obj);
  if (!Aligned)
    P.push_back(toString(Aligned.takeError()));
  else if (!*Aligned)
    P.push_back("section header table at offset " + hex(L.ShOff) +
                " is not 8-byte aligned after all section data");
  // String tables end in NUL.
  for (const auto &S : Obj.Sections) {
    if (S->Type != ELF::SHT_STRTAB || S->isNoBits())
      continue;
    auto It = L.Rebuilt.find(S.get());
    ArrayRef<uint8_t> C =
        It != L.Rebuilt.end() ? ArrayRef<uint8_t>(It->second) : S->contents();
    if (C.empty() || C.back() != 0)
      P.push_back("string table '" + S->Name +
                  "' is empty or not NUL-terminated");
  }
  // Symbol tables: locals first, sh_info right.
  for (const auto &T : Obj.SymbolTables) {
    if (T->isModified())
      continue; // the writer partitions and derives sh_info
    bool SeenGlobal = false;
    for (const Symbol &S : T->Symbols) {
      if (!S.isLocal())
        SeenGlobal = true;
      else if (SeenGlobal) {
        P.push_back("symbol table '" + T->Sec->Name + "': local symbol '" +
                    S.Name + "' follows a global symbol");
        break;
      }
    }
    if (T->Sec->Info != T->firstNonLocal())
      P.push_back("symbol table '" + T->Sec->Name + "': sh_info is " +
                  Twine(T->Sec->Info).str() +
                  " but the first non-local symbol is " +
                  Twine(T->firstNonLocal()).str());
  }
}

static void checkKernels(const Object &Obj, const KernelsAnalysis::Result &R,
                         std::vector<std::string> &P) {
  const TargetInfo &T = R.Target;
  DenseMap<uint64_t, const PoolStub *> StubStarts;
  for (const PoolStub &S : R.PoolStubs)
    StubStarts[S.Addr] = &S;
  StringMap<std::vector<const Symbol *>> Syms;
  if (SymbolTable *ST = Obj.symtab())
    for (const Symbol &S : ST->Symbols)
      Syms[S.Name].push_back(&S);
  StringMap<const KernelInfo *> ByName;
  DenseMap<uint64_t, const KernelInfo *> SecondHalves;
  for (const KernelInfo &K : R.Kernels)
    for (const std::optional<PoolStub> *S : {&K.EntryStub, &K.PendingStub})
      if (*S && (*S)->Dual)
        SecondHalves[(*S)->Addr + StubSlotSize] = &K;

  for (const KernelInfo &K : R.Kernels) {
    ByName[K.Name] = &K;
    std::string Who = "kernel '" + K.Name + "'";
    Section *ES = Obj.sectionForAddress(K.Entry);
    bool InPool = ES && ES->Name == PoolSectionName;
    if (InPool && !StubStarts.count(K.Entry))
      P.push_back(Who + ": entry " + hex(K.Entry) +
                  " points into the middle of a stub");
    auto Half = SecondHalves.find(K.Entry);
    if (Half != SecondHalves.end())
      P.push_back(Who + ": entry " + hex(K.Entry) +
                  " points into the middle of the dual stub of kernel '" +
                  Half->second->Name + "'");
    if (!K.EntryStub) {
      if (InPool)
        P.push_back(Who + ": entry " + hex(K.Entry) +
                    " is in a stub pool but is not a stub");
      continue;
    }
    const PoolStub &S = *K.EntryStub;
    const DecodedStub &D = S.Decoded;
    Section *CS = Obj.sectionForAddress(K.CodeEntry);
    if (CS && CS->Name == PoolSectionName)
      P.push_back(Who + ": stub at " + hex(S.Addr) + " leads into a stub pool");
    // The kernel's own function symbol, when present, is where it must land.
    auto FI = Syms.find(K.Name);
    if (FI != Syms.end())
      for (const Symbol *F : FI->second)
        if (F->Type == ELF::STT_FUNC && F->Value != K.CodeEntry)
          P.push_back(Who + ": stub at " + hex(S.Addr) + " leads to " +
                      hex(K.CodeEntry) + " but the kernel's code is at " +
                      hex(F->Value));
    if (K.needsDualStub(T)) {
      if (!S.Dual)
        P.push_back(Who + ": kernarg preload on " + T.Name +
                    " enters at +256, but the stub at " + hex(S.Addr) +
                    " is not a dual stub");
    }
    if (S.Dual && (!D.HalfTarget2 || *D.HalfTarget2 != K.CodeEntry + 256))
      P.push_back(Who + ": second half of the dual stub at " +
                  hex(S.Addr + 256) + " does not reach " +
                  hex(K.CodeEntry + 256));
    if (D.Form == StubSpec::SGPRPair) {
      unsigned N = D.SGPR;
      unsigned Floor = K.LiveInSGPRs;
      if (K.NumberedSGPR)
        Floor = std::max<unsigned>(Floor, *K.NumberedSGPR);
      if (N < Floor)
        P.push_back(Who + ": stub scratch pair s[" + Twine(N).str() + ":" +
                    Twine(N + 1).str() + "] overlaps the kernel's live SGPRs "
                                         "(s0..s" +
                    Twine(Floor - 1).str() + ")");
      if (N + 2 > T.AddressableSGPRs)
        P.push_back(Who + ": stub scratch pair s[" + Twine(N).str() + ":" +
                    Twine(N + 1).str() + "] is not addressable on " + T.Name);
      if (T.HasSGPRGranule &&
          N + 2 + K.ReservedTopSGPRs > (K.KD.sgprGranule() + 1) * 8)
        P.push_back(Who + ": stub scratch pair s[" + Twine(N).str() + ":" +
                    Twine(N + 1).str() +
                    "] is outside the SGPR allocation of granule " +
                    Twine(K.KD.sgprGranule()).str());
      if (K.MD && K.MD->SGPRCount &&
          *K.MD->SGPRCount < N + 2 + (T.HasSGPRGranule ? K.ReservedTopSGPRs : 0))
        P.push_back(Who + ": metadata .sgpr_count " +
                    Twine(*K.MD->SGPRCount).str() +
                    " does not cover the stub scratch pair s[" +
                    Twine(N).str() + ":" + Twine(N + 1).str() + "]");
    } else if (D.Form == StubSpec::VCC && T.HasSGPRGranule &&
               K.UsedSGPRs + std::max(K.ReservedTopSGPRs, 2u) >
                   (K.KD.sgprGranule() + 1) * 8) {
      P.push_back(Who + ": stub uses VCC as scratch but the SGPR allocation "
                        "of granule " +
                  Twine(K.KD.sgprGranule()).str() +
                  " does not keep VCC above the kernel's " +
                  Twine(K.UsedSGPRs).str() + " SGPRs");
    }
    uint64_t Size = S.Dual ? 512 : 256;
    if (T.InstPrefWidth && uint64_t(K.KD.instPrefSize(T)) * 128 > Size)
      P.push_back(Who + ": INST_PREF_SIZE " +
                  Twine(K.KD.instPrefSize(T)).str() + " prefetches " +
                  Twine(K.KD.instPrefSize(T) * 128).str() +
                  " bytes, past the " + Twine(Size).str() + "-byte stub");
    auto SI = Syms.find(K.Name + ".stub");
    if (SI != Syms.end()) {
      if (SI->second.size() > 1)
        P.push_back(Who + ": " + Twine(SI->second.size()).str() +
                    " symbols named '" + K.Name + ".stub'");
      const Symbol &Sym = *SI->second.front();
      if (Sym.Type != ELF::STT_FUNC || Sym.Value != S.Addr ||
          Sym.Size != Size || Sym.Sec != S.Sec)
        P.push_back("symbol '" + K.Name + ".stub' (value " + hex(Sym.Value) +
                    ", size " + Twine(Sym.Size).str() +
                    ") does not describe the stub at " + hex(S.Addr) +
                    " (size " + Twine(Size).str() + ")");
    }
  }
  // Every .stub function symbol names a stub.
  for (const auto &E : Syms) {
    StringRef N = E.getKey();
    if (!N.ends_with(".stub"))
      continue;
    for (const Symbol *Sym : E.second) {
      if (Sym->Type != ELF::STT_FUNC)
        continue;
      auto KI = ByName.find(N.drop_back(5));
      if (KI == ByName.end() || !KI->second->EntryStub)
        P.push_back("symbol '" + N.str() + "' at " + hex(Sym->Value) +
                    " names no kernel entry stub");
    }
  }
}

Expected<std::vector<std::string>> hotswap::verifyObject(Object &Obj) {
  std::vector<std::string> P;
  Expected<Layout> L = Writer::computeLayout(Obj);
  if (!L) {
    P.push_back("layout: " + toString(L.takeError()));
    return P;
  }
  checkStructure(Obj, *L, P);
  if (Obj.Header.Type == ELF::ET_REL)
    return P;
  AnalysisManager AM;
  auto R = AM.getResult<KernelsAnalysis>(Obj);
  if (!R) {
    P.push_back(toString(R.takeError()));
    return P;
  }
  checkKernels(Obj, *R, P);
  return P;
}

Expected<PreservedAnalyses> VerifyPass::run(Object &Obj, AnalysisManager &AM,
                                            PassContext &Ctx) {
  Expected<std::vector<std::string>> P = verifyObject(Obj);
  if (!P)
    return P.takeError();
  Ctx.Stats.add(name(), "runs", "verifier runs");
  if (P->empty())
    return PreservedAnalyses::all();
  std::string Msg = "verification failed: " + Twine(P->size()).str() +
                    (P->size() == 1 ? " problem" : " problems");
  for (const std::string &S : *P)
    Msg += "\n  " + S;
  return createStringError(Msg);
}
