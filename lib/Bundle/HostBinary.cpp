//===- lib/Bundle/HostBinary.cpp - Find the wrappers and their bundles ----===//
//
// analyze(): the header, then each `.hipFatBinSegment` record, the dynamic
// relocations that touch the records (DynamicRelocations.h), where each
// pointer's value lives, and the bundle it points to, sized as HIP sizes it.
// Every address and size comes from the file: each sum is checked before use.
// replaceBundles() is in HostBinaryRewrite.cpp.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/HostBinary.h"

#include "DynamicRelocations.h"

#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Bundle/OffloadBundle.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <map>

using namespace llvm;
using namespace llvm::ELF;

namespace hotswap {
namespace bundle {

StringRef pointerKindName(PointerKind Kind) {
  switch (Kind) {
  case PointerKind::Relative:
    return "R_X86_64_RELATIVE";
  case PointerKind::Relr:
    return "RELR";
  case PointerKind::Absolute:
    return "absolute";
  case PointerKind::Symbol:
    return "R_X86_64_64";
  }
  return "unknown";
}

namespace {

std::string x86RelocationName(uint32_t Type) {
  switch (Type) {
#define ELF_RELOC(Name, Value)                                                 \
  case Value:                                                                  \
    return #Name;
#include "llvm/BinaryFormat/ELFRelocs/x86_64.def"
#undef ELF_RELOC
  }
  return "relocation type " + std::to_string(Type);
}

std::string wrapperName(uint64_t Addr) { return "wrapper at " + hex(Addr); }

bool startsWith(ArrayRef<uint8_t> B, StringRef Magic) {
  return B.size() >= Magic.size() &&
         std::equal(Magic.bytes_begin(), Magic.bytes_end(), B.begin());
}

/// The PT_LOAD whose file-backed memory [p_vaddr, p_vaddr + p_filesz) holds
/// \p Addr, or null.
const Segment *fileBackedLoad(const Object &Obj, uint64_t Addr) {
  for (const auto &P : Obj.segments())
    if (P->Type == PT_LOAD && Addr >= P->VAddr && Addr - P->VAddr < P->FileSize)
      return P.get();
  return nullptr;
}

/// The allocated sections with file contents, to find the one that holds
/// an address: by binary search when no two of them overlap (what linkers
/// write), else the first in section order, as a linear search finds it.
class SectionIndex {
public:
  explicit SectionIndex(const Object &Obj) : Obj(Obj) {
    for (const auto &S : Obj.sections())
      if (S->isAlloc() && !S->isNoBits() && S->size())
        ByAddr.push_back(S.get());
    llvm::sort(ByAddr, [](const Section *A, const Section *B) {
      return A->Addr < B->Addr;
    });
    for (size_t I = 1; I < ByAddr.size() && !Overlap; ++I)
      Overlap = ByAddr[I]->Addr - ByAddr[I - 1]->Addr < ByAddr[I - 1]->size();
  }

