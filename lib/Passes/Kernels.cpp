//===- lib/Passes/Kernels.cpp - The kernels analysis ----------------------===//

#include "hotswap/Passes/Kernels.h"
#include "hotswap/Support/EarlyJob.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "hotswap/AMDGPU/ScratchSGPR.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Passes/TargetAnalysis.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <map>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

AnalysisKey KernelsAnalysis::Key;

bool KernelInfo::needsDualStub(const TargetInfo &TI) const {
  return TI.PreloadSkipsPrologue && KD.kernargPreloadLength() != 0;
}

void KernelInfo::deriveSGPRs(const TargetInfo &T) {
  LiveInSGPRs = KD.liveInSGPRs(T);
  AllocatedSGPRs = KD.allocatedSGPRs(T);
  SpecialSGPRs = kernelSpecialSGPRs(T, KD);
}

/// Decodes a stub slot. With \p AnyPrologue, the jump may follow any
/// sequence of valid instructions (a prologue of up to 128 bytes).
static Expected<std::optional<DecodedStub>>
decodeSlot(const TargetInfo &TI, const TargetMC &MC, ArrayRef<uint8_t> Slot,
           uint64_t Addr, bool AnyPrologue) {
  Expected<std::optional<DecodedStub>> D = decodeStub(TI, MC, Slot, Addr, {});
  if (!D || *D || !AnyPrologue)
    return D;
  uint64_t Off = 0;
  while (Off < 128) {
    std::optional<DecodedInst> I =
        MC.decodeOne(Slot.drop_front(Off), Addr + Off);
    if (!I || I->Size == 0)
      return std::nullopt;
    Off += I->Size;
    Expected<std::optional<DecodedStub>> W =
        decodeStub(TI, MC, Slot, Addr, Slot.take_front(Off));
    if (!W || *W)
      return W;
  }
  return std::nullopt;
}

/// Decodes the stub at \p Addr if there is one.
static Expected<std::optional<PoolStub>>
stubAt(const Object &Obj, const TargetInfo &TI, const TargetMC &MC,
       uint64_t Addr, bool AnyPrologue) {
  Section *S = Obj.sectionForAddress(Addr);
  if (!S || !S->isExec() || S->isNoBits())
    return std::nullopt;
  uint64_t Rel = Addr - S->Addr;
  ArrayRef<uint8_t> Bytes = S->contents().drop_front(Rel);
  if (Bytes.size() < StubSlotSize)
    return std::nullopt;
  Expected<std::optional<DecodedStub>> D =
      decodeSlot(TI, MC, Bytes.take_front(StubSlotSize), Addr, AnyPrologue);
  if (!D)
    return D.takeError();
  if (!*D)
    return std::nullopt;
  PoolStub P;
  P.Addr = Addr;
  P.Sec = S;
  P.Decoded = **D;
  return P;
}

/// stubAt() for an entry outside the pools: MC is created only when the
/// bytes may be a stub (looksLikeStubSlot).
static Expected<std::optional<PoolStub>>
stubAtIfShaped(const Object &Obj, const TargetInfo &TI,
               TargetAnalysis::Result &TA, uint64_t Addr) {
  // Fewer than a slot's bytes from the entry to the end of its section:
  // that is no stub, and the entry itself was checked by the caller.
  std::optional<ArrayRef<uint8_t>> Slot = Obj.bytesIfAt(Addr, StubSlotSize);
  if (!Slot)
    return std::nullopt;
  if (!looksLikeStubSlot(TI, *Slot))
    return std::nullopt;
  Expected<TargetMC &> MC = TA.mc();
  if (!MC)
    return MC.takeError();
  return stubAt(Obj, TI, *MC, Addr, /*AnyPrologue=*/false);
}

