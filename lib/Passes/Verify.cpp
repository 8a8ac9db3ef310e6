//===- lib/Passes/Verify.cpp - verify -------------------------------------===//

#include "hotswap/Passes/Verify.h"
#include "hotswap/Support/Format.h"

#include "hotswap/AMDGPU/ScratchSGPR.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/CloneRecord.h"
#include "hotswap/Passes/CodeSymbols.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/PatchRecord.h"
#include "hotswap/Passes/Provenance.h"
#include "hotswap/Passes/SwapRecord.h"
#include "hotswap/Passes/VerifyChecks.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

/// ELF structure the writer relies on, checked on the model: the input's
/// segments as read, new segments by their addresses (the writer derives
/// their offsets, congruent by construction), and the properties the writer
/// will give the file (Object::sectionHeadersWillBeLastAndAligned()).
static void checkStructure(const Object &Obj, VerifyProblems &P) {
  // PT_LOADs: table order = address order, disjoint, congruent.
  // (An empty PT_LOAD maps nothing: it has no place in that order.)
  const Segment *Prev = nullptr;
  for (const auto &SP : Obj.segments()) {
    const Segment &S = *SP;
    if (S.Type != ELF::PT_LOAD || (S.MemSize == 0 && S.FileSize == 0))
      continue;
    if (!S.IsNew) {
      if (S.Align > 1 && S.Offset % S.Align != S.VAddr % S.Align)
        P.push_back("PT_LOAD at " + hex(S.VAddr) + ": offset " + hex(S.Offset) +
                    " is not congruent to its address modulo " + hex(S.Align));
      if (S.FileSize > S.MemSize)
        P.push_back("PT_LOAD at " + hex(S.VAddr) +
                    ": p_filesz exceeds p_memsz");
      const uint64_t InSize = Obj.input().size();
      if (S.Offset > InSize || S.FileSize > InSize - S.Offset)
        P.push_back("PT_LOAD at " + hex(S.VAddr) + " extends past end of file");
    }
    if (Prev) {
      if (S.VAddr < Prev->VAddr)
        P.push_back("PT_LOAD at " + hex(S.VAddr) +
                    " comes after the higher PT_LOAD at " + hex(Prev->VAddr) +
                    " in the program header table");
      else if (Prev->VAddr + Prev->MemSize > S.VAddr)
        P.push_back("PT_LOADs at " + hex(Prev->VAddr) + " and " + hex(S.VAddr) +
                    " overlap");
    }
    Prev = &S;
  }
  // Loaded sections inside a PT_LOAD: input sections at the matching file
  // offset of an input segment, new ones inside the new segment that holds
  // them (the writer places members at their address).
  for (const auto &SP :
       Obj.sections().drop_front(Obj.sections().empty() ? 0 : 1)) {
    const Section &S = *SP;
    if (!S.isAlloc() || S.size() == 0 || Obj.segments().empty() ||
        (S.isNoBits() && (S.Flags & ELF::SHF_TLS)))
      continue;
    // PT_LOADs do not overlap in memory: the one that holds the section's
    // address is the only candidate.
    const Segment *G = Obj.loadSegmentFor(S.Addr, S.size());
    bool Ok = false;
    if (G && G->IsNew)
      Ok = llvm::is_contained(G->Members, &S);
    else if (G)
      Ok = S.Orig &&
           (S.isNoBits() || (S.Orig->Offset - G->Offset == S.Addr - G->VAddr &&
                             S.Addr + S.size() <= G->VAddr + G->FileSize));
    if (!Ok)
      P.push_back("section '" + S.Name + "' at " + hex(S.Addr) +
                  " is not inside a loaded segment at its file offset");
  }
  // Section header table last and aligned.
  if (!Obj.sectionHeadersWillBeLastAndAligned())
    P.push_back("section header table at offset " +
                hex(Obj.inputTables().ShOff) +
                " is not 8-byte aligned after all section data");
  // The string tables something refers to (section names, the names of
  // symbol tables and of .dynamic) end in NUL. (A section merely typed
  // SHT_STRTAB that nothing reads is copied as it is.)
  std::vector<const Section *> Referenced;
  if (Obj.sectionNames())
    Referenced.push_back(Obj.sectionNames());
  for (const auto &S : Obj.sections())
    if ((S->Type == ELF::SHT_SYMTAB || S->Type == ELF::SHT_DYNSYM ||
         S->Type == ELF::SHT_DYNAMIC) &&
        S->Link && !llvm::is_contained(Referenced, S->Link))
      Referenced.push_back(S->Link);
  for (const Section *S : Referenced) {
    if (S->Type != ELF::SHT_STRTAB || S->isNoBits())
      continue;
    ArrayRef<uint8_t> C = S->contents();
    if (C.empty() || C.back() != 0)
      P.push_back("string table '" + S->Name +
                  "' is empty or not NUL-terminated");
  }
  // Symbol tables: locals first, sh_info right.
  for (const auto &T : Obj.symbolTables()) {
    if (T->isModified())
      continue; // the writer partitions and derives sh_info
    // Indexes count the null symbol, which the table leaves out.
    uint32_t First = T->firstNonLocal();
    std::optional<std::pair<size_t, StringRef>> FirstGlobal;
    std::optional<std::string> Misplaced;
    StringRef FirstName; // the symbol at index First
    size_t I = 0;
    T->forEach([&](const Symbol &S) {
      if (I + 1 == First)
        FirstName = S.Name;
      if (!S.isLocal()) {
        if (!FirstGlobal)
          FirstGlobal.emplace(I, S.Name);
      } else if (FirstGlobal && !Misplaced) {
        Misplaced = "symbol table '" + T->section().Name + "': local symbol '" +
                    S.Name.str() + "' (index " + Twine(I + 1).str() +
                    ") follows a global symbol ('" + FirstGlobal->second.str() +
                    "', index " + Twine(FirstGlobal->first + 1).str() + ")";
      }
      ++I;
    });
    if (Misplaced)
      P.push_back(*Misplaced);
    if (T->section().Info != First) {
      std::string Want = First <= T->size()
                             ? "the first non-local symbol is " +
                                   Twine(First).str() + " ('" +
                                   FirstName.str() + "')"
                             : "all " + Twine(First).str() +
                                   " symbols are local (sh_info must be " +
                                   Twine(First).str() + ")";
      P.push_back("symbol table '" + T->section().Name + "': sh_info is " +
                  Twine(T->section().Info).str() + " but " + Want);
    }
  }
}