  /// The section that holds \p Addr, or null.
  const Section *at(uint64_t Addr) const {
    if (Overlap) {
      for (const auto &S : Obj.sections())
        if (S->isAlloc() && !S->isNoBits() && Addr >= S->Addr &&
            Addr - S->Addr < S->size())
          return S.get();
      return nullptr;
    }
    auto It = llvm::upper_bound(
        ByAddr, Addr, [](uint64_t V, const Section *S) { return V < S->Addr; });
    if (It == ByAddr.begin())
      return nullptr;
    const Section *S = *std::prev(It);
    return Addr - S->Addr < S->size() ? S : nullptr;
  }

private:
  const Object &Obj;
  std::vector<const Section *> ByAddr;
  bool Overlap = false;
};

Error checkHeader(const Object &Obj) {
  const FileHeader &H = Obj.Header;
  if (H.Ident[EI_CLASS] != ELFCLASS64 || H.Ident[EI_DATA] != ELFDATA2LSB)
    return makeError("host binary is not ELF64 little-endian");
  if (H.Machine == EM_AMDGPU)
    return makeError("this is an AMDGPU code object, not a host binary "
                     "(e_machine EM_AMDGPU)");
  if (H.Machine != EM_X86_64)
    return makeError("host binary e_machine is " + Twine(H.Machine) +
                     ", not EM_X86_64 (62)");
  if (H.Type == ET_REL) {
    // What compilers leave in objects before the final link.
    if (Obj.findSection(".llvm.offloading"))
      return makeError("relocatable object with an '.llvm.offloading' "
                       "section (OffloadBinary of the new offload driver): "
                       "its device code is not linked yet; link the program "
                       "or library first");
    if (Obj.findSection(".hip_fatbin"))
      return makeError("relocatable object with a '.hip_fatbin' section: "
                       "link the program or library first (its wrappers are "
                       "only resolved then)");
    return makeError("relocatable host objects (ET_REL) are not supported: "
                     "link them first");
  }
  if (H.Type != ET_EXEC && H.Type != ET_DYN)
    return makeError("host binary e_type is " + Twine(H.Type) +
                     ", not ET_EXEC or ET_DYN");
  return Error::success();
}

/// A bundle found at an address: its bytes as HIP sizes them.
struct FoundBundle {
  ArrayRef<uint8_t> Bytes;
  bool Compressed = false;
  uint32_t Section = 0;
  uint64_t Offset = 0;
};

Expected<FoundBundle> findBundle(const Object &Obj,
                                 const SectionIndex &Sections, uint64_t Addr) {
  const Segment *Load = fileBackedLoad(Obj, Addr);
  if (!Load)
    return makeError("bundle pointer " + hex(Addr) +
                     " is outside every file-backed PT_LOAD");
  const Section *S = Sections.at(Addr);
  if (!S)
    return makeError("bundle at " + hex(Addr) +
                     " is not inside a section with file contents");
  // What may belong to the bundle: the rest of its section, within the
  // file-backed part of its segment.
  uint64_t Rel = Addr - S->Addr;
  uint64_t Avail =
      std::min(S->size() - Rel, Load->FileSize - (Addr - Load->VAddr));
  ArrayRef<uint8_t> B = S->contents().slice(Rel, Avail);
  std::string Where = "bundle at " + hex(Addr) + " (section '" + S->Name +
                      "' + " + hex(Rel) + ")";

  FoundBundle F;
  F.Section = S->index();
  F.Offset = Rel;
  if (startsWith(B, OffloadBundleMagic)) {
    Expected<OffloadBundle> OB = parseOffloadBundle(B);
    if (!OB)
      return prefixError(Where, OB.takeError());
    F.Bytes = B.take_front(OB->Size);
    return F;
  }
  if (startsWith(B, CompressedBundleMagic)) {
    if (B.size() < CompressedBundleCommonSize)
      return makeError(Where + ": compressed bundle header truncated (" +
                       hex(B.size()) + " bytes left)");
    uint16_t Version = support::endian::read16le(B.data() + 4);
    if (Version == 1)
      return makeError(Where + ": compressed bundle version 1 has no total "
                               "size, so HIP cannot size it");
    std::optional<uint64_t> HeaderSize = compressedBundleHeaderSize(Version);
    if (!HeaderSize)
      return makeError(Where + ": unknown compressed bundle version " +
                       Twine(Version));
    if (B.size() < *HeaderSize)
      return makeError(Where + ": compressed bundle header truncated (" +
                       hex(B.size()) + " of " + hex(*HeaderSize) + " bytes)");
    // HIP reads the total size at offset 8: u32 in version 2, u64 in 3.
    uint64_t Total = Version == 2 ? support::endian::read32le(B.data() + 8)
                                  : support::endian::read64le(B.data() + 8);
    if (Total > B.size())
      return makeError(Where + ": compressed bundle total size " + hex(Total) +
                       " is larger than the " + hex(B.size()) +
                       " bytes left in its section");
    if (Total < *HeaderSize)
      return makeError(Where + ": compressed bundle total size " + hex(Total) +
                       " is smaller than its v" + Twine(Version) + " header (" +
                       hex(*HeaderSize) + " bytes)");
    ArrayRef<uint8_t> C = B.take_front(Total);
    Expected<CompressedBundleHeader> H = parseCompressedBundleHeader(C);
    if (!H)
      return prefixError(Where, H.takeError());
    F.Bytes = C;
    F.Compressed = true;
    return F;
  }
  return makeError(Where + ": no offload bundle there (neither '" +
                   OffloadBundleMagic + "' nor '" + CompressedBundleMagic +
                   "')");
}

} // namespace

/// The wrapper sections that hold records, checked: loaded from the file,
/// whole records, inside a file-backed PT_LOAD.
static Expected<std::vector<const Section *>>
wrapperSections(const Object &Host) {
  std::vector<const Section *> WrapperSecs;
  for (const auto &S : Host.sections()) {
    if (S->Name != HostWrapperSectionName || S->Type == SHT_NULL)
      continue;
    std::string Name = "section '" + S->Name + "'";
    if (!S->isAlloc() || S->isNoBits())
      return makeError(Name + " at " + hex(S->Addr) +
                       " is not loaded with file contents");
    if (S->size() % HostWrapperSize != 0)
      return makeError(Name + " size " + hex(S->size()) +
                       " is not a multiple of 24 (the size of a wrapper)");
    if (S->size() == 0)
      continue;
    const Segment *Load = fileBackedLoad(Host, S->Addr);
    if (!Load || S->size() > Load->FileSize - (S->Addr - Load->VAddr))
      return makeError(Name + " at " + hex(S->Addr) +
                       " is not inside a file-backed PT_LOAD");
    WrapperSecs.push_back(S.get());
  }
  return WrapperSecs;
}

/// The address ranges of \p WrapperSecs, sorted; they must not overlap.
static Expected<std::vector<AddressRange>>
wrapperRanges(ArrayRef<const Section *> WrapperSecs) {
  std::vector<AddressRange> Ranges;
  for (const Section *S : WrapperSecs)
    Ranges.push_back({S->Addr, S->Addr + S->size()});
  llvm::sort(Ranges, [](const AddressRange &A, const AddressRange &B) {
    return A.Begin < B.Begin;
  });
  for (size_t I = 1; I < Ranges.size(); ++I)
    if (Ranges[I].Begin < Ranges[I - 1].End)
      return makeError("wrapper sections at " + hex(Ranges[I - 1].Begin) +
                       " and " + hex(Ranges[I].Begin) + " overlap");
  return Ranges;
}

namespace {
/// The relocations by the address they change (in table order where two
/// change the same one), so that each wrapper finds its own in log time.
class RelocationIndex {
public:
  explicit RelocationIndex(ArrayRef<DynamicRelocation> Relocs) {
    ByOffset.reserve(Relocs.size());
    for (const DynamicRelocation &R : Relocs)
      ByOffset.push_back(&R);
    llvm::stable_sort(
        ByOffset, [](const DynamicRelocation *A, const DynamicRelocation *B) {
          return A->Offset < B->Offset;
        });
  }
  /// The relocation of the wrapper at \p Addr (named \p Name), if any: only
  /// its bundle pointer may be relocated, once. (Relocations that touch it
  /// start less than 8 bytes before it, and before its end; the wrapper
  /// sections are inside the address space, so Addr + 24 does not wrap.)
  Expected<const DynamicRelocation *> of(uint64_t Addr,
                                         const std::string &Name) const {
    const uint64_t Slot = Addr + 8;
    const DynamicRelocation *Reloc = nullptr;
    const uint64_t From = Addr >= 7 ? Addr - 7 : 0;
    for (auto It = llvm::lower_bound(ByOffset, From,
                                     [](const DynamicRelocation *R,
                                        uint64_t V) { return R->Offset < V; });
         It != ByOffset.end() && (*It)->Offset < Addr + HostWrapperSize; ++It) {
      const DynamicRelocation &R = **It;
      if (R.Offset != Slot)
        return makeError(Name + ": a dynamic relocation in '" +
                         R.TableSection->Name + "' changes " + hex(R.Offset) +
                         " (only the bundle pointer at " + hex(Slot) +
                         " may be relocated)");
      if (Reloc)
        return makeError(Name + ": bundle pointer at " + hex(Slot) +
                         " is relocated twice (in '" +
                         Reloc->TableSection->Name + "' and '" +
                         R.TableSection->Name + "')");
      Reloc = &R;
    }
    return Reloc;
  }

private:
  std::vector<const DynamicRelocation *> ByOffset;
};
} // namespace

/// Where the bundle pointer of \p W (its stored value \p Stored, its
/// relocation \p Reloc if any) leads, and how it is set: W's Kind,
/// BundleAddr, InPlace and symbol.
static Error readPointer(const Object &Host, const DynamicRelocation *Reloc,
                         uint64_t Stored, const std::string &Name,
                         HostWrapper &W) {
  const uint64_t Slot = W.Addr + 8;
  if (!Reloc) {
    if (Host.Header.Type != ET_EXEC)
      return makeError(Name + ": bundle pointer at " + hex(Slot) +
                       " has no dynamic relocation, but the file is "
                       "position-independent (ET_DYN)");
    W.Kind = PointerKind::Absolute;
    W.BundleAddr = Stored;
    W.InPlace = true;
  } else if (Reloc->Table == DynamicRelocation::Relr) {
    W.Kind = PointerKind::Relr;
    W.BundleAddr = Stored;
    W.InPlace = true;
  } else if (Reloc->Table == DynamicRelocation::Rel) {
    return makeError(Name + ": bundle pointer at " + hex(Slot) +
                     " is relocated by SHT_REL section '" +
                     Reloc->TableSection->Name +
                     "' (x86-64 uses RELA; not supported)");
  } else if (Reloc->Type == R_X86_64_RELATIVE) {
    W.Kind = PointerKind::Relative;
    W.BundleAddr = static_cast<uint64_t>(Reloc->Addend);
    W.InPlace = Stored != 0 && Stored == W.BundleAddr;
  } else if (Reloc->Type == R_X86_64_64) {
    std::string RelocName =
        "its R_X86_64_64 relocation in '" + Reloc->TableSection->Name + "'";
    if (Reloc->SymbolIndex == 0)
      return makeError(Name + ": " + RelocName + " has no symbol");
    const Section *Link = Reloc->TableSection->Link;
    const SymbolTable *Syms = Link ? Link->symbols() : nullptr;
    if (!Syms || Link->Type != SHT_DYNSYM)
      return makeError(Name + ": " + RelocName +
                       " does not link to a dynamic symbol table");
    if (Reloc->SymbolIndex > Syms->size())
      return makeError(Name + ": " + RelocName + " names symbol " +
                       Twine(Reloc->SymbolIndex) + ", but '" + Link->Name +
                       "' has " + Twine(Syms->size() + 1) + " symbols");
    const Symbol &Sym = Syms->symbols()[Reloc->SymbolIndex - 1];
    if (!Sym.Sec)
      return makeError(Name + ": " + RelocName + " is against symbol '" +
                       Sym.Name + "', which is not defined in a section");
    W.Kind = PointerKind::Symbol;
    W.SymbolName = Sym.Name;
    W.SymbolValue = Sym.Value;
    // S + A, wrapping as the loader computes it.
    W.BundleAddr = Sym.Value + static_cast<uint64_t>(Reloc->Addend);
    W.InPlace = Stored != 0 && Stored == W.BundleAddr;
  } else {
    return makeError(Name + ": bundle pointer at " + hex(Slot) +
                     " is relocated by " + x86RelocationName(Reloc->Type) +
                     " (only R_X86_64_RELATIVE and R_X86_64_64 are "
                     "supported)");
  }
  return Error::success();
}

/// Bundles are disjoint, and none covers a wrapper (zeroing it would
/// destroy the wrapper). \p Ranges: the wrappers, sorted and disjoint.
static Error checkBundlesApart(ArrayRef<HostBundle> Bundles,
                               ArrayRef<AddressRange> Ranges) {
  std::vector<const HostBundle *> ByAddr;
  for (const HostBundle &B : Bundles)
    ByAddr.push_back(&B);
  llvm::sort(ByAddr, [](const HostBundle *A, const HostBundle *B) {
    return A->Addr < B->Addr;
  });
  for (size_t I = 1; I < ByAddr.size(); ++I)
    if (ByAddr[I]->Addr - ByAddr[I - 1]->Addr < ByAddr[I - 1]->Bytes.size())
      return makeError("bundles at " + hex(ByAddr[I - 1]->Addr) + " (size " +
                       hex(ByAddr[I - 1]->Bytes.size()) + ") and " +
                       hex(ByAddr[I]->Addr) + " overlap");
  // Both lists are sorted and each is disjoint: one pass over both.
  for (size_t I = 0, J = 0; I < ByAddr.size() && J < Ranges.size();) {
    const HostBundle &B = *ByAddr[I];
    const AddressRange &R = Ranges[J];
    if (R.Begin - B.Addr < B.Bytes.size() || B.Addr - R.Begin < R.End - R.Begin)
      return makeError("bundle at " + hex(B.Addr) + " (size " +
                       hex(B.Bytes.size()) + ") overlaps the wrappers at " +
                       hex(R.Begin));
    // Move past whichever ends first.
    const uint64_t BEnd =
        B.Addr + std::min<uint64_t>(B.Bytes.size(), UINT64_MAX - B.Addr);
    if (BEnd <= R.End)
      ++I;
    else
      ++J;
  }
  return Error::success();
}

Expected<HostBinary>
HostBinary::analyze(const Object &Host,
                    function_ref<void(ArrayRef<uint8_t>)> ReadBundle) {
  if (Error E = checkHeader(Host))
    return std::move(E);

  HostBinary HB;
  HB.Source = &Host;
  Expected<std::vector<const Section *>> WrapperSecs = wrapperSections(Host);
  if (!WrapperSecs)
    return WrapperSecs.takeError();
  Expected<std::vector<AddressRange>> Ranges = wrapperRanges(*WrapperSecs);
  if (!Ranges)
    return Ranges.takeError();
  Expected<std::vector<DynamicRelocation>> Relocs =
      findDynamicRelocations(Host, *Ranges);
  if (!Relocs)
    return Relocs.takeError();
  const RelocationIndex RelocOf(*Relocs);
  const SectionIndex Sections(Host);

  std::map<uint64_t, size_t> BundleByAddr;
  for (const Section *S : *WrapperSecs) {
    ArrayRef<uint8_t> C = S->contents();
    for (uint64_t Off = 0; Off < C.size(); Off += HostWrapperSize) {
      HostWrapper W;
      W.Addr = S->Addr + Off;
      std::string Name = wrapperName(W.Addr);
      const uint8_t *P = C.data() + Off;
      uint32_t Magic = support::endian::read32le(P);
      uint32_t Version = support::endian::read32le(P + 4);
      uint64_t Stored = support::endian::read64le(P + 8);
      if (Magic != HostWrapperMagic)
        return makeError(Name + ": magic is " + hex(Magic) + ", expected " +
                         hex(HostWrapperMagic) + " ('HIPF')");
      if (Version != HostWrapperVersion)
        return makeError(Name + ": version is " + Twine(Version) +
                         ", expected 1");
      Expected<const DynamicRelocation *> Reloc = RelocOf.of(W.Addr, Name);
      if (!Reloc)
        return Reloc.takeError();
      if (Error E = readPointer(Host, *Reloc, Stored, Name, W))
        return std::move(E);
      PointerSite Site;
      Site.WrapperSection = S->index();
      Site.WrapperOffset = Off;
      if (*Reloc && (*Reloc)->Table == DynamicRelocation::Rela &&
          W.Kind != PointerKind::Relr) {
        Site.RelocSection = (*Reloc)->TableSection->index();
        Site.RelocOffset = (*Reloc)->EntryOffset;
      }

      auto [It, New] =
          BundleByAddr.try_emplace(W.BundleAddr, HB.Bundles.size());
      if (New) {
        Expected<FoundBundle> F = findBundle(Host, Sections, W.BundleAddr);
        if (!F)
          return prefixError(Name, F.takeError());
        HostBundle B;
        B.Addr = W.BundleAddr;
        B.Bytes = F->Bytes;
        B.Compressed = F->Compressed;
        HB.Bundles.push_back(B);
        HB.BundleSites.push_back({F->Section, F->Offset});
        if (ReadBundle)
          ReadBundle(B.Bytes);
      }
      W.Bundle = It->second;
      HB.Wrappers.push_back(std::move(W));
      HB.PointerSites.push_back(Site);
    }
  }
  if (Error E = checkBundlesApart(HB.Bundles, *Ranges))
    return std::move(E);
  return std::move(HB);
}

} // namespace bundle
} // namespace hotswap