/// Every stub slot of the pool sections. Whether two slots form a dual stub
/// is decided per kernel (only a kernarg-preload kernel has one), never from
/// adjacency alone: two kernels 256 bytes apart look the same.
static Expected<std::vector<PoolStub>>
scanPools(const Object &Obj, const TargetInfo &TI, TargetAnalysis::Result &TA) {
  // The slots of every pool section, each address once: pool sections that
  // overlap (a file can declare any number over the same bytes) are decoded
  // as their union, in address order.
  std::vector<std::pair<uint64_t, uint64_t>> Ranges; // [Begin, End)
  for (const auto &SP : Obj.sections()) {
    const Section &S = *SP;
    if (S.Name != PoolSectionName || !S.isExec() || S.isNoBits() ||
        S.Addr % StubSlotSize != 0 || S.size() < StubSlotSize)
      continue;
    Ranges.push_back({S.Addr, S.Addr + alignDown(S.size(), StubSlotSize)});
  }
  std::vector<PoolStub> Out;
  if (Ranges.empty())
    return Out;
  llvm::sort(Ranges);
  Expected<TargetMC &> MC = TA.mc();
  if (!MC)
    return MC.takeError();
  uint64_t Done = 0; // every slot below this was decoded
  for (const auto &[Begin, End] : Ranges) {
    for (uint64_t Addr = std::max(Begin, Done); Addr < End;
         Addr += StubSlotSize) {
      Expected<std::optional<PoolStub>> P =
          stubAt(Obj, TI, *MC, Addr, /*AnyPrologue=*/true);
      if (!P)
        return P.takeError();
      if (*P)
        Out.push_back(**P);
    }
    Done = std::max(Done, End);
  }
  return Out;
}

/// The note sections a PT_NOTE leads to: the one it describes, or those of
/// the input its bytes cover, in section order.
static SmallVector<Section *, 1> sectionsOfNote(const Object &Obj,
                                                const Segment &P) {
  SmallVector<Section *, 1> Out;
  if (P.Describes) {
    for (const auto &S : Obj.sections())
      if (S.get() == P.Describes)
        Out.push_back(S.get());
    return Out;
  }
  for (const auto &S : Obj.sections())
    if (S->Type == ELF::SHT_NOTE && !S->isNoBits() && S->Orig &&
        S->Orig->Size && S->Orig->Offset >= P.Offset &&
        S->Orig->Offset - P.Offset < P.FileSize &&
        S->Orig->Size <= P.FileSize - (S->Orig->Offset - P.Offset))
      Out.push_back(S.get());
  return Out;
}

/// The NT_AMDGPU_METADATA notes where the runtimes find them (COMGR,
/// measured: test/Consumers/comgr-note-lookup.test): in the first PT_NOTE,
/// in program header order, that leads to a note section with any; without
/// one, in the first note section with any. A note section whose bytes
/// overlap one already read is not read again (a file may declare any
/// number of them over the same bytes).
static Error readMetadata(Object &Obj, KernelsAnalysis::Result &R) {
  std::map<uint64_t, uint64_t> ReadRanges; // file offset -> end, disjoint
  auto AlreadyRead = [&](const Section &S) {
    if (!S.Orig || S.Orig->Size == 0)
      return false;
    const uint64_t Begin = S.Orig->Offset, End = Begin + S.Orig->Size;
    auto It = ReadRanges.upper_bound(Begin);
    if (It != ReadRanges.end() && It->first < End)
      return true;
    if (It != ReadRanges.begin() && std::prev(It)->second > Begin)
      return true;
    ReadRanges[Begin] = End;
    return false;
  };
  // Whether section S holds metadata (then read into R).
  auto Read = [&](Section &S) -> Expected<bool> {
    if (S.Type != ELF::SHT_NOTE || S.isNoBits() || AlreadyRead(S))
      return false;
    // The input's bytes (not a pass's) outlive the analysis unchanged. The
    // parse reads every byte of the note (106 MB on a 100k-kernel object)
    // and keeps what it needs; the rest is read again only when a client
    // asks (a kernel's interface, a rewrite), so the pages go back as it
    // goes.
    const bool Input = !S.isDirty();
    Expected<CodeObjectMetadata> MD =
        CodeObjectMetadata::parse(S.contents(), S.Orig ? S.Orig->Offset : 0,
                                  /*Borrow=*/Input, [&](ArrayRef<uint8_t> B) {
                                    if (Input)
                                      Obj.releaseInput(B);
                                  });
    if (!MD)
      return prefixError("section '" + S.Name + "'", MD.takeError());
    if (!MD->hasMetadata())
      return false;
    R.Metadata.emplace(std::move(*MD));
    R.MetadataSection = &S;
    return true;
  };
  for (const auto &P : Obj.segments())
    if (P->Type == ELF::PT_NOTE)
      for (Section *S : sectionsOfNote(Obj, *P)) {
        Expected<bool> Found = Read(*S);
        if (!Found || *Found)
          return Found.takeError();
      }
  for (const auto &S : Obj.sections()) {
    Expected<bool> Found = Read(*S);
    if (!Found || *Found)
      return Found.takeError();
  }
  return Error::success();
}