static std::string pairName(unsigned N) {
  return "s[" + Twine(N).str() + ":" + Twine(N + 1).str() + "]";
}

/// What is wrong with the registers the stub of \p K clobbers. The stub runs
/// before any instruction of the kernel, so it is judged from the descriptor
/// and the target alone, never from what the kernel's code uses later: its
/// scratch pair must not overlap the live-in SGPRs, must be addressable and,
/// on gfx6-9, lie inside the wave's allocation below the special registers
/// every wave of the target has at its top (targetSpecialSGPRs). A
/// FLAT_SCRATCH the descriptor merely lets the kernel set up holds nothing
/// at entry: synth-trampolines keeps clear of it, verify does not require
/// it. VCC, the topmost pair, must lie above the live-ins with every such
/// special.
static std::vector<std::string>
sgprProblems(const TargetInfo &T, const KernelInfo &K, const std::string &Who) {
  std::vector<std::string> P;
  const PoolStub &S = *K.EntryStub;
  const DecodedStub &D = S.Decoded;
  unsigned LiveIns = K.LiveInSGPRs;
  unsigned Specials = targetSpecialSGPRs(T);
  std::optional<unsigned> Allocated = K.KD.allocatedSGPRs(T);
  auto Allocation = [&] {
    return "the allocation of SGPR granule " + Twine(K.KD.sgprGranule()).str() +
           " (" + Twine(*Allocated).str() + " SGPRs)";
  };
  if (D.Form == StubSpec::SGPRPair) {
    unsigned N = D.SGPR;
    std::string Uses =
        Who + ": stub at " + hex(S.Addr) + " uses scratch pair " + pairName(N);
    if (N < LiveIns)
      P.push_back(Uses + ", which overlaps the kernel's live-in SGPRs s0..s" +
                  Twine(LiveIns - 1).str() + " (set at launch; the pair must " +
                  "start at s" + Twine(LiveIns + LiveIns % 2).str() +
                  " or above)");
    if (N + 2 > T.AddressableSGPRs)
      P.push_back(Uses + ", which is not addressable on " + T.Name + " (" +
                  Twine(T.AddressableSGPRs).str() + " SGPRs)");
    if (Allocated && sgprsNeededForPair(N, Specials) > *Allocated)
      P.push_back(Uses + ", which with the " + Twine(Specials).str() +
                  " special SGPRs of " + T.Name + " above it is outside " +
                  Allocation());
    if (K.MD && K.MD->SGPRCount && *K.MD->SGPRCount < N + 2)
      P.push_back(Who + ": metadata .sgpr_count " +
                  Twine(*K.MD->SGPRCount).str() +
                  " does not cover the scratch pair " + pairName(N) +
                  " of the stub at " + hex(S.Addr));
  } else if (D.Form == StubSpec::VCC && Allocated &&
             sgprsNeededForVCC(LiveIns, Specials) > *Allocated) {
    P.push_back(Who + ": stub at " + hex(S.Addr) + " uses VCC as scratch but " +
                Allocation() + " does not keep VCC and the other special " +
                "SGPRs at its top (" + Twine(Specials).str() + " on " + T.Name +
                ") above the kernel's " + Twine(LiveIns).str() +
                " live-in SGPRs");
  }
  return P;
}

