//===- lib/Object/Layout.cpp - Where everything goes ----------------------===//

#include "hotswap/Object/Layout.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;
using namespace llvm::ELF;
using namespace llvm::support;

namespace hotswap {

namespace {

template <typename T> void wr(uint8_t *P, T V) {
  endian::write<T, llvm::endianness::little>(P, V);
}

/// Appends \p Name to a string table blob (deduplicated against what was
/// appended in this run) and returns its offset.
class StrTabAppender {
public:
  explicit StrTabAppender(std::vector<uint8_t> &Blob) : Blob(Blob) {
    if (Blob.empty())
      Blob.push_back(0);
  }
  uint32_t add(StringRef Name) {
    if (Name.empty())
      return 0;
    auto [It, Inserted] = Added.try_emplace(Name, 0);
    if (!Inserted)
      return It->second;
    uint32_t Off = static_cast<uint32_t>(Blob.size());
    Blob.insert(Blob.end(), Name.begin(), Name.end());
    Blob.push_back(0);
    It->second = Off;
    return Off;
  }

private:
  std::vector<uint8_t> &Blob;
  StringMap<uint32_t> Added;
};

uint64_t alignUp(uint64_t V, uint64_t A) { return A > 1 ? alignTo(V, A) : V; }

/// Every section but the null one at index 0: its header is written back as
/// read (whatever its fields say) and it has no contents, so it never takes
/// part in the layout.
ArrayRef<std::unique_ptr<Section>> sectionsAfterNull(const Object &Obj) {
  return Obj.sections().drop_front(Obj.sections().empty() ? 0 : 1);
}

/// Largest output the writer lays out. Alignments come from the input, and
/// a huge sh_addralign / p_align on something that moves would otherwise
/// ask for a terabyte-sized file (or wrap around 2^64).
constexpr uint64_t MaxOutputSize = uint64_t(1) << 32;

Error checkOutputEnd(uint64_t Start, uint64_t Size, const Twine &What) {
  if (Start <= MaxOutputSize && Size <= MaxOutputSize - Start)
    return Error::success();
  return makeError("output too large: " + What + " would start at " +
                   hex(Start) + " with size " + hex(Size) + " (the limit is " +
                   hex(MaxOutputSize) + " bytes)");
}
} // namespace

Expected<Layout> computeLayout(const Object &Obj) {
  Layout L;
  size_t NSec = Obj.sections().size();
  L.SectionOffsets.assign(NSec, 0);
  for (const auto &P : Obj.segments())
    L.Segments.push_back(*P);

  // The segment asked to hold the program header table, if any: a new one.
  const uint64_t PhSize = Obj.segments().size() * sizeof(Elf64_Phdr);
  std::optional<size_t> PhHolder;
  for (size_t PI = 0; PI < Obj.segments().size(); ++PI) {
    const Segment &P = *Obj.segments()[PI];
    if (!P.HoldsProgramHeaders)
      continue;
    if (!P.IsNew)
      return makeError("program header " + Twine(PI) +
                       " of the input cannot be asked to hold the program "
                       "header table");
    if (PhHolder)
      return makeError("program headers " + Twine(*PhHolder) + " and " +
                       Twine(PI) + " both hold the program header table");
    PhHolder = PI;
  }

  // Derived tables first: string tables and symbol tables that changed.
  // Existing strings keep their offsets; new names are appended.
  DenseMap<const Section *, std::vector<uint8_t>> StrBlobs;
  auto BlobFor = [&](const Section *S) -> std::vector<uint8_t> & {
    auto It = StrBlobs.find(S);
    if (It == StrBlobs.end()) {
      ArrayRef<uint8_t> C = S->contents();
      It = StrBlobs.try_emplace(S, C.begin(), C.end()).first;
    }
    return It->second;
  };

  // Section names: sections whose name offset is unknown (new) need one.
  DenseMap<const Section *, uint32_t> NameOffsets;
  if (Obj.sectionNames()) {
    std::vector<uint8_t> *Blob = nullptr;
    std::optional<StrTabAppender> App;
    for (const auto &S : Obj.sections()) {
      if (Obj.keepsInputName(*S)) {
        NameOffsets[S.get()] = S->Orig->NameOffset;
        continue;
      }
      if (!Blob) {
        Blob = &BlobFor(Obj.sectionNames());
        App.emplace(*Blob);
      }
      NameOffsets[S.get()] = App->add(S->Name);
    }
  } else {
    for (const auto &S : Obj.sections())
      if (S->Type != SHT_NULL && (S->isNew() || !S->Name.empty()))
        return makeError("object has no section name string table "
                         "to name section '" +
                         S->Name + "'");
  }
  L.SectionNameOffsets = std::move(NameOffsets);

  // Tables that changed are rebuilt, and so, when the object is laid out
  // anew anyway, is a table the input did not partition (the repair verify
  // asks for; the reader made sure nothing refers to its indices).
  const bool Relaid = Obj.needsNewLayout();
  for (const auto &TP : Obj.symbolTables()) {
    const SymbolTable &T = *TP;
    if (!T.isModified() && !(Relaid && !T.wasPartitioned()))
      continue;
    const Section &TSec = T.section();
    if (TSec.isAlloc())
      return makeError("cannot change allocated symbol table '" + TSec.Name +
                       "' without moving loaded bytes");
    std::vector<uint8_t> &Blob = BlobFor(&T.stringTable());
    StrTabAppender App(Blob);
    std::vector<uint8_t> Out((T.size() + 1) * sizeof(Elf64_Sym), 0);
    // Locals first, each group in its current order.
    std::vector<const Symbol *> Order;
    Order.reserve(T.size());
    for (const Symbol &S : T.symbols())
      if (S.isLocal())
        Order.push_back(&S);
    uint32_t FirstGlobal = static_cast<uint32_t>(Order.size()) + 1;
    for (const Symbol &S : T.symbols())
      if (!S.isLocal())
        Order.push_back(&S);
    ArrayRef<uint8_t> OrigStr = T.stringTable().contents();
    for (size_t K = 0; K < Order.size(); ++K) {
      const Symbol &S = *Order[K];
      uint8_t *P = Out.data() + (K + 1) * sizeof(Elf64_Sym);
      uint32_t NameOff;
      if (S.OrigNameOffset && *S.OrigNameOffset < OrigStr.size() &&
          StringRef(reinterpret_cast<const char *>(
              OrigStr.data() + *S.OrigNameOffset)) == S.Name)
        NameOff = *S.OrigNameOffset;
      else
        NameOff = App.add(S.Name);
      uint16_t Shndx = S.Shndx;
      if (S.Sec) {
        uint32_t Idx = S.Sec->index();
        if (Idx == 0 || Idx >= SHN_LORESERVE)
          return makeError("symbol '" + S.Name +
                           "' refers to a section that is not in "
                           "the object");
        Shndx = static_cast<uint16_t>(Idx);
      }
      wr<uint32_t>(P + 0, NameOff);
      P[4] = static_cast<uint8_t>((S.Binding << 4) | (S.Type & 0xf));
      P[5] = S.Other;
      wr<uint16_t>(P + 6, Shndx);
      wr<uint64_t>(P + 8, S.Value);
      wr<uint64_t>(P + 16, S.Size);
    }
    L.Rebuilt[&TSec] = std::move(Out);
    L.SymtabInfo[&TSec] = FirstGlobal;
  }
  for (auto &KV : StrBlobs) {
    if (KV.first->isAlloc() && KV.second.size() != KV.first->contents().size())
      return makeError("cannot grow allocated string table '" + KV.first->Name +
                       "' without moving loaded bytes");
    L.Rebuilt[KV.first] = std::move(KV.second);
  }

  auto OutSize = [&](const Section &S) -> uint64_t {
    if (S.isNoBits())
      return 0;
    if (S.hasExternalContents())
      return S.size();
    auto It = L.Rebuilt.find(&S);
    return It != L.Rebuilt.end() ? It->second.size() : S.contents().size();
  };

  // Loaded sections of the input never change size.
  for (const auto &S : sectionsAfterNull(Obj))
    if (S->Orig && S->isAlloc() && !S->isNoBits() &&
        OutSize(*S) != S->Orig->Size)
      return makeError("section '" + S->Name +
                       "' is loaded and cannot change size (" +
                       hex(S->Orig->Size) + " -> " + hex(OutSize(*S)) + ")");

  // The model decides (its passes' invariants depend on the same answer);
  // what was derived above must agree with it.
  bool Changed = Obj.needsNewLayout();
  if (!Changed)
    for (const auto &S : sectionsAfterNull(Obj))
      if (!S->isNoBits() && OutSize(*S) != S->Orig->Size)
        return makeError("internal error: section '" + S->Name +
                         "' changed size but the object keeps its layout");

  uint64_t InSize = Obj.input().size();
  if (!Changed) {
    L.InPlace = true;
    L.FileSize = InSize;
    L.PhOff = Obj.inputTables().PhOff;
    L.ShOff = Obj.inputTables().ShOff;
    for (size_t I = 0; I < NSec; ++I)
      L.SectionOffsets[I] = Obj.sections()[I]->Orig->Offset;
    L.BaseLength = InSize;
    return std::move(L);
  }
  L.InPlace = false;

  // Every byte of the input stays where it is (one copy, in the kernel when
  // the output goes to a file); what is new or grew goes after its end.
  uint64_t Pos = InSize;

  // New loaded segments, above every existing address.
  uint64_t MaxEnd = 0;
  for (const auto &P : Obj.segments())
    if (!P->IsNew && P->Type == PT_LOAD)
      MaxEnd = std::max(MaxEnd, P->VAddr + P->MemSize);
  for (const auto &S : sectionsAfterNull(Obj))
    if (S->Orig && S->isAlloc())
      MaxEnd = std::max(MaxEnd, S->Addr + S->size());
  for (size_t PI = 0; PI < Obj.segments().size(); ++PI) {
    const Segment &P = *Obj.segments()[PI];
    if (!P.IsNew)
      continue;
    Segment &OutP = L.Segments[PI];
    if (P.Members.empty() && !P.HoldsProgramHeaders) {
      OutP.Offset = 0;
      OutP.FileSize = 0;
      continue;
    }
    if (P.VAddr < MaxEnd)
      return makeError("new segment at address " + hex(P.VAddr) +
                       " would overlap loaded memory ending at " + hex(MaxEnd));
    uint64_t Align = std::max<uint64_t>(P.Align, 1);
    if (!isPowerOf2_64(Align))
      return makeError("new segment alignment " + hex(Align) +
                       " is not a power of two");
    uint64_t Off;
    if (P.VAddrMinusOffset) {
      uint64_t Delta = *P.VAddrMinusOffset;
      if (Delta > P.VAddr || P.VAddr - Delta < Pos)
        return makeError("new segment at address " + hex(P.VAddr) +
                         " cannot have p_vaddr - p_offset " + hex(Delta) +
                         ": its file offset would be before " + hex(Pos));
      Off = P.VAddr - Delta;
      if (Off % Align != P.VAddr % Align)
        return makeError("new segment at address " + hex(P.VAddr) +
                         " cannot have p_vaddr - p_offset " + hex(Delta) +
                         ", which is not a multiple of its alignment " +
                         hex(Align));
    } else {
      Off = alignTo(Pos, Align) + P.VAddr % Align;
      if (Off >= Align && Off - Align >= Pos)
        Off -= Align;
    }
    OutP.Offset = Off;
    uint64_t MemEnd = P.VAddr, FileEnd = P.VAddr;
    for (const Section *S : P.Members) {
      if (S->Addr < P.VAddr)
        return makeError("section '" + S->Name +
                         "' lies below its segment's address");
      uint32_t Idx = S->index();
      L.SectionOffsets[Idx] = Off + (S->Addr - P.VAddr);
      MemEnd = std::max(MemEnd, S->Addr + S->size());
      if (!S->isNoBits())
        FileEnd = std::max(FileEnd, S->Addr + S->size());
    }
    if (P.HoldsProgramHeaders) {
      // After the members, in the file part of the segment.
      if (MemEnd != FileEnd)
        return makeError("new segment at address " + hex(P.VAddr) +
                         " holds the program header table but has members "
                         "without file contents");
      uint64_t TableAddr = alignTo(FileEnd, 8);
      if (TableAddr < FileEnd || PhSize > UINT64_MAX - TableAddr)
        return makeError("no room for the program header table after "
                         "address " +
                         hex(FileEnd));
      L.PhOff = Off + (TableAddr - P.VAddr);
      FileEnd = MemEnd = TableAddr + PhSize;
    }
    OutP.FileSize = FileEnd - P.VAddr;
    OutP.MemSize = std::max(MemEnd - P.VAddr, P.MemSize);
    if (Error E =
            checkOutputEnd(Off, OutP.FileSize, "new segment " + Twine(PI)))
      return std::move(E);
    Pos = Off + OutP.FileSize;
    MaxEnd = std::max(MaxEnd, P.VAddr + OutP.MemSize);
  }

  // Program header table: inside the segment asked to hold it (PT_PHDR
  // follows it there), else in place if it still fits in its slot (which
  // nothing else uses: no input byte moves), else after the new segments.
  bool PhInPlace = Obj.inputTables().PhNum &&
                   Obj.segments().size() <= Obj.inputTables().PhNum;
  if (Obj.segments().empty()) {
    L.PhOff = 0;
  } else if (PhHolder) {
    const Segment &H = L.Segments[*PhHolder];
    uint64_t TableAddr = H.VAddr + (L.PhOff - H.Offset);
    for (Segment &P : L.Segments) {
      if (P.Type != PT_PHDR)
        continue;
      P.PAddr = TableAddr + (P.PAddr - P.VAddr);
      P.VAddr = TableAddr;
      P.Offset = L.PhOff;
      P.FileSize = P.MemSize = PhSize;
    }
  } else if (PhInPlace) {
    L.PhOff = Obj.inputTables().PhOff;
  } else {
    Pos = alignTo(Pos, 8);
    L.PhOff = Pos;
    Pos += PhSize;
    // The table is no longer mapped where PT_PHDR said: neutralize it.
    for (Segment &P : L.Segments)
      if (P.Type == PT_PHDR)
        P = Segment();
  }

  // Non-loaded sections that did not change stay where they are (debug
  // information included); those that grew, then new ones, are appended in
  // their original file order. A grown table's old bytes stay behind,
  // unreferenced.
  std::vector<uint32_t> Tail;
  for (uint32_t I = 1; I < NSec; ++I) {
    const Section &S = *Obj.sections()[I];
    if (S.isAlloc() && S.Orig) {
      L.SectionOffsets[I] = S.Orig->Offset;
      continue;
    }
    if (S.isAlloc())
      continue; // new loaded sections were placed with their segment
    if (S.Orig && (S.isNoBits() || OutSize(S) == S.Orig->Size)) {
      L.SectionOffsets[I] = S.Orig->Offset;
      continue;
    }
    Tail.push_back(I);
  }
  llvm::stable_sort(Tail, [&](uint32_t A, uint32_t B) {
    const Section &SA = *Obj.sections()[A], &SB = *Obj.sections()[B];
    if (SA.isNew() != SB.isNew())
      return SB.isNew();
    if (SA.isNew())
      return false;
    return SA.Orig->Offset < SB.Orig->Offset;
  });
  for (uint32_t I : Tail) {
    const Section &S = *Obj.sections()[I];
    uint64_t A = S.AddrAlign;
    if (S.Type == SHT_SYMTAB || S.Type == SHT_DYNSYM)
      A = std::max<uint64_t>(A, 8);
    Pos = alignUp(Pos, A);
    if (Error E = checkOutputEnd(Pos, OutSize(S), "section '" + S.Name + "'"))
      return std::move(E);
    L.SectionOffsets[I] = Pos;
    Pos += OutSize(S);
  }

  Pos = alignTo(Pos, 8);
  L.ShOff = NSec ? Pos : 0;
  if (Error E = checkOutputEnd(Pos, NSec * sizeof(Elf64_Shdr),
                               "the section header table"))
    return std::move(E);
  Pos += NSec * sizeof(Elf64_Shdr);
  L.FileSize = Pos;
  if (NSec >= SHN_LORESERVE)
    return makeError("too many sections (" + Twine(NSec) + ")");
  if (Obj.segments().size() >= PN_XNUM)
    return makeError("too many program headers");
  L.BaseLength = std::min(InSize, L.FileSize);
  return std::move(L);
}

uint64_t Layout::outputSize(const Section &S) const {
  if (S.isNoBits())
    return 0;
  if (S.hasExternalContents())
    return S.size();
  auto It = Rebuilt.find(&S);
  return It != Rebuilt.end() ? It->second.size() : S.contents().size();
}

} // namespace hotswap