namespace {
/// A kernel descriptor symbol.
struct FoundKD {
  StringRef Name; // (the table keeps it)
  uint64_t Addr;
  Section *Sec;
  const char *Table;
};

/// The stubs of the pool sections, by address and by target.
class StubIndex {
public:
  StubIndex(const std::vector<PoolStub> &Stubs, const TargetInfo &T)
      : Stubs(Stubs), T(T) {
    for (size_t I = 0; I < Stubs.size(); ++I) {
      ByTarget[Stubs[I].Decoded.Target].Stubs.push_back(I);
      ByAddr[Stubs[I].Addr] = I;
    }
  }
  /// The stub at \p Addr, as kernel \p K uses it.
  std::optional<PoolStub> at(uint64_t Addr, const KernelInfo &K) const {
    auto It = ByAddr.find(Addr);
    if (It == ByAddr.end())
      return std::nullopt;
    return withDual(Stubs[It->second], K);
  }
  /// The first stub leading to \p Target that is not \p Taken (stub
  /// addresses), as kernel \p K would use it. A stub once taken stays
  /// taken: each target's stubs are passed over once in all (linear in
  /// the stubs when many kernels share code).
  std::optional<PoolStub> leadingTo(uint64_t Target, const KernelInfo &K,
                                    const DenseSet<uint64_t> &Taken) {
    auto It = ByTarget.find(Target);
    if (It == ByTarget.end())
      return std::nullopt;
    Candidates &C = It->second;
    while (C.Next < C.Stubs.size() && Taken.count(Stubs[C.Stubs[C.Next]].Addr))
      ++C.Next;
    if (C.Next == C.Stubs.size())
      return std::nullopt;
    return withDual(Stubs[C.Stubs[C.Next]], K);
  }
  bool isStub(uint64_t Addr) const { return ByAddr.count(Addr); }

private:
  /// A kernel that needs a dual stub uses slot I (-> T) and slot I+256
  /// (-> T+256).
  PoolStub withDual(PoolStub P, const KernelInfo &K) const {
    if (!K.needsDualStub(T))
      return P;
    auto Next = ByAddr.find(P.Addr + StubSlotSize);
    if (Next != ByAddr.end() &&
        Stubs[Next->second].Decoded.Target == P.Decoded.Target + StubSlotSize) {
      P.Dual = true;
      P.Decoded.HalfTarget2 = P.Decoded.Target + StubSlotSize;
    }
    return P;
  }
  const std::vector<PoolStub> &Stubs;
  const TargetInfo &T;
  /// The stubs leading to one target, in address order, and the first
  /// that may not be taken yet.
  struct Candidates {
    SmallVector<size_t, 1> Stubs;
    size_t Next = 0;
  };
  DenseMap<uint64_t, Candidates> ByTarget;
  DenseMap<uint64_t, size_t> ByAddr;
};
} // namespace