namespace {
/// The kernels' entries, stubs and `.stub` symbols against the pools and
/// the symbol table.
class KernelChecker {
public:
  KernelChecker(Object &Obj, const KernelsAnalysis::Result &R,
                VerifyProblems &P);
  /// Problems of \p K's entry: a pool slot without a stub, the second half
  /// of a dual stub (then true).
  bool checkEntry(const KernelInfo &K, const std::string &Who);
  /// Problems of the stub \p K enters through.
  void checkStub(const KernelInfo &K, const std::string &Who,
                 bool EntryIsSecondHalf);
  /// Every `.stub` function symbol names a kernel's entry stub.
  void checkStubSymbolsNameStubs();

private:
  void checkDualStub(const KernelInfo &K, const std::string &Who,
                     bool EntryIsSecondHalf);
  void checkStubSymbol(const KernelInfo &K, const std::string &Who);
  /// Second halves of dual stubs: slot A+256 when slot A leads to the code
  /// of a kernel that needs a dual stub and A+256 leads 256 bytes further.
  /// Found from the pool, not from what a descriptor uses, so that a
  /// descriptor pointing at a second half is recognised as such.
  void findSecondHalves();

  Object &Obj;
  const KernelsAnalysis::Result &R;
  const TargetInfo &T;
  VerifyProblems &P;
  const CodeSymbols Code;
  DenseMap<uint64_t, const PoolStub *> StubStarts;
  StringMap<std::vector<Symbol>> Syms;
  StringMap<const KernelInfo *> ByName;
  struct Half {
    const KernelInfo *K;
    uint64_t Stub;
  };
  DenseMap<uint64_t, Half> SecondHalves;
};
} // namespace

KernelChecker::KernelChecker(Object &Obj, const KernelsAnalysis::Result &R,
                             VerifyProblems &P)
    : Obj(Obj), R(R), T(R.Target), P(P), Code(Obj) {
  for (const PoolStub &S : R.PoolStubs)
    StubStarts[S.Addr] = &S;
  // Only `.stub` names are looked up (a Tensile object has 1.8M local
  // labels: a map of every name was 40% of verify's time).
  if (SymbolTable *ST = Obj.symtab())
    ST->forEach([&](const Symbol &S) {
      if (S.Name.ends_with(".stub"))
        Syms[S.Name].push_back(S);
    });
  for (const KernelInfo &K : R.Kernels)
    ByName[K.Name] = &K;
  findSecondHalves();
}

void KernelChecker::findSecondHalves() {
  DenseMap<uint64_t, std::vector<const PoolStub *>> StubsByTarget;
  for (const PoolStub &S : R.PoolStubs)
    StubsByTarget[S.Decoded.Target].push_back(&S);
  DenseSet<uint64_t> CodesDone; // kernels may share code: once per code
  for (const KernelInfo &K : R.Kernels) {
    if (!K.needsDualStub(T))
      continue;
    // Where a kernel's code is: what the symbol table says (independent of
    // the stub the descriptor uses), else where it is entered.
    uint64_t CodeAddr = Code.codeOf(K).value_or(K.CodeEntry);
    // A descriptor that enters a stub leading to the code names its first
    // half: another kernel's single stub to the same code, followed by a
    // stub that happens to lead 256 bytes further, is not its dual stub.
    ArrayRef<const PoolStub *> Candidates;
    const PoolStub *Own = nullptr;
    if (K.EntryStub && K.EntryStub->Decoded.Target == CodeAddr) {
      auto It = StubStarts.find(K.EntryStub->Addr);
      if (It != StubStarts.end())
        Own = It->second;
    }
    if (Own) {
      Candidates = ArrayRef<const PoolStub *>(&Own, 1);
    } else {
      auto Stubs = StubsByTarget.find(CodeAddr);
      if (Stubs == StubsByTarget.end() || !CodesDone.insert(CodeAddr).second)
        continue;
      Candidates = Stubs->second;
    }
    for (const PoolStub *SP : Candidates) {
      const PoolStub &S = *SP;
      auto Next = StubStarts.find(S.Addr + StubSlotSize);
      if (Next != StubStarts.end() &&
          Next->second->Decoded.Target == CodeAddr + StubSlotSize)
        SecondHalves.try_emplace(S.Addr + StubSlotSize, Half{&K, S.Addr});
    }
  }
}

