//===- lib/Object/Layout.cpp - Where everything goes ----------------------===//
//
// computeLayout() in named steps, in the order lld's Writer::run reads:
// the string tables and symbol tables that changed (derived, never kept up
// to date by hand), the checks that nothing loaded changed size, then the
// offsets -- new segments after the input, the program header table, the
// grown and new non-loaded sections, the section header table last.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Object/Layout.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;
using namespace llvm::ELF;

namespace hotswap {

namespace {

using Elf_Ehdr = object::ELF64LE::Ehdr;
using Elf_Phdr = object::ELF64LE::Phdr;
using Elf_Shdr = object::ELF64LE::Shdr;
using Elf_Sym = object::ELF64LE::Sym;

/// The file offset alignment of a non-loaded section laid out anew, at most.
constexpr uint64_t MaxTailAlign = 0x1000;

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

uint64_t alignUp(uint64_t V, uint64_t A) { return A > 1 ? alignTo(V, A) : V; }

/// Every section but the null one at index 0: its header is written back as
/// read (whatever its fields say) and it has no contents, so it never takes
/// part in the layout.
ArrayRef<std::unique_ptr<Section>> sectionsAfterNull(const Object &Obj) {
  return Obj.sections().drop_front(Obj.sections().empty() ? 0 : 1);
}

/// Names appended to a string table: after what it holds (kept as it is),
/// each new name once.
class StringTableBuilder {
public:
  explicit StringTableBuilder(const Section &S) : Kept(S.contents()) {
    if (Kept.empty())
      Added.push_back(0);
  }
  uint32_t add(StringRef Name) {
    if (Name.empty())
      return 0;
    auto [It, Inserted] = Offsets.try_emplace(Name, 0);
    if (!Inserted)
      return It->second;
    It->second = static_cast<uint32_t>(Kept.size() + Added.size());
    Added.insert(Added.end(), Name.begin(), Name.end());
    Added.push_back(0);
    return It->second;
  }
  Layout::RebuiltTable take() { return {Kept, std::move(Added)}; }

private:
  ArrayRef<uint8_t> Kept;
  std::vector<uint8_t> Added;
  StringMap<uint32_t> Offsets;
};

/// The steps of computeLayout, on one object.
class LayoutBuilder {
public:
  explicit LayoutBuilder(const Object &Obj) : Obj(Obj) {}
  Expected<Layout> run();

private:
  Error findProgramHeaderHolder();
  Error buildSectionNames();
  Error buildSymbolTables();
  Error encodeSymbol(const Symbol &S, uint32_t NameOff, Elf_Sym &Out) const;
  Error finishStringTables();
  uint64_t outSize(const Section &S) const;
  Error checkLoadedSizes() const;
  uint64_t tailStart() const;
  Error checkAppended(uint64_t From) const;
  Layout keepInputLayout();
  Error placeNewSegment(size_t PI, uint64_t &MaxEnd);
  Error placeNewSegments();
  void placeProgramHeaders();
  Error placeTail();
  Error placeDescribingSegments();
  Error placeSectionHeaders();

  StringTableBuilder &stringTable(const Section &S);

