//===- lib/Passes/Kernels.cpp - The kernels analysis ----------------------===//

#include "hotswap/Passes/Kernels.h"
#include "hotswap/Support/Format.h"

#include "hotswap/AMDGPU/SGPRScan.h"
#include "hotswap/AMDGPU/TargetMC.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

AnalysisKey KernelsAnalysis::Key;


bool KernelInfo::needsDualStub(const TargetInfo &TI) const {
  return TI.PreloadSkipsPrologue && KD.kernargPreloadLength() != 0;
}

void KernelInfo::deriveSGPRUse(const TargetInfo &T) {
  LiveInSGPRs = KD.liveInSGPRs(T);
  if (NumberedSGPR) {
    UsedSGPRs = static_cast<unsigned>(*NumberedSGPR);
    UsedSGPRSource = "numbered_sgpr";
  } else if (ScannedSGPRs) {
    UsedSGPRs = *ScannedSGPRs;
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
  bool Exact = UsedSGPRSource == "numbered_sgpr" || UsedSGPRSource == "code-scan";
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

static StringRef stubFormName(const DecodedStub &D) {
  switch (D.Form) {
  case StubSpec::Short:
    return "s_branch";
  case StubSpec::SGPRPair:
    return "long";
  case StubSpec::VCC:
    return "long/vcc";
  }
  return "?";
}

/// Decodes a stub slot. With \p AnyPrologue, the jump may follow any
/// sequence of valid instructions (a prologue of up to 128 bytes).
static Expected<std::optional<DecodedStub>>
decodeSlot(const TargetInfo &TI, ArrayRef<uint8_t> Slot, uint64_t Addr,
           bool AnyPrologue) {
  Expected<std::optional<DecodedStub>> D = decodeStub(TI, Slot, Addr, {});
  if (!D || *D || !AnyPrologue)
    return D;
  Expected<TargetMC &> MC = TargetMC::get(TI.MCPU, TI.Features);
  if (!MC)
    return MC.takeError();
  uint64_t Off = 0;
  while (Off < 128) {
    std::optional<DecodedInst> I = MC->decodeOne(Slot.drop_front(Off), Addr + Off);
    if (!I || I->Size == 0)
      return std::nullopt;
    Off += I->Size;
    Expected<std::optional<DecodedStub>> W =
        decodeStub(TI, Slot, Addr, Slot.take_front(Off));
    if (!W || *W)
      return W;
  }
  return std::nullopt;
}

/// Decodes the stub at \p Addr if there is one.
static Expected<std::optional<PoolStub>> stubAt(const Object &Obj,
                                                const TargetInfo &TI,
                                                uint64_t Addr,
                                                bool AnyPrologue) {
  Section *S = Obj.sectionForAddress(Addr);
  if (!S || !S->isExec() || S->isNoBits())
    return std::nullopt;
  uint64_t Rel = Addr - S->Addr;
  ArrayRef<uint8_t> Bytes = S->contents().drop_front(Rel);
  if (Bytes.size() < StubSlotSize)
    return std::nullopt;
  Expected<std::optional<DecodedStub>> D =
      decodeSlot(TI, Bytes.take_front(StubSlotSize), Addr, AnyPrologue);
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

/// Every stub slot of the pool sections. Whether two slots form a dual stub
/// is decided per kernel (only a kernarg-preload kernel has one), never from
/// adjacency alone: two kernels 256 bytes apart look the same.
static Expected<std::vector<PoolStub>> scanPools(const Object &Obj,
                                                 const TargetInfo &TI) {
  std::vector<PoolStub> Out;
  for (const auto &SP : Obj.Sections) {
    const Section &S = *SP;
    if (S.Name != PoolSectionName || !S.isExec() || S.isNoBits())
      continue;
    if (S.Addr % StubSlotSize != 0)
      continue;
    for (uint64_t Off = 0; Off + StubSlotSize <= S.size();
         Off += StubSlotSize) {
      Expected<std::optional<PoolStub>> P =
          stubAt(Obj, TI, S.Addr + Off, /*AnyPrologue=*/true);
      if (!P)
        return P.takeError();
      if (*P)
        Out.push_back(**P);
    }
  }
  return Out;
}

/// gfx6-9 without `.numbered_sgpr`: the exact count of SGPRs the kernel's
/// code names, from a scan of its function (of all executable code when it
/// calls). nullopt when it cannot be known (no disassembler, s_movrel).
static Expected<std::optional<unsigned>>
scanKernelSGPRs(const Object &Obj, const TargetInfo &T, const KernelInfo &K,
                const StringMap<std::pair<uint64_t, uint64_t>> &Functions,
                std::optional<std::optional<unsigned>> &WholeCode) {
  if (T.Gen == Generation::GFX6 || T.Gen == Generation::GFX7)
    return std::nullopt;
  auto scanAll = [&]() -> Expected<std::optional<unsigned>> {
    if (WholeCode)
      return *WholeCode;
    unsigned Max = 0;
    for (const auto &S : Obj.Sections) {
      if (!S->isExec() || S->isNoBits() || S->Name == PoolSectionName)
        continue;
      Expected<SGPRScan> R = scanSGPRs(T, S->contents(), S->Addr);
      if (!R)
        return R.takeError();
      // Words that are not instructions (or s_movrel's M0 indexing) leave
      // the count unknown: fall back to the metadata.
      if (R->IndexesSGPRs || R->UndecodedWords) {
        WholeCode = std::optional<unsigned>();
        return *WholeCode;
      }
      Max = std::max(Max, R->NumSGPRs);
    }
    WholeCode = std::optional<unsigned>(Max);
    return *WholeCode;
  };
  auto F = Functions.find(K.Name);
  if (F == Functions.end() || F->second.first != K.CodeEntry)
    return scanAll();
  Expected<ArrayRef<uint8_t>> Code = Obj.bytesAt(F->second.first, F->second.second);
  if (!Code) {
    consumeError(Code.takeError());
    return scanAll();
  }
  Expected<SGPRScan> R = scanSGPRs(T, *Code, F->second.first);
  if (!R)
    return R.takeError();
  if (R->IndexesSGPRs || R->UndecodedWords)
    return std::nullopt;
  if (R->HasCalls)
    return scanAll();
  return std::optional<unsigned>(R->NumSGPRs);
}

Expected<KernelsAnalysis::Result> KernelsAnalysis::run(Object &Obj,
                                                       AnalysisManager &AM) {
  Result R;
  Expected<TargetInfo> TI =
      getTargetInfo(Obj.Header.Flags, Obj.Header.osABI(), Obj.Header.abiVersion());
  if (!TI)
    return TI.takeError();
  R.Target = std::move(*TI);
  if (Obj.Header.Type == ELF::ET_REL)
    return createStringError("relocatable object (ET_REL): kernel descriptors "
                             "are not resolved before linking; link it with "
                             "'ld.lld -shared' first");

  // Metadata: the NT_AMDGPU_METADATA notes of the first note section with any.
  for (const auto &S : Obj.Sections) {
    if (S->Type != ELF::SHT_NOTE || S->isNoBits())
      continue;
    Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(S->contents());
    if (!MD)
      return createStringError("section '" + S->Name + "': " +
                               toString(MD.takeError()));
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
  for (SymbolTable *T : {Obj.symtab(), Obj.dynsym()}) {
    if (!T)
      continue;
    const char *TableName = T == Obj.symtab() ? ".symtab" : ".dynsym";
    for (const Symbol &S : T->Symbols) {
      StringRef N = S.Name;
      if (N.ends_with(".numbered_sgpr") && S.Shndx == ELF::SHN_ABS) {
        NumberedSGPR[N.drop_back(strlen(".numbered_sgpr"))] = S.Value;
        continue;
      }
      if (S.Type == ELF::STT_FUNC && S.Sec && S.Size)
        Functions.try_emplace(N, S.Value, S.Size);
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
        return createStringError(
            "kernel descriptor symbol '" + N + "' is ambiguous: " +
            hex(Prev.Addr) + " in " + Prev.Table + ", " + hex(S.Value) +
            " in " + TableName);
    }
  }
  llvm::sort(KDs, [](const Found &A, const Found &B) {
    return std::tie(A.Addr, A.Name) < std::tie(B.Addr, B.Name);
  });

  Expected<std::vector<PoolStub>> Pools = scanPools(Obj, R.Target);
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
  auto withDual = [&](PoolStub P, const KernelInfo &K) {
    if (!K.needsDualStub(R.Target))
      return P;
    auto Next = StubByAddr.find(P.Addr + StubSlotSize);
    if (Next != StubByAddr.end() &&
        R.PoolStubs[Next->second].Decoded.Target ==
            P.Decoded.Target + StubSlotSize) {
      P.Dual = true;
      P.Decoded.HalfTarget2 = P.Decoded.Target + StubSlotSize;
    }
    return P;
  };

  const TargetInfo &T = R.Target;
  std::optional<std::optional<unsigned>> WholeCodeScan;
  for (const Found &F : KDs) {
    KernelInfo K;
    K.KDSymbol = F.Name;
    K.Name = StringRef(F.Name).drop_back(3).str();
    K.KDAddr = F.Addr;
    K.KDSection = F.Sec;
    std::string Who = "kernel '" + K.Name + "'";
    if (F.Addr % 64 != 0)
      return createStringError(Who + ": descriptor at " + hex(F.Addr) +
                               " is not 64-byte aligned");
    Expected<ArrayRef<uint8_t>> Bytes = Obj.bytesAt(F.Addr, 64);
    if (!Bytes)
      return createStringError(Who + ": descriptor: " +
                               toString(Bytes.takeError()));
    // patch-descriptors writes through the symbol's section: it must hold
    // the very bytes read here (sections may overlap).
    const Section &KDSec = *F.Sec;
    if (!KDSec.isAlloc() || KDSec.isNoBits() || F.Addr < KDSec.Addr ||
        F.Addr - KDSec.Addr > KDSec.size() ||
        KDSec.size() - (F.Addr - KDSec.Addr) < 64 ||
        KDSec.contents().slice(F.Addr - KDSec.Addr, 64).data() !=
            Bytes->data())
      return createStringError(Who + ": descriptor at " + hex(F.Addr) +
                               " is not inside its symbol's section '" +
                               KDSec.Name + "'");
    if (!Obj.Segments.empty() && !Obj.loadSegmentFor(F.Addr, 64))
      return createStringError(Who + ": descriptor at " + hex(F.Addr) +
                               " is not inside a loaded segment");
    K.KD = KernelDescriptor::read(*Bytes);
    std::optional<uint64_t> Entry = K.KD.entryAddress(F.Addr);
    if (!Entry)
      return createStringError(
          Who + ": kernel_code_entry_byte_offset " +
          Twine(K.KD.KernelCodeEntryByteOffset) + " from descriptor at " +
          hex(F.Addr) + " overflows");
    K.Entry = *Entry;
    if (K.Entry % 256 != 0)
      return createStringError(Who + ": entry " + hex(K.Entry) +
                               " is not 256-byte aligned");
    Section *ES = Obj.sectionForAddress(K.Entry);
    if (!ES || !ES->isExec() || ES->isNoBits())
      return createStringError(Who + ": entry " + hex(K.Entry) +
                               " is not inside an executable section");
    if (!Obj.Segments.empty() && !Obj.loadSegmentFor(K.Entry, 4))
      return createStringError(Who + ": entry " + hex(K.Entry) +
                               " is not inside a loaded segment");

    auto SI = StubByAddr.find(K.Entry);
    if (SI != StubByAddr.end()) {
      K.EntryStub = withDual(R.PoolStubs[SI->second], K);
    } else {
      // A stub outside our pool sections (written by another tool).
      Expected<std::optional<PoolStub>> P = stubAt(Obj, T, K.Entry, /*AnyPrologue=*/false);
      if (!P)
        return P.takeError();
      if (*P && (*P)->Decoded.Target != K.Entry)
        K.EntryStub = **P;
    }
    if (K.EntryStub) {
      K.CodeEntry = K.EntryStub->Decoded.Target;
      Section *CS = Obj.sectionForAddress(K.CodeEntry);
      if (!CS || !CS->isExec())
        return createStringError(Who + ": stub at " + hex(K.Entry) +
                                 " leads to " + hex(K.CodeEntry) +
                                 ", outside executable code");
      if (StubByAddr.count(K.CodeEntry))
        return createStringError(Who + ": stub at " + hex(K.Entry) +
                                 " leads to another stub at " +
                                 hex(K.CodeEntry));
    } else {
      K.CodeEntry = K.Entry;
      auto PI = StubByTarget.find(K.Entry);
      if (PI != StubByTarget.end())
        K.PendingStub = withDual(R.PoolStubs[PI->second], K);
    }

    if (R.Metadata)
      if (const KernelMD *MD = R.Metadata->findBySymbol(K.KDSymbol))
        K.MD = *MD;
    auto NI = NumberedSGPR.find(K.Name);
    if (NI != NumberedSGPR.end() && NI->second <= 1024)
      K.NumberedSGPR = NI->second;

    if (!K.NumberedSGPR && T.HasSGPRGranule) {
      Expected<std::optional<unsigned>> S =
          scanKernelSGPRs(Obj, T, K, Functions, WholeCodeScan);
      if (!S)
        return S.takeError();
      K.ScannedSGPRs = *S;
    }
    K.deriveSGPRUse(T);
    R.Kernels.push_back(std::move(K));
  }
  return std::move(R);
}

void KernelsAnalysis::print(const Result &R, const Object &Obj,
                            raw_ostream &OS, bool JSON) {
  const TargetInfo &T = R.Target;
  if (JSON) {
    json::Array Ks;
    for (const KernelInfo &K : R.Kernels) {
      json::Object O{{"name", K.Name},
                     {"descriptor", K.KDSymbol},
                     {"descriptor_address", static_cast<int64_t>(K.KDAddr)},
                     {"entry", static_cast<int64_t>(K.Entry)},
                     {"code_entry", static_cast<int64_t>(K.CodeEntry)},
                     {"live_in_sgprs", K.LiveInSGPRs},
                     {"used_sgprs", K.UsedSGPRs},
                     {"used_sgprs_source", K.UsedSGPRSource},
                     {"kernarg_preload_length", K.KD.kernargPreloadLength()},
                     {"wave32", K.KD.isWave32()}};
      auto stubJSON = [](const PoolStub &P) {
        json::Object S{{"address", static_cast<int64_t>(P.Addr)},
                       {"target", static_cast<int64_t>(P.Decoded.Target)},
                       {"form", stubFormName(P.Decoded)},
                       {"dual", P.Dual}};
        if (P.Decoded.Form == StubSpec::SGPRPair)
          S["sgpr"] = P.Decoded.SGPR;
        if (P.Decoded.PrologueSize)
          S["prologue_size"] = static_cast<int64_t>(P.Decoded.PrologueSize);
        return S;
      };
      if (K.EntryStub)
        O["stub"] = stubJSON(*K.EntryStub);
      if (K.PendingStub)
        O["pending_stub"] = stubJSON(*K.PendingStub);
      if (K.MD) {
        json::Object M;
        if (K.MD->SGPRCount)
          M["sgpr_count"] = static_cast<int64_t>(*K.MD->SGPRCount);
        if (K.MD->VGPRCount)
          M["vgpr_count"] = static_cast<int64_t>(*K.MD->VGPRCount);
        if (K.MD->KernargSegmentSize)
          M["kernarg_segment_size"] =
              static_cast<int64_t>(*K.MD->KernargSegmentSize);
        if (K.MD->WavefrontSize)
          M["wavefront_size"] = static_cast<int64_t>(*K.MD->WavefrontSize);
        O["metadata"] = std::move(M);
      }
      Ks.push_back(std::move(O));
    }
    json::Object Root{{"target", T.targetID()},
                      {"processor", T.Name},
                      {"code_object_version", T.CodeObjectVersion},
                      {"pool_stub_slots", static_cast<int64_t>(R.PoolStubs.size())},
                      {"kernels", std::move(Ks)}};
    OS << formatv("{0:2}", json::Value(std::move(Root))) << "\n";
    return;
  }
  size_t Stubbed = 0;
  for (const KernelInfo &K : R.Kernels)
    Stubbed += K.hasStub();
  OS << "target: " << T.targetID() << " (" << generationName(T.Gen)
     << ", code object v" << T.CodeObjectVersion << ")\n";
  OS << "kernels: " << R.Kernels.size() << " (" << Stubbed
     << " entered through a stub)\n";
  for (const KernelInfo &K : R.Kernels) {
    OS << "kernel '" << K.Name << "'\n";
    OS << "  descriptor:  " << K.KDSymbol << " at " << hex(K.KDAddr) << "\n";
    OS << "  entry:       " << hex(K.Entry);
    if (K.EntryStub)
      OS << " (stub: " << stubFormName(K.EntryStub->Decoded)
         << (K.EntryStub->Dual ? ", dual" : "") << " -> "
         << hex(K.EntryStub->Decoded.Target) << ")";
    OS << "\n";
    if (K.PendingStub)
      OS << "  pool stub:   " << hex(K.PendingStub->Addr)
         << " (descriptor not yet patched)\n";
    OS << "  sgprs:       live-in " << K.LiveInSGPRs << ", used "
       << K.UsedSGPRs << " (" << K.UsedSGPRSource << ")\n";
    OS << "  rsrc1/2/3:   " << format_hex(K.KD.ComputePgmRsrc1, 10) << " "
       << format_hex(K.KD.ComputePgmRsrc2, 10) << " "
       << format_hex(K.KD.ComputePgmRsrc3, 10) << "\n";
    OS << "  properties:  " << format_hex(K.KD.KernelCodeProperties, 6)
       << (K.KD.isWave32() ? " wave32" : " wave64");
    if (unsigned L = K.KD.kernargPreloadLength())
      OS << ", kernarg preload " << L << " dwords";
    if (T.InstPrefWidth)
      OS << ", inst_pref_size " << K.KD.instPrefSize(T);
    OS << "\n";
    if (K.MD) {
      OS << "  metadata:    ";
      bool First = true;
      auto field = [&](StringRef N, const std::optional<uint64_t> &V) {
        if (!V)
          return;
        OS << (First ? "" : ", ") << N << " " << *V;
        First = false;
      };
      field(".sgpr_count", K.MD->SGPRCount);
      field(".vgpr_count", K.MD->VGPRCount);
      field(".kernarg_segment_size", K.MD->KernargSegmentSize);
      field(".wavefront_size", K.MD->WavefrontSize);
      OS << "\n";
    }
  }
}