bool KernelChecker::checkEntry(const KernelInfo &K, const std::string &Who) {
  Section *ES = Obj.sectionForAddress(K.Entry);
  bool InPool = ES && ES->Name == PoolSectionName;
  if (InPool && !StubStarts.count(K.Entry)) {
    if ((K.Entry - ES->Addr) % StubSlotSize != 0)
      P.push_back(Who + ": entry " + hex(K.Entry) +
                  " points into the middle of a stub slot of '" + ES->Name +
                  "' (slots start every " + Twine(StubSlotSize).str() +
                  " bytes from " + hex(ES->Addr) + ")");
    else
      P.push_back(Who + ": entry " + hex(K.Entry) + " is a slot of '" +
                  ES->Name +
                  "' that holds no stub (expected s_branch or "
                  "s_getpc/s_add/s_addc/s_setpc, then padding)");
  }
  auto HI = SecondHalves.find(K.Entry);
  if (HI == SecondHalves.end())
    return false;
  const Half &H = HI->second;
  if (H.K == &K)
    P.push_back(Who + ": entry " + hex(K.Entry) +
                " is the second half (+256) of its own dual stub; the "
                "descriptor must point at " +
                hex(H.Stub));
  else
    P.push_back(Who + ": entry " + hex(K.Entry) +
                " points into the middle of the dual stub of kernel '" +
                H.K->Name + "' at " + hex(H.Stub) + " (its second half, +256)");
  return true;
}

void KernelChecker::checkDualStub(const KernelInfo &K, const std::string &Who,
                                  bool EntryIsSecondHalf) {
  const PoolStub &S = *K.EntryStub;
  const DecodedStub &D = S.Decoded;
  if (K.needsDualStub(T) && !S.Dual && !EntryIsSecondHalf) {
    // Say what the second half is instead of a stub to K.CodeEntry + 256.
    uint64_t Second = S.Addr + StubSlotSize;
    uint64_t Want = K.CodeEntry + StubSlotSize;
    std::string Why = "kernarg preload on " + T.Name +
                      " enters at +256, but the second half of the stub "
                      "at " +
                      hex(S.Addr) + " (at " + hex(Second) + ")";
    auto NI = StubStarts.find(Second);
    if (NI != StubStarts.end())
      P.push_back(Who + ": " + Why + " leads to " +
                  hex(NI->second->Decoded.Target) + ", not to " + hex(Want) +
                  " (the kernel's code + 256)");
    else
      P.push_back(Who + ": " + Why + " is not a stub (it must lead to " +
                  hex(Want) + ", the kernel's code + 256)");
  }
  if (S.Dual && (!D.HalfTarget2 || *D.HalfTarget2 != K.CodeEntry + 256))
    P.push_back(Who + ": second half of the dual stub at " + hex(S.Addr + 256) +
                " does not reach " + hex(K.CodeEntry + 256));
}

