//===- lib/Passes/SwapReplacement.cpp - swap-kernels' FILE ----------------===//

#include "hotswap/Passes/SwapReplacement.h"

#include "hotswap/Object/BundleMagic.h"
#include "hotswap/Object/InputFile.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Passes/SwapRecord.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <mutex>

using namespace llvm;
using namespace hotswap;

/// The largest PT_LOAD alignment of a replacement taken as is (the delta is
/// a multiple of it); larger ones are refused.
static constexpr uint64_t MaxImageAlign = uint64_t(1) << 30;

/// The name of an AMDGPU relocation type.
static StringRef relocationName(uint32_t Type) {
  switch (Type) {
#define ELF_RELOC(Name, Value)                                                 \
  case Value:                                                                  \
    return #Name;
#include "llvm/BinaryFormat/ELFRelocs/AMDGPU.def"
#undef ELF_RELOC
  default:
    return "an unknown relocation";
  }
}

/// Moved by a delta, the image is right only if nothing in it holds an
/// absolute address: the loader would have to relocate it.
static std::optional<std::string> dynamicRelocations(const Object &Obj) {
  for (const auto &S : Obj.sections()) {
    if (!S->isAlloc() || S->isNoBits() || S->size() == 0 ||
        (S->Type != ELF::SHT_RELA && S->Type != ELF::SHT_REL &&
         S->Type != ELF::SHT_RELR))
      continue;
    const uint64_t EntSize = S->Type == ELF::SHT_RELA  ? 24
                             : S->Type == ELF::SHT_REL ? 16
                                                       : 8;
    std::string First;
    if (S->Type == ELF::SHT_RELA && S->size() >= 24) {
      uint64_t Offset = support::endian::read64le(S->contents().data());
      uint32_t Type = static_cast<uint32_t>(
          support::endian::read64le(S->contents().data() + 8));
      const Section *At = Obj.sectionForAddress(Offset);
      First = "; the first: " + relocationName(Type).str() + " at " +
              hex(Offset) + (At ? " in '" + At->Name + "'" : "");
    }
    return ("needs dynamic relocations (" + Twine(S->size() / EntSize) +
            " in '" + S->Name + "'" + First +
            "): moved by a delta, its data would hold stale addresses (a "
            "device variable whose address is stored in data needs one)")
        .str();
  }
  return std::nullopt;
}

/// The PT_LOADs of \p F's object into F.Loads, F.Align and F.Start: in
/// address order, disjoint, inside the file.
static std::optional<std::string> readLoads(SwapReplacement &F) {
  const Object &Obj = *F.Obj;
  for (const auto &P : Obj.segments()) {
    if (P->Type != ELF::PT_LOAD)
      continue;
    if (P->FileSize > P->MemSize || P->Offset > Obj.input().size() ||
        P->FileSize > Obj.input().size() - P->Offset ||
        P->MemSize > UINT64_MAX - P->VAddr)
      return "PT_LOAD at " + hex(P->VAddr) + " has a bad size or offset";
    if (P->Align > 1 && (!isPowerOf2_64(P->Align) || P->Align > MaxImageAlign))
      return "PT_LOAD at " + hex(P->VAddr) + " has alignment " + hex(P->Align) +
             " (a power of two up to " + hex(MaxImageAlign) + " expected)";
    if (!F.Loads.empty() &&
        F.Loads.back().VAddr + F.Loads.back().MemSize > P->VAddr)
      return "PT_LOAD at " + hex(P->VAddr) +
             " is not above the PT_LOAD before it";
    F.Align = std::max(F.Align, P->Align);
    F.Loads.push_back({P->VAddr, P->FileSize, P->MemSize, P->Flags,
                       Obj.input().slice(P->Offset, P->FileSize)});
  }
  if (F.Loads.empty())
    return std::string("no PT_LOAD");
  F.Start = alignDown(F.Loads.front().VAddr, F.Align);
  return std::nullopt;
}

/// HIP's `__HIP_Coordinates<...>::x`, `::y`, `::z` (the members behind
/// threadIdx, blockIdx, blockDim and gridDim): empty constant objects, one
/// byte at most, read-only, whose every read the compiler turns into a
/// register read: no state a host could share with the kernels.
static bool isEmptyHIPConstant(const Symbol &S) {
  return StringRef(S.Name).starts_with("_ZN17__HIP_Coordinates") &&
         S.Size <= 1 && S.Sec && !(S.Sec->Flags & ELF::SHF_WRITE);
}

