//===- lib/Passes/Kernels.cpp - The kernels analysis ----------------------===//

#include "hotswap/Passes/Kernels.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Passes/TargetAnalysis.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

AnalysisKey KernelsAnalysis::Key;

bool KernelInfo::canRefineSGPRs(const TargetInfo &TI) const {
  // LLVM 22 has no disassembler for gfx6/gfx7.
  return TI.HasSGPRGranule && !NumberedSGPR && !ScannedSGPRs &&
         TI.Gen != Generation::GFX6 && TI.Gen != Generation::GFX7;
}

bool KernelInfo::needsDualStub(const TargetInfo &TI) const {
  return TI.PreloadSkipsPrologue && KD.kernargPreloadLength() != 0;
}

void KernelInfo::deriveSGPRUse(const TargetInfo &T) {
  LiveInSGPRs = KD.liveInSGPRs(T);
  if (NumberedSGPR) {
    UsedSGPRs = static_cast<unsigned>(*NumberedSGPR);
    UsedSGPRSource = "numbered_sgpr";
  } else if (ScannedSGPRs && *ScannedSGPRs) {
    UsedSGPRs = **ScannedSGPRs;
    UsedSGPRSource = "code-scan";
  } else if (MD && MD->SGPRCount && *MD->SGPRCount <= 1024) {
    UsedSGPRs = static_cast<unsigned>(*MD->SGPRCount);
    UsedSGPRSource = "metadata";
  } else if (T.HasSGPRGranule) {
    UsedSGPRs = KD.allocatedSGPRs(T).value_or(T.AddressableSGPRs);
    UsedSGPRSource = "granule";
  } else {
    UsedSGPRs = T.AddressableSGPRs;
    UsedSGPRSource = "addressable";
  }
  UsedSGPRs = std::max(UsedSGPRs, LiveInSGPRs);
  ReservedTopSGPRs = 0;
  if (!T.HasSGPRGranule)
    return;
  // `.sgpr_count` = SGPRs in use + specials. With an exact count of the
  // former, the difference is the specials; a count below what the
  // metadata implies (more than the worst-case specials) is raised.
  ReservedTopSGPRs = T.SGPRGranuleExtra;
  bool Exact =
      UsedSGPRSource == "numbered_sgpr" || UsedSGPRSource == "code-scan";
  if (!Exact || !MD || !MD->SGPRCount || *MD->SGPRCount > 1024)
    return;
  unsigned Count = static_cast<unsigned>(*MD->SGPRCount);
  if (Count > T.SGPRGranuleExtra)
    UsedSGPRs = std::max(UsedSGPRs, Count - T.SGPRGranuleExtra);
  unsigned Below = UsedSGPRs;
  // patch-descriptors raised the count to cover the scratch pair of the stub
  // the kernel is entered through (not yet for a pending stub).
  if (EntryStub && EntryStub->Decoded.Form == StubSpec::SGPRPair)
    Below = std::max(Below, EntryStub->Decoded.SGPR + 2);
  ReservedTopSGPRs =
      std::min(T.SGPRGranuleExtra, Count > Below ? Count - Below : 0);
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
  Expected<ArrayRef<uint8_t>> Slot = Obj.bytesAt(Addr, StubSlotSize);
  if (!Slot) {
    consumeError(Slot.takeError());
    return std::nullopt;
  }
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
  std::vector<PoolStub> Out;
  for (const auto &SP : Obj.sections()) {
    const Section &S = *SP;
    if (S.Name != PoolSectionName || !S.isExec() || S.isNoBits())
      continue;
    if (S.Addr % StubSlotSize != 0)
      continue;
    Expected<TargetMC &> MC = TA.mc();
    if (!MC)
      return MC.takeError();
    for (uint64_t Off = 0; Off + StubSlotSize <= S.size();
         Off += StubSlotSize) {
      Expected<std::optional<PoolStub>> P =
          stubAt(Obj, TI, *MC, S.Addr + Off, /*AnyPrologue=*/true);
      if (!P)
        return P.takeError();
      if (*P)
        Out.push_back(**P);
    }
  }
  return Out;
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

  // Metadata: the NT_AMDGPU_METADATA notes of the first note section with any.
  for (const auto &S : Obj.sections()) {
    if (S->Type != ELF::SHT_NOTE || S->isNoBits())
      continue;
    Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(S->contents());
    if (!MD)
      return makeError("section '" + S->Name +
                       "': " + toString(MD.takeError()));
    if (!MD->hasMetadata())
      continue;
    R.Metadata.emplace(std::move(*MD));
    R.MetadataSection = S.get();
    break;
  }

  // Kernel descriptor symbols of both tables, de-duplicated.
  struct Found {
    std::string Name;
    uint64_t Addr;
    Section *Sec;
    const char *Table;
  };
  std::vector<Found> KDs;
  StringMap<size_t> ByName;
  StringMap<uint64_t> NumberedSGPR;
  StringMap<std::pair<uint64_t, uint64_t>> Functions; // name -> value, size
  // `<kernel>.swap` symbols (swap-kernels): kernel -> (value, size) of each.
  StringMap<SmallVector<std::pair<uint64_t, uint64_t>, 1>> Swaps;
  for (SymbolTable *T : {Obj.symtab(), Obj.dynsym()}) {
    if (!T)
      continue;
    const char *TableName = T == Obj.symtab() ? ".symtab" : ".dynsym";
    for (const Symbol &S : T->symbols()) {
      StringRef N = S.Name;
      if (N.ends_with(".numbered_sgpr") && S.Shndx == ELF::SHN_ABS) {
        NumberedSGPR[N.drop_back(strlen(".numbered_sgpr"))] = S.Value;
        continue;
      }
      if (S.Type == ELF::STT_FUNC && S.Sec && S.Size)
        Functions.try_emplace(N, S.Value, S.Size);
      if (S.Type == ELF::STT_FUNC && S.Sec && N.ends_with(".swap"))
        Swaps[N.drop_back(strlen(".swap"))].push_back({S.Value, S.Size});
      if (!N.ends_with(".kd") || N.size() == 3)
        continue;
      if (S.Type != ELF::STT_OBJECT || !S.Sec)
        continue;
      auto [It, New] = ByName.try_emplace(N, KDs.size());
      if (New) {
        KDs.push_back({N.str(), S.Value, S.Sec, TableName});
        continue;
      }
      const Found &Prev = KDs[It->second];
      if (Prev.Addr != S.Value)
        return makeError("kernel descriptor symbol '" + N +
                         "' is ambiguous: " + hex(Prev.Addr) + " in " +
                         Prev.Table + ", " + hex(S.Value) + " in " + TableName);
    }
  }
  llvm::sort(KDs, [](const Found &A, const Found &B) {
    return std::tie(A.Addr, A.Name) < std::tie(B.Addr, B.Name);
  });

  Expected<std::vector<PoolStub>> Pools = scanPools(Obj, R.Target, *TA);
  if (!Pools)
    return Pools.takeError();
  R.PoolStubs = std::move(*Pools);
  DenseMap<uint64_t, size_t> StubByTarget, StubByAddr;
  for (size_t I = 0; I < R.PoolStubs.size(); ++I) {
    StubByTarget.try_emplace(R.PoolStubs[I].Decoded.Target, I);
    StubByAddr[R.PoolStubs[I].Addr] = I;
  }
  // A kernel that needs a dual stub uses slot I (-> T) and slot I+256
  // (-> T+256).
  auto WithDual = [&](PoolStub P, const KernelInfo &K) {
    if (!K.needsDualStub(R.Target))
      return P;
    auto Next = StubByAddr.find(P.Addr + StubSlotSize);
    if (Next != StubByAddr.end() && R.PoolStubs[Next->second].Decoded.Target ==
                                        P.Decoded.Target + StubSlotSize) {
      P.Dual = true;
      P.Decoded.HalfTarget2 = P.Decoded.Target + StubSlotSize;
    }
    return P;
  };

  const TargetInfo &T = R.Target;
  R.Kernels.reserve(KDs.size());
  for (const Found &F : KDs) {
    KernelInfo K;
    K.KDSymbol = F.Name;
    K.Name = StringRef(F.Name).drop_back(3).str();
    K.KDAddr = F.Addr;
    K.KDSection = F.Sec;
    std::string Who = "kernel '" + K.Name + "'";
    if (F.Addr % kd::Alignment != 0)
      return makeError(Who + ": descriptor at " + hex(F.Addr) + " is not " +
                       Twine(kd::Alignment) + "-byte aligned");
    Expected<ArrayRef<uint8_t>> Bytes = Obj.bytesAt(F.Addr, kd::Size);
    if (!Bytes)
      return makeError(Who + ": descriptor: " + toString(Bytes.takeError()));
    // patch-descriptors writes through the symbol's section: it must hold
    // the very bytes read here (sections may overlap).
    const Section &KDSec = *F.Sec;
    if (!KDSec.isAlloc() || KDSec.isNoBits() || F.Addr < KDSec.Addr ||
        F.Addr - KDSec.Addr > KDSec.size() ||
        KDSec.size() - (F.Addr - KDSec.Addr) < kd::Size ||
        KDSec.contents().slice(F.Addr - KDSec.Addr, kd::Size).data() !=
            Bytes->data())
      return makeError(Who + ": descriptor at " + hex(F.Addr) +
                       " is not inside its symbol's section '" + KDSec.Name +
                       "'");
    if (!Obj.segments().empty() && !Obj.loadSegmentFor(F.Addr, kd::Size))
      return makeError(Who + ": descriptor at " + hex(F.Addr) +
                       " is not inside a loaded segment");
    K.KD = KernelDescriptor::read(*Bytes);
    std::optional<uint64_t> Entry = K.KD.entryAddress(F.Addr);
    if (!Entry)
      return makeError(Who + ": kernel_code_entry_byte_offset " +
                       Twine(K.KD.KernelCodeEntryByteOffset) +
                       " from descriptor at " + hex(F.Addr) + " overflows");
    K.Entry = *Entry;
    if (K.Entry % kd::EntryAlignment != 0)
      return makeError(Who + ": entry " + hex(K.Entry) + " is not " +
                       Twine(kd::EntryAlignment) + "-byte aligned");
    Section *ES = Obj.sectionForAddress(K.Entry);
    if (!ES || !ES->isExec() || ES->isNoBits())
      return makeError(Who + ": entry " + hex(K.Entry) +
                       " is not inside an executable section");
    if (!Obj.segments().empty() && !Obj.loadSegmentFor(K.Entry, 4))
      return makeError(Who + ": entry " + hex(K.Entry) +
                       " is not inside a loaded segment");

    auto SI = StubByAddr.find(K.Entry);
    if (SI != StubByAddr.end()) {
      K.EntryStub = WithDual(R.PoolStubs[SI->second], K);
    } else {
      // A stub outside our pool sections (written by another tool). Only
      // bytes that start like one are decoded (decodeStub checks them
      // first), so MC is set up only for objects that have stubs.
      Expected<std::optional<PoolStub>> P =
          stubAtIfShaped(Obj, T, *TA, K.Entry);
      if (!P)
        return P.takeError();
      if (*P && (*P)->Decoded.Target != K.Entry)
        K.EntryStub = **P;
    }
    if (K.EntryStub) {
      K.CodeEntry = K.EntryStub->Decoded.Target;
      Section *CS = Obj.sectionForAddress(K.CodeEntry);
      if (!CS || !CS->isExec())
        return makeError(Who + ": stub at " + hex(K.Entry) + " leads to " +
                         hex(K.CodeEntry) + ", outside executable code");
      if (StubByAddr.count(K.CodeEntry))
        return makeError(Who + ": stub at " + hex(K.Entry) +
                         " leads to another stub at " + hex(K.CodeEntry));
    } else {
      K.CodeEntry = K.Entry;
      auto PI = StubByTarget.find(K.Entry);
      if (PI != StubByTarget.end())
        K.PendingStub = WithDual(R.PoolStubs[PI->second], K);
    }

    if (R.Metadata)
      if (const KernelMD *MD = R.Metadata->findBySymbol(K.KDSymbol))
        K.MD = *MD;
    auto NI = NumberedSGPR.find(K.Name);
    if (NI != NumberedSGPR.end() && NI->second <= 1024)
      K.NumberedSGPR = NI->second;

    auto FI = Functions.find(K.Name);
    if (FI != Functions.end() && FI->second.first == K.CodeEntry)
      K.Function = FI->second;
    // A swapped kernel runs the code its `<name>.swap` symbol names; the
    // `<name>.numbered_sgpr` symbol describes the code it replaced.
    auto SW = Swaps.find(K.Name);
    if (SW != Swaps.end())
      for (auto [Value, Size] : SW->second)
        if (Value == K.CodeEntry) {
          K.NumberedSGPR.reset();
          K.Function.reset();
          if (Size)
            K.Function = std::make_pair(Value, Size);
        }
    K.deriveSGPRUse(T);
    R.Kernels.push_back(std::move(K));
  }
  return std::move(R);
}