void KernelChecker::checkStub(const KernelInfo &K, const std::string &Who,
                              bool EntryIsSecondHalf) {
  const PoolStub &S = *K.EntryStub;
  Section *CS = Obj.sectionForAddress(K.CodeEntry);
  if (CS && CS->Name == PoolSectionName)
    P.push_back(Who + ": stub at " + hex(S.Addr) + " leads to " +
                hex(K.CodeEntry) + ", inside stub pool '" + CS->Name +
                "' instead of the kernel's code");
  // The kernel's own function symbol, when present, is where it must land
  // (its `.swap` symbol once swapped).
  if (std::optional<CodeSymbols::Claim> C = Code.disagreement(K, K.CodeEntry))
    P.push_back(Who + ": stub at " + hex(S.Addr) + " leads to " +
                hex(K.CodeEntry) + " but the kernel's " +
                (C->Swapped ? "swapped code" : "code") + " is at " +
                hex(C->Addr));
  checkDualStub(K, Who, EntryIsSecondHalf);
  for (std::string &Problem : sgprProblems(T, K, Who))
    P.push_back(std::move(Problem));
  uint64_t Size = S.size();
  if (T.InstPrefWidth && uint64_t(K.KD.instPrefSize(T)) * 128 > Size)
    P.push_back(Who + ": INST_PREF_SIZE " + Twine(K.KD.instPrefSize(T)).str() +
                " (COMPUTE_PGM_RSRC3 of the descriptor at " + hex(K.KDAddr) +
                ") prefetches " + Twine(K.KD.instPrefSize(T) * 128).str() +
                " bytes, past the end of the " + Twine(Size).str() +
                "-byte stub at " + hex(S.Addr) + " (at most " +
                Twine(Size / 128).str() + ")");
  // A descriptor at a second half is the descriptor's fault, not the
  // symbol's: the symbol is checked against the stub it should use.
  if (!EntryIsSecondHalf)
    checkStubSymbol(K, Who);
}

void KernelChecker::checkStubSymbol(const KernelInfo &K,
                                    const std::string &Who) {
  auto SI = Syms.find(K.Name + ".stub");
  if (SI == Syms.end())
    return;
  const PoolStub &S = *K.EntryStub;
  if (SI->second.size() > 1)
    P.push_back(Who + ": " + Twine(SI->second.size()).str() +
                " symbols named '" + K.Name + ".stub'");
  const Symbol &Sym = SI->second.front();
  uint64_t WantSize = amdgpu::stubSize(S.Dual || K.needsDualStub(T));
  std::vector<std::string> Bad;
  if (Sym.Type != ELF::STT_FUNC)
    Bad.push_back("type " + Twine(unsigned(Sym.Type)).str() +
                  " (expected STT_FUNC)");
  if (Sym.Value != S.Addr)
    Bad.push_back("value " + hex(Sym.Value) + " (expected " + hex(S.Addr) +
                  ")");
  if (Sym.Size != WantSize)
    Bad.push_back("size " + Twine(Sym.Size).str() + " (expected " +
                  Twine(WantSize).str() + ")");
  if (Sym.Sec != S.Sec)
    Bad.push_back(std::string("section '") +
                  (Sym.Sec ? Sym.Sec->Name : std::string("")) +
                  "' (expected '" + S.Sec->Name + "')");
  if (!Bad.empty())
    P.push_back("symbol '" + K.Name + ".stub' does not describe the " +
                Twine(WantSize).str() + "-byte stub of " + Who + " at " +
                hex(S.Addr) + ": " + join(Bad, ", "));
}

void KernelChecker::checkStubSymbolsNameStubs() {
  for (const auto &E : Syms) {
    StringRef N = E.getKey();
    if (!N.ends_with(".stub"))
      continue;
    for (const Symbol &Sym : E.second) {
      if (Sym.Type != ELF::STT_FUNC)
        continue;
      StringRef KName = N.drop_back(5);
      auto KI = ByName.find(KName);
      if (KI == ByName.end())
        P.push_back("symbol '" + N.str() + "' at " + hex(Sym.Value) +
                    " names no kernel entry stub (there is no kernel '" +
                    KName.str() + "')");
      else if (!KI->second->EntryStub)
        P.push_back("symbol '" + N.str() + "' at " + hex(Sym.Value) +
                    " names no kernel entry stub (kernel '" + KName.str() +
                    "' is entered at " + hex(KI->second->Entry) +
                    ", not through a stub)");
    }
  }
}

static void checkKernels(Object &Obj, const KernelsAnalysis::Result &R,
                         VerifyProblems &P) {
  KernelChecker C(Obj, R, P);
  for (const KernelInfo &K : R.Kernels) {
    std::string Who = "kernel '" + K.Name + "'";
    bool EntryIsSecondHalf = C.checkEntry(K, Who);
    if (K.EntryStub)
      C.checkStub(K, Who, EntryIsSecondHalf);
  }
  C.checkStubSymbolsNameStubs();
}