  const Object &Obj;
  Layout L;
  std::optional<size_t> PhHolder;
  uint64_t PhSize = 0;
  /// Where the next appended part goes.
  uint64_t Pos = 0;
  /// The input's first Cut bytes stay where they are; after them, what the
  /// output holds is laid out here (Object::allowTailRelayout).
  uint64_t Cut = 0;
  DenseMap<const Section *, std::unique_ptr<StringTableBuilder>> Strings;
};

StringTableBuilder &LayoutBuilder::stringTable(const Section &S) {
  std::unique_ptr<StringTableBuilder> &B = Strings[&S];
  if (!B)
    B = std::make_unique<StringTableBuilder>(S);
  return *B;
}

/// The new segment asked to hold the program header table, if any.
Error LayoutBuilder::findProgramHeaderHolder() {
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
  return Error::success();
}

/// Sections whose name offset is unknown (new or renamed) get one in the
/// section name string table; existing names keep theirs.
Error LayoutBuilder::buildSectionNames() {
  if (!Obj.sectionNames()) {
    for (const auto &S : Obj.sections())
      if (S->Type != SHT_NULL && (S->isNew() || !S->Name.empty()))
        return makeError("object has no section name string table "
                         "to name section '" +
                         S->Name + "'");
    return Error::success();
  }
  for (const auto &S : Obj.sections())
    L.SectionNameOffsets[S.get()] =
        Obj.keepsInputName(*S) ? S->Orig->NameOffset
                               : stringTable(*Obj.sectionNames()).add(S->Name);
  return Error::success();
}

Error LayoutBuilder::encodeSymbol(const Symbol &S, uint32_t NameOff,
                                  Elf_Sym &Out) const {
  uint16_t Shndx = S.Shndx;
  if (S.Sec) {
    uint32_t Idx = S.Sec->index();
    if (Idx == 0 || Idx >= SHN_LORESERVE)
      return makeError("symbol '" + S.Name +
                       "' refers to a section that is not in the object");
    Shndx = static_cast<uint16_t>(Idx);
  }
  Out.st_name = NameOff;
  Out.setBindingAndType(S.Binding, S.Type);
  Out.st_other = S.Other;
  Out.st_shndx = Shndx;
  Out.st_value = S.Value;
  Out.st_size = S.Size;
  return Error::success();
}

/// Symbol tables that changed (or that the input did not partition, when
/// the object is laid out anew anyway: the repair verify asks for) are
/// written with their locals first and sh_info derived. A table whose input
/// symbols are all still first, in order, keeps its bytes and gets the new
/// entries appended.
Error LayoutBuilder::buildSymbolTables() {
  const bool Relaid = Obj.needsNewLayout();
  for (const auto &TP : Obj.symbolTables()) {
    const SymbolTable &T = *TP;
    if (!T.isModified() && !(Relaid && !T.wasPartitioned()))
      continue;
    const Section &TSec = T.section();
    if (TSec.isAlloc())
      return makeError("cannot change allocated symbol table '" + TSec.Name +
                       "' without moving loaded bytes");
    StringTableBuilder &Str = stringTable(T.stringTable());
    // Appended only (and a null entry of zeros, which a rewrite writes):
    // the input's entries stay as they are.
    const bool KeepInput =
        T.wasPartitioned() && T.onlyAppended() && !TSec.isNew() &&
        !TSec.isDirty() &&
        TSec.contents().size() == (T.inputCount() + 1) * sizeof(Elf_Sym) &&
        llvm::all_of(TSec.contents().take_front(sizeof(Elf_Sym)),
                     [](uint8_t B) { return B == 0; });
    // Locals first, each group in its current order; Order[First..] are
    // written. A table that kept the input's records has only globals after
    // them (SymbolTable), which are all that is written.
    std::vector<const Symbol *> Order;
    uint32_t FirstGlobal;
    size_t First = 0;
    std::optional<ArrayRef<Symbol>> Appended = T.appendedOnly();
    if (KeepInput && Appended) {
      for (const Symbol &S : *Appended)
        Order.push_back(&S);
      FirstGlobal = T.firstNonLocal();
    } else {
      Order.reserve(T.size());
      for (const Symbol &S : T.symbols())
        if (S.isLocal())
          Order.push_back(&S);
      FirstGlobal = static_cast<uint32_t>(Order.size()) + 1;
      for (const Symbol &S : T.symbols())
        if (!S.isLocal())
          Order.push_back(&S);
      if (KeepInput)
        First = T.inputCount();
    }
    Layout::RebuiltTable Table;
    if (KeepInput)
      Table.Kept = TSec.contents();
    Table.Added.assign(
        (Order.size() - First + (KeepInput ? 0 : 1)) * sizeof(Elf_Sym), 0);
    auto *Out =
        reinterpret_cast<Elf_Sym *>(Table.Added.data()) + (KeepInput ? 0 : 1);
    ArrayRef<uint8_t> OrigStr = T.stringTable().contents();
    for (size_t K = First; K < Order.size(); ++K) {
      const Symbol &S = *Order[K];
      uint32_t NameOff;
      if (S.OrigNameOffset && *S.OrigNameOffset < OrigStr.size() &&
          StringRef(reinterpret_cast<const char *>(
              OrigStr.data() + *S.OrigNameOffset)) == S.Name)
        NameOff = *S.OrigNameOffset;
      else
        NameOff = Str.add(S.Name);
      if (Error E = encodeSymbol(S, NameOff, Out[K - First]))
        return E;
    }
    L.Rebuilt[&TSec] = std::move(Table);
    L.SymtabInfo[&TSec] = FirstGlobal;
  }
  return Error::success();
}

Error LayoutBuilder::finishStringTables() {
  for (auto &KV : Strings) {
    Layout::RebuiltTable T = KV.second->take();
    if (KV.first->isAlloc() && T.size() != KV.first->contents().size())
      return makeError("cannot grow allocated string table '" + KV.first->Name +
                       "' without moving loaded bytes");
    L.Rebuilt[KV.first] = std::move(T);
  }
  return Error::success();
}

uint64_t LayoutBuilder::outSize(const Section &S) const {
  return L.outputSize(S);
}

Error LayoutBuilder::checkLoadedSizes() const {
  // Loaded sections of the input never change size.
  for (const auto &S : sectionsAfterNull(Obj))
    if (S->Orig && S->isAlloc() && !S->isNoBits() &&
        outSize(*S) != S->Orig->Size)
      return makeError("section '" + S->Name +
                       "' is loaded and cannot change size (" +
                       hex(S->Orig->Size) + " -> " + hex(outSize(*S)) + ")");
  return Error::success();
}

/// Where the input's movable tail starts (Object::allowTailRelayout): after
/// every byte that must stay -- the ELF header, the bytes of every program
/// header of the input (loaded ones above all), loaded sections, padding
/// that is not zeros -- when all that follows is non-loaded sections, the
/// header tables and zeros. The input size when nothing can move.
uint64_t LayoutBuilder::tailStart() const {
  ArrayRef<uint8_t> In = Obj.input();
  const uint64_t InSize = In.size();
  const InputTables &T = Obj.inputTables();
  // [Off, Off+Size) clamped to the input (the reader checked the tables).
  auto endOf = [&](uint64_t Off, uint64_t Size) {
    return Off >= InSize ? InSize : Off + std::min(Size, InSize - Off);
  };
  uint64_t Fixed = std::min<uint64_t>(sizeof(Elf_Ehdr), InSize);
  struct Span {
    uint64_t Offset, Size;
  };
  std::vector<Span> Movable;
  if (T.PhNum && endOf(T.PhOff, uint64_t(T.PhNum) * sizeof(Elf_Phdr)) ==
                     T.PhOff + uint64_t(T.PhNum) * sizeof(Elf_Phdr)) {
    // The input's own program headers, whatever the model made of them.
    for (uint16_t I = 0; I < T.PhNum; ++I) {
      Elf_Phdr P;
      memcpy(&P, In.data() + T.PhOff + I * sizeof(Elf_Phdr), sizeof P);
      if (P.p_filesz)
        Fixed = std::max(Fixed, endOf(P.p_offset, P.p_filesz));
    }
    Movable.push_back({T.PhOff, uint64_t(T.PhNum) * sizeof(Elf_Phdr)});
  } else if (T.PhNum) {
    return InSize;
  }
  if (T.ShNum)
    Movable.push_back({T.ShOff, uint64_t(T.ShNum) * sizeof(Elf_Shdr)});
  for (const auto &S : sectionsAfterNull(Obj)) {
    if (!S->Orig || S->isNoBits() || !S->Orig->Size)
      continue;
    if (S->isAlloc())
      Fixed = std::max(Fixed, endOf(S->Orig->Offset, S->Orig->Size));
    else
      Movable.push_back({S->Orig->Offset, S->Orig->Size});
  }
  llvm::sort(Movable,
             [](const Span &A, const Span &B) { return A.Offset < B.Offset; });
  // (Bytes an earlier run appended need no keeping, whatever they are.)
  auto zeros = [&](uint64_t From, uint64_t To) {
    To = std::min(To, std::max(From, Obj.tailOursFrom()));
    return std::all_of(In.begin() + From, In.begin() + To,
                       [](uint8_t B) { return B == 0; });
  };
  uint64_t Start = Fixed, Covered = Fixed;
  for (const Span &M : Movable) {
    const uint64_t End = endOf(M.Offset, M.Size);
    // Straddling what stays, or overlapping another (each moved would be a
    // copy of its own): it stays too.
    if (M.Offset < Start || M.Offset < Covered) {
      Start = std::max({Start, Covered, End});
      Covered = Start;
      continue;
    }
    if (M.Offset > Covered && !zeros(Covered, M.Offset))
      Start = M.Offset; // bytes no section holds: kept where they are
    Covered = std::max(Covered, End);
  }
  if (Covered < InSize && !zeros(Covered, InSize))
    return InSize;
  return Start;
}

/// Object::replaceAppended: nothing of the input that stays (a program
/// header's bytes, a loaded section) lies past \p From.
Error LayoutBuilder::checkAppended(uint64_t From) const {
  if (From > Obj.input().size())
    return makeError("internal error: the bytes laid out again start at " +
                     hex(From) + ", past the input's end");
  for (size_t PI = 0; PI < Obj.segments().size(); ++PI) {
    const Segment &P = *Obj.segments()[PI];
    if (!P.IsNew && P.Type != PT_PHDR && P.FileSize &&
        P.Offset + P.FileSize > From)
      return makeError("internal error: program header " + Twine(PI) +
                       " of the input reaches past " + hex(From) +
                       ", where the bytes laid out again start");
  }
  for (const auto &S : sectionsAfterNull(Obj))
    if (S->Orig && S->isAlloc() && !S->isNoBits() &&
        S->Orig->Offset + S->Orig->Size > From)
      return makeError("internal error: loaded section '" + S->Name +
                       "' of the input reaches past " + hex(From) +
                       ", where the bytes laid out again start");
  return Error::success();
}

/// Nothing but bytes edited in place: every offset stays.
Layout LayoutBuilder::keepInputLayout() {
  const uint64_t InSize = Obj.input().size();
  L.InPlace = true;
  L.FileSize = InSize;
  L.PhOff = Obj.inputTables().PhOff;
  L.ShOff = Obj.inputTables().ShOff;
  for (size_t I = 0; I < Obj.sections().size(); ++I)
    L.SectionOffsets[I] = Obj.sections()[I]->Orig->Offset;
  L.BaseLength = InSize;
  L.TailStart = InSize;
  return std::move(L);
}

/// Places new segment \p PI above \p MaxEnd, after Pos in the file.
Error LayoutBuilder::placeNewSegment(size_t PI, uint64_t &MaxEnd) {
  const Segment &P = *Obj.segments()[PI];
  Segment &OutP = L.Segments[PI];
  if (P.Members.empty() && !P.HoldsProgramHeaders) {
    OutP.Offset = 0;
    OutP.FileSize = 0;
    return Error::success();
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
    Off = newSegmentOffset(Pos, P.VAddr, Align);
  }
  OutP.Offset = Off;
  uint64_t MemEnd = P.VAddr, FileEnd = P.VAddr;
  if (P.HoldsProgramHeaders) {
    // At the segment's start, before its members: where GNU objcopy and
    // strip put the table of a PT_LOAD that includes it (they lay such a
    // segment out as the table, then its sections), so that their output
    // keeps every address.
    if (P.VAddr % 8 != 0)
      return makeError("new segment at address " + hex(P.VAddr) +
                       " holds the program header table but is not 8-byte "
                       "aligned");
    if (PhSize > UINT64_MAX - P.VAddr)
      return makeError("no room for the program header table at address " +
                       hex(P.VAddr));
    L.PhOff = Off;
    FileEnd = MemEnd = P.VAddr + PhSize;
  }
  for (const Section *S : P.Members) {
    if (S->Addr < P.VAddr)
      return makeError("section '" + S->Name +
                       "' lies below its segment's address");
    if (P.HoldsProgramHeaders && S->Addr - P.VAddr < PhSize)
      return makeError("section '" + S->Name + "' at address " + hex(S->Addr) +
                       " lies inside the program header table of its "
                       "segment (" +
                       hex(P.VAddr) + " to " + hex(P.VAddr + PhSize) + ")");
    L.SectionOffsets[S->index()] = Off + (S->Addr - P.VAddr);
    MemEnd = std::max(MemEnd, S->Addr + S->size());
    if (!S->isNoBits())
      FileEnd = std::max(FileEnd, S->Addr + S->size());
  }
  OutP.FileSize = FileEnd - P.VAddr;
  OutP.MemSize = std::max(MemEnd - P.VAddr, P.MemSize);
  if (Error E = checkOutputEnd(Off, OutP.FileSize, "new segment " + Twine(PI)))
    return E;
  Pos = Off + OutP.FileSize;
  MaxEnd = std::max(MaxEnd, P.VAddr + OutP.MemSize);
  return Error::success();
}

/// New loaded segments, above every existing address, after the input.
Error LayoutBuilder::placeNewSegments() {
  uint64_t MaxEnd = 0;
  for (const auto &P : Obj.segments())
    if (!P->IsNew && P->Type == PT_LOAD)
      MaxEnd = std::max(MaxEnd, P->VAddr + P->MemSize);
  for (const auto &S : sectionsAfterNull(Obj))
    if (S->Orig && S->isAlloc())
      MaxEnd = std::max(MaxEnd, S->Addr + S->size());
  for (size_t PI = 0; PI < Obj.segments().size(); ++PI)
    if (Obj.segments()[PI]->IsNew)
      if (Error E = placeNewSegment(PI, MaxEnd))
        return E;
  return Error::success();
}

/// Segments that describe a section (Segment::Describes) take its place.
Error LayoutBuilder::placeDescribingSegments() {
  for (size_t PI = 0; PI < Obj.segments().size(); ++PI) {
    const Segment &P = *Obj.segments()[PI];
    if (!P.Describes)
      continue;
    const Section &S = *P.Describes;
    if (P.Type == PT_LOAD || !S.isAlloc() || S.isNoBits() ||
        S.index() >= Obj.sections().size() ||
        Obj.sections()[S.index()].get() != &S)
      return makeError("program header " + Twine(PI) +
                       " cannot describe section '" + S.Name + "'");
    Segment &OutP = L.Segments[PI];
    OutP.Offset = L.SectionOffsets[S.index()];
    OutP.VAddr = OutP.PAddr = S.Addr;
    OutP.FileSize = OutP.MemSize = S.size();
  }
  return Error::success();
}

/// The program header table: inside the segment asked to hold it (PT_PHDR
/// follows it there), else in place if it still fits in its slot (which
/// nothing else uses: no input byte moves), else after the new segments,
/// PT_PHDR then turned into PT_NULL.
void LayoutBuilder::placeProgramHeaders() {
  const bool PhInPlace = Obj.inputTables().PhNum &&
                         Obj.segments().size() <= Obj.inputTables().PhNum &&
                         Obj.inputTables().PhOff + PhSize <= Cut;
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
    for (Segment &P : L.Segments)
      if (P.Type == PT_PHDR)
        P = Segment();
  }
}

/// Non-loaded sections that did not change stay where they are (debug
/// information included); those that grew, then new ones, are appended in
/// their original file order. A grown table's old bytes stay behind,
/// unreferenced.
Error LayoutBuilder::placeTail() {
  std::vector<uint32_t> Tail;
  for (uint32_t I = 1; I < Obj.sections().size(); ++I) {
    const Section &S = *Obj.sections()[I];
    if (S.isAlloc() && S.Orig) {
      L.SectionOffsets[I] = S.Orig->Offset;
      continue;
    }
    if (S.isAlloc())
      continue; // new loaded sections were placed with their segment
    if (S.Orig && (S.isNoBits() || (outSize(S) == S.Orig->Size &&
                                    (S.Orig->Offset < Cut || !S.Orig->Size)))) {
      L.SectionOffsets[I] = S.Orig->Offset;
      continue;
    }
    Tail.push_back(I);
  }
  llvm::stable_sort(Tail, [&](uint32_t A, uint32_t B) {
    const Section &SA = *Obj.sections()[A], &SB = *Obj.sections()[B];
    if (SA.AfterInput != SB.AfterInput)
      return SB.AfterInput;
    if (SA.isNew() != SB.isNew())
      return SB.isNew();
    if (SA.isNew())
      return false;
    return SA.Orig->Offset < SB.Orig->Offset;
  });
  for (uint32_t I : Tail) {
    const Section &S = *Obj.sections()[I];
    if (S.AfterInput)
      Pos = std::max<uint64_t>(Pos, Obj.input().size());
    // A section of the moved tail that nothing has passed yet stays where
    // it was (its bytes, or the ones a grown table keeps, at their offset).
    if (S.Orig && S.Orig->Offset >= Cut && S.Orig->Offset >= Pos &&
        !S.AfterInput && Cut < Obj.input().size()) {
      L.SectionOffsets[I] = S.Orig->Offset;
      Pos = S.Orig->Offset + outSize(S);
      continue;
    }
    // sh_addralign constrains addresses; a section nothing loads has none,
    // so its file offset is aligned to at most a page (a header claiming
    // 2 GiB must not make a 5 KB input a 2 GiB output). The header keeps
    // the value it had.
    uint64_t A = std::min<uint64_t>(S.AddrAlign, MaxTailAlign);
    if (S.Type == SHT_SYMTAB || S.Type == SHT_DYNSYM)
      A = std::max<uint64_t>(A, 8);
    Pos = alignUp(Pos, A);
    if (Error E = checkOutputEnd(Pos, outSize(S), "section '" + S.Name + "'"))
      return E;
    L.SectionOffsets[I] = Pos;
    Pos += outSize(S);
  }
  return Error::success();
}

/// The section header table, last and 8-byte aligned.
Error LayoutBuilder::placeSectionHeaders() {
  const size_t NSec = Obj.sections().size();
  Pos = alignTo(Pos, 8);
  L.ShOff = NSec ? Pos : 0;
  if (Error E = checkOutputEnd(Pos, NSec * sizeof(Elf_Shdr),
                               "the section header table"))
    return E;
  Pos += NSec * sizeof(Elf_Shdr);
  L.FileSize = Pos;
  // Never shorter than the input (a tail laid out again may be): offsets
  // of empty sections stay valid, and a record of the input's bytes finds
  // every one of its offsets in the output.
  if (Cut < Obj.input().size())
    L.FileSize = std::max<uint64_t>(L.FileSize, Obj.input().size());
  if (NSec >= SHN_LORESERVE)
    return makeError("too many sections (" + Twine(NSec) + ")");
  if (Obj.segments().size() >= PN_XNUM)
    return makeError("too many program headers");
  // The input up to the tail; from there on only what the layout placed
  // (zeros between: no stale copy of a moved table stays behind).
  L.BaseLength = std::min<uint64_t>(Cut, L.FileSize);
  L.TailStart = Cut;
  const InputTables &T = Obj.inputTables();
  for (auto [Off, Size] : {std::pair<uint64_t, uint64_t>(
                               T.PhOff, uint64_t(T.PhNum) * sizeof(Elf_Phdr)),
                           std::pair<uint64_t, uint64_t>(
                               T.ShOff, uint64_t(T.ShNum) * sizeof(Elf_Shdr))})
    if (Size && Off >= Cut && Off <= Obj.input().size() &&
        Size <= Obj.input().size() - Off && Off < Obj.tailOursFrom())
      L.OldTables.push_back({Off, Size});
  return Error::success();
}

Expected<Layout> LayoutBuilder::run() {
  L.SectionOffsets.assign(Obj.sections().size(), 0);
  for (const auto &P : Obj.segments())
    L.Segments.push_back(*P);
  PhSize = Obj.segments().size() * sizeof(Elf_Phdr);
  if (Error E = findProgramHeaderHolder())
    return std::move(E);
  // Derived tables first: existing strings keep their offsets, new names
  // are appended.
  if (Error E = buildSectionNames())
    return std::move(E);
  if (Error E = buildSymbolTables())
    return std::move(E);
  if (Error E = finishStringTables())
    return std::move(E);
  if (Error E = checkLoadedSizes())
    return std::move(E);

  // The model decides (its passes' invariants depend on the same answer);
  // what was derived above must agree with it.
  if (!Obj.needsNewLayout()) {
    for (const auto &S : sectionsAfterNull(Obj))
      if (!S->isNoBits() && outSize(*S) != S->Orig->Size)
        return makeError("internal error: section '" + S->Name +
                         "' changed size but the object keeps its layout");
    return keepInputLayout();
  }
  L.InPlace = false;
  // Every byte of the input stays where it is (one copy, in the kernel when
  // the output goes to a file); what is new or grew goes after its end --
  // or after its last byte that must stay, when the tail may move.
  Cut = Obj.tailRelayoutAllowed() ? tailStart() : Obj.input().size();
  if (std::optional<uint64_t> From = Obj.appendedFrom()) {
    if (Error E = checkAppended(*From))
      return std::move(E);
    Cut = std::min(Cut, *From);
  }
  Pos = Cut;
  if (Error E = placeNewSegments())
    return std::move(E);
  placeProgramHeaders();
  if (Error E = placeTail())
    return std::move(E);
  if (Error E = placeDescribingSegments())
    return std::move(E);
  if (Error E = placeSectionHeaders())
    return std::move(E);
  return std::move(L);
}

} // namespace

uint64_t newSegmentOffset(uint64_t Pos, uint64_t VAddr, uint64_t Align) {
  uint64_t Off = alignTo(Pos, Align) + VAddr % Align;
  if (Off >= Align && Off - Align >= Pos)
    Off -= Align;
  return Off;
}

Expected<Layout> computeLayout(const Object &Obj) {
  return LayoutBuilder(Obj).run();
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