/// The `<name>.kd` object symbols of both tables, de-duplicated by name (one
/// name at two addresses is an error), in address order.
static Expected<std::vector<FoundKD>> descriptorSymbols(Object &Obj) {
  std::vector<FoundKD> KDs;
  StringMap<size_t> ByName;
  for (SymbolTable *T : {Obj.symtab(), Obj.dynsym()}) {
    if (!T)
      continue;
    const char *TableName = T == Obj.symtab() ? ".symtab" : ".dynsym";
    std::optional<std::string> Ambiguous;
    T->forEachOfType(ELF::STT_OBJECT, [&](const Symbol &S) {
      StringRef N = S.Name;
      if (Ambiguous || !N.ends_with(".kd") || N.size() == 3 || !S.Sec)
        return;
      auto [It, New] = ByName.try_emplace(N, KDs.size());
      if (New) {
        KDs.push_back({N, S.Value, S.Sec, TableName});
        return;
      }
      const FoundKD &Prev = KDs[It->second];
      if (Prev.Addr != S.Value)
        Ambiguous = ("kernel descriptor symbol '" + N +
                     "' is ambiguous: " + hex(Prev.Addr) + " in " + Prev.Table +
                     ", " + hex(S.Value) + " in " + TableName)
                        .str();
    });
    if (Ambiguous)
      return makeError(*Ambiguous);
  }
  llvm::sort(KDs, [](const FoundKD &A, const FoundKD &B) {
    return std::tie(A.Addr, A.Name) < std::tie(B.Addr, B.Name);
  });
  return KDs;
}

/// Reads the descriptor \p F names into \p K and where it enters, checking
/// both lie where passes can rewrite and the loader loads them.
static Error readDescriptor(const Object &Obj, const FoundKD &F,
                            KernelInfo &K) {
  K.KDSymbol = F.Name.str();
  K.Name = F.Name.drop_back(3).str();
  K.KDAddr = F.Addr;
  K.KDSection = F.Sec;
  // (Made only for a message: 100k kernels need none.)
  auto Who = [&K] { return "kernel '" + K.Name + "'"; };
  if (F.Addr % kd::Alignment != 0)
    return makeError(Who() + ": descriptor at " + hex(F.Addr) + " is not " +
                     Twine(kd::Alignment) + "-byte aligned");
  Expected<ArrayRef<uint8_t>> Bytes = Obj.bytesAt(F.Addr, kd::Size);
  if (!Bytes)
    return prefixError(Who() + ": descriptor", Bytes.takeError());
  // patch-descriptors writes through the symbol's section: it must hold
  // the very bytes read here (sections may overlap).
  const Section &KDSec = *F.Sec;
  if (!KDSec.isAlloc() || KDSec.isNoBits() || F.Addr < KDSec.Addr ||
      F.Addr - KDSec.Addr > KDSec.size() ||
      KDSec.size() - (F.Addr - KDSec.Addr) < kd::Size ||
      KDSec.contents().slice(F.Addr - KDSec.Addr, kd::Size).data() !=
          Bytes->data())
    return makeError(Who() + ": descriptor at " + hex(F.Addr) +
                     " is not inside its symbol's section '" + KDSec.Name +
                     "'");
  // (A linked object without program headers loads nothing.)
  if (!Obj.loadSegmentFor(F.Addr, kd::Size))
    return makeError(Who() + ": descriptor at " + hex(F.Addr) +
                     " is not inside a loaded segment");
  K.KD = KernelDescriptor::read(*Bytes);
  std::optional<uint64_t> Entry = K.KD.entryAddress(F.Addr);
  if (!Entry)
    return makeError(Who() + ": kernel_code_entry_byte_offset " +
                     Twine(K.KD.KernelCodeEntryByteOffset) +
                     " from descriptor at " + hex(F.Addr) + " overflows");
  K.Entry = *Entry;
  if (K.Entry % kd::EntryAlignment != 0)
    return makeError(Who() + ": entry " + hex(K.Entry) + " is not " +
                     Twine(kd::EntryAlignment) + "-byte aligned");
  Section *ES = Obj.sectionForAddress(K.Entry);
  if (!ES || !ES->isExec() || ES->isNoBits())
    return makeError(Who() + ": entry " + hex(K.Entry) +
                     " is not inside an executable section");
  if (!Obj.loadSegmentFor(K.Entry, 4))
    return makeError(Who() + ": entry " + hex(K.Entry) +
                     " is not inside a loaded segment");
  return Error::success();
}