/// The provenance record of the file the object was read from, if any:
/// it parses, and the file still leads back to its original.
static void checkRecord(const Object &Obj, VerifyProblems &P) {
  Expected<ProvenanceAnalysis::Result> R =
      analyzeProvenance(Obj, Obj.input(), {},
                        [&Obj](ArrayRef<uint8_t> B) { Obj.releaseInput(B); });
  if (!R)
    P.push_back(toString(R.takeError()));
  else if (R->Problem)
    P.push_back(*R->Problem);
}

namespace hotswap {
/// The checks verify always runs, first (VerifyChecks.cpp's registry adds
/// them when it is made).
void addBuiltinVerifyChecks(
    function_ref<void(StringRef, VerifyCheckFn, bool)> Add);
} // namespace hotswap

void hotswap::addBuiltinVerifyChecks(
    function_ref<void(StringRef, VerifyCheckFn, bool)> Add) {
  Add(
      "structure",
      [](const VerifyContext &C, VerifyProblems &P) {
        checkStructure(C.Obj, P);
      },
      /*NeedsKernels=*/false);
  Add(
      "provenance",
      [](const VerifyContext &C, VerifyProblems &P) { checkRecord(C.Obj, P); },
      /*NeedsKernels=*/false);
  Add(
      "kernels",
      [](const VerifyContext &C, VerifyProblems &P) {
        checkKernels(C.Obj, *C.Kernels, P);
      },
      /*NeedsKernels=*/true);
  Add(
      "swaps",
      [](const VerifyContext &C, VerifyProblems &P) {
        verifySwaps(C.Obj, *C.Kernels, P);
      },
      /*NeedsKernels=*/true);
  Add(
      "clones",
      [](const VerifyContext &C, VerifyProblems &P) {
        verifyClones(C.Obj, *C.Kernels, P);
      },
      /*NeedsKernels=*/true);
  Add(
      "patches",
      [](const VerifyContext &C, VerifyProblems &P) {
        verifyPatches(C.Obj, *C.Kernels, P);
      },
      /*NeedsKernels=*/true);
}

std::vector<VerifyProblem> hotswap::verifyObject(Object &Obj,
                                                 AnalysisManager &AM) {
  VerifyContext C{Obj, AM, nullptr};
  std::vector<VerifyProblem> Failed;
  // A fresh analysis, not the one passes kept up to date: the verifier
  // judges the object, not what the passes believe about it. (The target
  // analysis is shared: it depends on bytes no pass changed.)
  std::optional<KernelsAnalysis::Result> R;
  if (Obj.Header.Type != ELF::ET_REL) {
    Expected<KernelsAnalysis::Result> K = KernelsAnalysis::run(Obj, AM);
    if (K) {
      R.emplace(std::move(*K));
      C.Kernels = &*R;
    } else {
      VerifyProblems(Failed, "kernels").push_back(toString(K.takeError()));
    }
  }
  std::vector<VerifyProblem> P = runVerifyChecks(C);
  // Problems in the order the checks ran; finding the kernels comes after
  // the checks that need no kernels.
  auto FirstKernelCheck = llvm::find_if(P, [](const VerifyProblem &X) {
    return X.Check != "structure" && X.Check != "provenance";
  });
  P.insert(FirstKernelCheck, Failed.begin(), Failed.end());
  return P;
}

std::vector<VerifyProblem> hotswap::verifyObject(Object &Obj) {
  AnalysisManager AM;
  return verifyObject(Obj, AM);
}

Expected<PreservedAnalyses> VerifyPass::run(Object &Obj, AnalysisManager &AM,
                                            PassContext &Ctx) {
  std::vector<VerifyProblem> P = verifyObject(Obj, AM);
  Ctx.Stats.add(name(), "runs", "verifier runs");
  if (P.empty())
    return PreservedAnalyses::all();
  // With --kernels-format=json the problems are printed as JSON too, as a
  // print pass prints its values.
  if (Ctx.JSON) {
    json::Array Problems;
    for (const VerifyProblem &X : P)
      Problems.push_back(X.toJSON());
    json::Value V = json::Object{
        {"verify", json::Object{{"problems", std::move(Problems)}}}};
    if (Ctx.JSONOut)
      Ctx.JSONOut->push_back(std::move(V));
    else
      *Ctx.Out << formatv("{0:2}", V) << "\n";
  }
  std::string Msg = "verification failed: " + Twine(P.size()).str() +
                    (P.size() == 1 ? " problem" : " problems");
  for (const VerifyProblem &X : P)
    Msg += "\n  " + X.Message;
  return makeError(Msg);
}