/// \p F's function symbols and the variables the host can reach.
static void readSymbols(SwapReplacement &F) {
  const Object &Obj = *F.Obj;
  for (SymbolTable *T : {Obj.dynsym(), Obj.symtab()}) {
    if (!T)
      continue;
    T->forEach([&](const Symbol &S) {
      if (S.Type == ELF::STT_FUNC && S.Sec)
        F.Functions.try_emplace(S.Name, S.Value, S.Size);
      bool Exported = !S.isLocal() && S.visibility() != ELF::STV_HIDDEN &&
                      S.visibility() != ELF::STV_INTERNAL;
      if (T == Obj.dynsym() && Exported &&
          (S.Type == ELF::STT_OBJECT || S.Type == ELF::STT_COMMON) &&
          (S.Sec || S.Shndx == ELF::SHN_COMMON) &&
          !StringRef(S.Name).ends_with(".kd") &&
          // The marker of a HIP translation unit, which no code reads.
          !StringRef(S.Name).starts_with("__hip_cuid_") &&
          !isEmptyHIPConstant(S))
        F.Variables.push_back(S.Name.str());
    });
  }
}

Expected<std::shared_ptr<const SwapReplacement>>
SwapReplacement::read(std::unique_ptr<MemoryBuffer> B, StringRef Path) {
  auto Fail = [&](const Twine &Msg) {
    return makeError("replacement '" + Path + "': " + Msg);
  };
  StringRef Bytes = B->getBuffer();
  if (startsAsBundle(Bytes))
    return Fail("an offload bundle, not a code object (extract the code "
                "object for the target, e.g. with clang-offload-bundler "
                "--unbundle)");
  auto F = std::make_shared<SwapReplacement>();
  F->SHA256 = swapDigestHex(SwapDigest::SHA256, arrayRefFromStringRef(Bytes));
  Expected<std::unique_ptr<Object>> O = readObject(std::move(B));
  if (!O)
    return prefixError("replacement '" + Path + "'", O.takeError());
  F->Obj = std::move(*O);
  Expected<KernelsAnalysis::Result> K = KernelsAnalysis::run(*F->Obj, F->AM);
  if (!K)
    return prefixError("replacement '" + Path + "'", K.takeError());
  F->Kernels.emplace(std::move(*K));
  if (F->Kernels->Kernels.empty())
    return Fail("no kernels");
  for (size_t I = 0; I != F->Kernels->Kernels.size(); ++I)
    F->ByName[F->Kernels->Kernels[I].Name] = I;
  if (std::optional<std::string> Why = dynamicRelocations(*F->Obj))
    return Fail(*Why);
  if (std::optional<std::string> Why = readLoads(*F))
    return Fail(*Why);
  readSymbols(*F);
  return std::shared_ptr<const SwapReplacement>(std::move(F));
}

namespace {
/// A file read once, while some pass holds it.
struct CachedReplacement {
  sys::fs::UniqueID ID;
  uint64_t Size = 0;
  sys::TimePoint<> MTime;
  std::weak_ptr<const SwapReplacement> Replacement;
};
} // namespace

Expected<std::shared_ptr<const SwapReplacement>>
SwapReplacement::get(StringRef Path) {
  static std::mutex Lock;
  static StringMap<CachedReplacement> Cache;
  sys::fs::file_status St;
  const bool Known = !sys::fs::status(Path, St);
  if (Known) {
    std::lock_guard<std::mutex> G(Lock);
    auto It = Cache.find(Path);
    if (It != Cache.end() && It->second.ID == St.getUniqueID() &&
        It->second.Size == St.getSize() &&
        It->second.MTime == St.getLastModificationTime())
      if (std::shared_ptr<const SwapReplacement> R =
              It->second.Replacement.lock())
        return R;
  }
  // A regular file only: a FIFO or a device would be waited on or read
  // without end.
  Expected<std::unique_ptr<MemoryBuffer>> B = readRegularFile(Path);
  if (!B)
    return prefixError("cannot read replacement '" + Path + "'", B.takeError());
  Expected<std::shared_ptr<const SwapReplacement>> R =
      read(std::move(*B), Path);
  if (R && Known) {
    std::lock_guard<std::mutex> G(Lock);
    Cache[Path] = {St.getUniqueID(), St.getSize(), St.getLastModificationTime(),
                   *R};
  }
  return R;
}

const std::string &SwapReplacement::digest(SwapDigest D) const {
  if (D == SwapDigest::SHA256)
    return SHA256;
  std::call_once(MD5Once,
                 [&] { MD5 = swapDigestHex(SwapDigest::MD5, Obj->input()); });
  return MD5;
}