/// Whether \p K enters through a stub (of a pool, or one another tool
/// wrote), and so where its own code is (pendingStubs pairs the others
/// with the pool stubs that lead to their code).
static Error findStubs(const Object &Obj, TargetAnalysis::Result &TA,
                       const StubIndex &Stubs, KernelInfo &K) {
  // (Made only for a message: 100k kernels need none.)
  auto Who = [&K] { return "kernel '" + K.Name + "'"; };
  K.EntryStub = Stubs.at(K.Entry, K);
  if (!K.EntryStub) {
    // A stub outside our pool sections (written by another tool). Only
    // bytes that start like one are decoded (decodeStub checks them
    // first), so MC is set up only for objects that have stubs.
    Expected<std::optional<PoolStub>> P =
        stubAtIfShaped(Obj, TA.info(), TA, K.Entry);
    if (!P)
      return P.takeError();
    if (*P && (*P)->Decoded.Target != K.Entry)
      K.EntryStub = **P;
  }
  if (!K.EntryStub) {
    K.CodeEntry = K.Entry;
    return Error::success();
  }
  K.CodeEntry = K.EntryStub->Decoded.Target;
  Section *CS = Obj.sectionForAddress(K.CodeEntry);
  if (!CS || !CS->isExec())
    return makeError(Who() + ": stub at " + hex(K.Entry) + " leads to " +
                     hex(K.CodeEntry) + ", outside executable code");
  if (Stubs.isStub(K.CodeEntry))
    return makeError(Who() + ": stub at " + hex(K.Entry) +
                     " leads to another stub at " + hex(K.CodeEntry));
  return Error::success();
}

namespace {
/// The input bytes read at the kernels' entries, handed back a 2 MiB block
/// at a time (Object::releaseInput) as the entries move on: a Tensile
/// object's 14k entries lie 18 KiB apart in 250 MB of code, and reading
/// a word at each mapped nearly all of it (the page cache maps whole
/// folios around a touched page), 250 MiB of peak memory for 56 KiB read.
class EntryPages {
public:
  explicit EntryPages(const Object &Obj) : Obj(Obj) {}
  ~EntryPages() { flush(); }
  void read(uint64_t Addr) {
    std::optional<ArrayRef<uint8_t>> B = Obj.bytesIfAt(Addr, StubSlotSize);
    if (!B)
      return;
    const auto P = reinterpret_cast<uintptr_t>(B->data());
    if (Lo != Hi && P / Block != Lo / Block) // another block: done with it
      flush();
    Lo = Lo == Hi ? P : std::min(Lo, P);
    Hi = std::max(Hi, P + B->size());
  }
  void flush() {
    if (Lo != Hi)
      Obj.releaseInput(
          ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Lo), Hi - Lo));
    Lo = Hi = 0;
  }

private:
  static constexpr uintptr_t Block = 2u << 20;
  const Object &Obj;
  uintptr_t Lo = 0, Hi = 0;
};
} // namespace

/// Pairs each kernel not entered through a stub with a pool stub leading
/// to its code that no kernel uses yet: kernels that share code, in address
/// order, take such stubs in address order -- the order synth-trampolines
/// writes them in, one per kernel.
static void pendingStubs(std::vector<KernelInfo> &Kernels, StubIndex &Stubs) {
  DenseSet<uint64_t> Taken;
  for (const KernelInfo &K : Kernels)
    if (K.EntryStub)
      Taken.insert(K.EntryStub->Addr);
  for (KernelInfo &K : Kernels) {
    if (K.EntryStub)
      continue;
    K.PendingStub = Stubs.leadingTo(K.Entry, K, Taken);
    if (K.PendingStub)
      Taken.insert(K.PendingStub->Addr);
  }
}

/// Whether the object's note sections are large enough (1 MiB) that
/// parsing them on another thread is worth a task.
static bool notesAreLarge(const Object &Obj) {
  uint64_t Size = 0;
  for (const auto &S : Obj.sections())
    if (S->Type == ELF::SHT_NOTE && !S->isNoBits())
      Size += S->size();
  return Size >= (1u << 20);
}

/// Every kernel of \p Obj into \p R.Kernels (but for its metadata) and
/// the stubs of its pools into \p R.PoolStubs.
static Error readKernels(Object &Obj, TargetAnalysis::Result &TA,
                         KernelsAnalysis::Result &R) {
  Expected<std::vector<FoundKD>> KDs = descriptorSymbols(Obj);
  if (!KDs)
    return KDs.takeError();
  Expected<std::vector<PoolStub>> Pools = scanPools(Obj, R.Target, TA);
  if (!Pools)
    return Pools.takeError();
  R.PoolStubs = std::move(*Pools);
  StubIndex Stubs(R.PoolStubs, R.Target);

  R.Kernels.reserve(KDs->size());
  EntryPages Entries(Obj);
  for (const FoundKD &F : *KDs) {
    KernelInfo K;
    if (Error E = readDescriptor(Obj, F, K))
      return E;
    if (Error E = findStubs(Obj, TA, Stubs, K))
      return E;
    Entries.read(K.Entry);
    K.deriveSGPRs(R.Target);
    R.Kernels.push_back(std::move(K));
  }
  pendingStubs(R.Kernels, Stubs);
  return Error::success();
}

Expected<KernelsAnalysis::Result> KernelsAnalysis::run(Object &Obj,
                                                       AnalysisManager &AM) {
  Result R;
  auto TA = AM.getResult<TargetAnalysis>(Obj);
  if (!TA)
    return TA.takeError();
  R.Target = TA->info();
  if (Obj.Header.Type == ELF::ET_REL)
    return makeError("relocatable object (ET_REL): kernel descriptors "
                     "are not resolved before linking; link it with "
                     "'ld.lld -shared' first");
  // The metadata note (106 MB on a 100k-kernel object) is parsed on another
  // thread, when one is free, while the descriptors and stubs are read. Its
  // errors come first, as they would if it were read first.
  EarlyJob Metadata(notesAreLarge(Obj) ? AM.ThreadPool : nullptr,
                    [&Obj, &R] { return readMetadata(Obj, R); });
  Error Kernels = readKernels(Obj, *TA, R);
  if (Error E = Metadata.get()) {
    consumeError(std::move(Kernels));
    return std::move(E);
  }
  if (Kernels)
    return std::move(Kernels);
  if (R.Metadata)
    for (KernelInfo &K : R.Kernels)
      K.MD = R.Metadata->findBySymbol(K.KDSymbol);
  return std::move(R);
}

void KernelsAnalysis::Result::addStub(size_t Kernel, Section &Pool,
                                      const StubSpec &Spec,
                                      uint64_t PrologueSize) {
  // Each slot as decoding it would find it (the verifier decodes the
  // bytes themselves).
  auto Slot = [&](uint64_t Addr, uint64_t Target) {
    PoolStub P;
    P.Addr = Addr;
    P.Sec = &Pool;
    P.Decoded.Form = Spec.Form;
    P.Decoded.Target = Target;
    P.Decoded.SGPR = Spec.Form == StubSpec::SGPRPair ? Spec.SGPR : 0;
    P.Decoded.BodySize = Spec.Form == StubSpec::Short
                             ? StubEncoder::ShortBodySize
                             : StubEncoder::LongBodySize;
    P.Decoded.PrologueSize = PrologueSize;
    return P;
  };
  PoolStub First = Slot(Spec.StubAddr, Spec.Target);
  PoolStubs.push_back(First);
  if (Spec.Dual) {
    PoolStubs.push_back(
        Slot(Spec.StubAddr + StubSlotSize, Spec.Target + StubSlotSize));
    First.Dual = true;
    First.Decoded.HalfTarget2 = Spec.Target + StubSlotSize;
  }
  Kernels[Kernel].PendingStub = First;
}

bool KernelsAnalysis::Result::enterPendingStub(size_t Kernel) {
  KernelInfo &K = Kernels[Kernel];
  K.KD = KernelDescriptor::read(
      K.KDSection->contents().slice(K.KDAddr - K.KDSection->Addr, kd::Size));
  std::optional<uint64_t> Entry = K.KD.entryAddress(K.KDAddr);
  if (!K.PendingStub || !Entry || *Entry != K.PendingStub->Addr)
    return false;
  K.Entry = *Entry;
  K.EntryStub = std::move(K.PendingStub);
  K.PendingStub.reset();
  K.deriveSGPRs(Target);
  return true;
}
