//===- lib/Object/Object.cpp - Mutable ELF model --------------------------===//

#include "hotswap/Object/Object.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/Record.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace llvm;
using namespace hotswap;

Error Section::overwrite(uint64_t Offset, ArrayRef<uint8_t> Bytes) {
  uint64_t Size = contents().size();
  if (isNoBits() || Offset > Size || Bytes.size() > Size - Offset)
    return makeError("cannot write " + Twine(Bytes.size()) + " bytes at " +
                     hex(Offset) + " of section '" + Name + "' (size " +
                     hex(Size) + ")");
  if (!Owned)
    Owned.emplace(Borrowed.begin(), Borrowed.end());
  std::copy(Bytes.begin(), Bytes.end(), Owned->begin() + Offset);
  return Error::success();
}

Symbol SymbolTable::inputSymbol(size_t K) const {
  // Records of alignment 1: a code object inside a bundle may lie anywhere.
  const auto &R = recordAt<object::ELF64LE::Sym>(
      InputRecords, K * sizeof(object::ELF64LE::Sym));
  Symbol S;
  const uint32_t NameOff = R.st_name;
  S.Other = R.st_other;
  S.Value = R.st_value;
  S.Size = R.st_size;
  S.Binding = R.getBinding();
  S.Type = R.getType();
  // The reader checked the offset (NUL-terminated table).
  if (NameOff != 0 || !InputStr.empty())
    S.Name =
        StringRef(reinterpret_cast<const char *>(InputStr.data()) + NameOff);
  S.OrigNameOffset = NameOff;
  S.Shndx = R.st_shndx;
  if (S.Shndx != ELF::SHN_UNDEF && S.Shndx < ELF::SHN_LORESERVE)
    S.Sec = InputSections[S.Shndx];
  return S;
}

void SymbolTable::scanInput(function_ref<bool(size_t)> Each) const {
  const bool Release = Owner && InputRecords.size() >= ReleaseFrom;
  constexpr size_t Step = ReleaseFrom / sizeof(object::ELF64LE::Sym);
  size_t Done = 0; // records handed back
  size_t K = 0;
  for (; K != InputCount; ++K) {
    if (!Each(K))
      break;
    if (Release && K + 1 - Done == Step) {
      Owner->releaseInput(
          InputRecords.slice(Done * sizeof(object::ELF64LE::Sym),
                             Step * sizeof(object::ELF64LE::Sym)));
      Done = K + 1;
    }
  }
  if (!Release)
    return;
  const size_t End = std::min(K + 1, InputCount);
  if (End > Done)
    Owner->releaseInput(
        InputRecords.slice(Done * sizeof(object::ELF64LE::Sym),
                           (End - Done) * sizeof(object::ELF64LE::Sym)));
  Owner->releaseInput(InputStr);
}

void SymbolTable::materialize() const {
  if (isMaterialized())
    return;
  std::lock_guard<std::mutex> G(MaterializeLock);
  if (isMaterialized())
    return;
  std::vector<Symbol> All;
  All.reserve(InputCount + Symbols.size());
  scanInput([&](size_t K) {
    All.push_back(inputSymbol(K));
    return true;
  });
  All.insert(All.end(), Symbols.begin(), Symbols.end());
  Symbols = std::move(All);
  Materialized.store(true, std::memory_order_release);
}

void SymbolTable::forEach(function_ref<void(const Symbol &)> F) const {
  if (!isMaterialized())
    scanInput([&](size_t K) {
      F(inputSymbol(K));
      return true;
    });
  for (const Symbol &S : Symbols)
    F(S);
}

void SymbolTable::forEachOfType(uint8_t Type,
                                function_ref<void(const Symbol &)> F) const {
  if (!isMaterialized())
    scanInput([&](size_t K) {
      if (recordAt<object::ELF64LE::Sym>(InputRecords,
                                         K * sizeof(object::ELF64LE::Sym))
              .getType() == Type)
        F(inputSymbol(K));
      return true;
    });
  for (const Symbol &S : Symbols)
    if (S.Type == Type)
      F(S);
}

Symbol &SymbolTable::add(Symbol S) {
  Modified = true;
  S.Name = Names.save(S.Name);
  if (!S.isLocal()) {
    Symbols.push_back(std::move(S));
    return Symbols.back();
  }
  // Insert after the last local to keep the partition.
  materialize();
  auto It = std::find_if(Symbols.begin(), Symbols.end(),
                         [](const Symbol &X) { return !X.isLocal(); });
  if (It != Symbols.end())
    InsertedBefore = true;
  return *Symbols.insert(It, std::move(S));
}

uint32_t SymbolTable::firstNonLocal() const {
  if (!isMaterialized()) // only globals were added after the input's
    return InputFirstNonLocal;
  uint32_t I = 1;
  for (const Symbol &S : Symbols) {
    if (!S.isLocal())
      break;
    ++I;
  }
  return I;
}

std::optional<Symbol> SymbolTable::find(StringRef Name) const {
  return findIf([&](const Symbol &S) { return S.Name == Name; });
}

std::optional<Symbol>
SymbolTable::findIf(function_ref<bool(const Symbol &)> Pred) const {
  if (!isMaterialized()) {
    std::optional<Symbol> Found;
    scanInput([&](size_t K) {
      Symbol S = inputSymbol(K);
      if (!Pred(S))
        return true;
      Found = S;
      return false;
    });
    if (Found)
      return Found;
  }
  for (const Symbol &S : Symbols)
    if (Pred(S))
      return S;
  return std::nullopt;
}

SymbolTable *Object::symtab() const {
  for (const auto &T : SymbolTables)
    if (T->section().Type == ELF::SHT_SYMTAB)
      return T.get();
  return nullptr;
}

SymbolTable *Object::dynsym() const {
  for (const auto &T : SymbolTables)
    if (T->section().Type == ELF::SHT_DYNSYM)
      return T.get();
  return nullptr;
}

Section *Object::findSection(StringRef Name) const {
  for (const auto &S : Sections)
    if (S->Name == Name && S->Type != ELF::SHT_NULL)
      return S.get();
  return nullptr;
}

/// Which of a set of address ranges holds an address, first in table order
/// where they overlap: the address space cut at every range's ends into
/// pieces, each knowing the first range that covers it (one sweep).
class IntervalMap {
public:
  struct Range {
    uint64_t Begin, End; // End > Begin
    uint32_t Order;      // position in the table: the lower wins
  };
  explicit IntervalMap(std::vector<Range> Ranges) {
    std::vector<std::pair<uint64_t, int64_t>> Events; // +Order+1 / -(Order+1)
    for (const Range &R : Ranges) {
      Events.push_back({R.Begin, int64_t(R.Order) + 1});
      Events.push_back({R.End, -(int64_t(R.Order) + 1)});
    }
    llvm::sort(Events);
    std::set<uint32_t> Active;
    for (size_t I = 0; I < Events.size();) {
      const uint64_t At = Events[I].first;
      for (; I < Events.size() && Events[I].first == At; ++I) {
        if (Events[I].second > 0)
          Active.insert(uint32_t(Events[I].second - 1));
        else
          Active.erase(uint32_t(-Events[I].second - 1));
      }
      Pieces.push_back(
          {At, Active.empty() ? NoRange : int64_t(*Active.begin())});
    }
  }
  /// The first range (in table order) that holds \p Addr, or -1.
  int64_t find(uint64_t Addr) const {
    auto It = llvm::upper_bound(
        Pieces, Addr, [](uint64_t A, const Piece &P) { return A < P.Begin; });
    return It == Pieces.begin() ? NoRange : std::prev(It)->Order;
  }

private:
  static constexpr int64_t NoRange = -1;
  struct Piece {
    uint64_t Begin;
    int64_t Order;
  };
  std::vector<Piece> Pieces;
};

class Object::AddressIndex {
public:
  explicit AddressIndex(const Object &Obj)
      : Alloc(ranges(Obj, /*FileContentsOnly=*/false)),
        WithContents(ranges(Obj, /*FileContentsOnly=*/true)), Loads(loads(Obj)),
        NumSections(Obj.Sections.size()), NumSegments(Obj.Segments.size()) {
    for (const auto &S : Obj.Sections)
      if (S->isNew())
        NewSizes.push_back({S.get(), S->size()});
  }
  /// Whether the object changed in a way that moves what it indexes: a
  /// section or segment added or removed, or a new section resized (the
  /// input's loaded sections never change size).
  bool isStaleFor(const Object &Obj) const {
    if (NumSections != Obj.Sections.size() ||
        NumSegments != Obj.Segments.size())
      return true;
    for (const auto &[S, Size] : NewSizes)
      if (S->size() != Size)
        return true;
    return false;
  }
  IntervalMap Alloc, WithContents, Loads;

private:
  static std::vector<IntervalMap::Range> ranges(const Object &Obj,
                                                bool FileContentsOnly) {
    std::vector<IntervalMap::Range> R;
    for (const auto &S : Obj.Sections)
      if (S->isAlloc() && S->size() != 0 &&
          !(FileContentsOnly && S->isNoBits()) &&
          S->size() <= UINT64_MAX - S->Addr)
        R.push_back({S->Addr, S->Addr + S->size(), S->index()});
    return R;
  }
  static std::vector<IntervalMap::Range> loads(const Object &Obj) {
    std::vector<IntervalMap::Range> R;
    for (size_t I = 0; I < Obj.Segments.size(); ++I) {
      const Segment &P = *Obj.Segments[I];
      if (P.Type == ELF::PT_LOAD && P.MemSize != 0 &&
          P.MemSize <= UINT64_MAX - P.VAddr)
        R.push_back({P.VAddr, P.VAddr + P.MemSize, uint32_t(I)});
    }
    return R;
  }
  size_t NumSections, NumSegments;
  std::vector<std::pair<const Section *, uint64_t>> NewSizes;
};

Object::Object() = default;
Object::~Object() = default;

const Object::AddressIndex &Object::addresses() const {
  if (!Index || Index->isStaleFor(*this))
    Index = std::make_unique<AddressIndex>(*this);
  return *Index;
}

Section *Object::sectionForAddress(uint64_t VAddr) const {
  int64_t I = addresses().Alloc.find(VAddr);
  return I < 0 ? nullptr : Sections[I].get();
}

const Segment *Object::loadSegmentFor(uint64_t VAddr, uint64_t Size) const {
  auto Holds = [&](const Segment &P) {
    if (P.Type != ELF::PT_LOAD || VAddr < P.VAddr)
      return false;
    uint64_t Rel = VAddr - P.VAddr;
    return Rel <= P.MemSize && Size <= P.MemSize - Rel;
  };
  // The PT_LOAD whose memory holds VAddr; a range that ends exactly at a
  // segment's end (VAddr == end, Size 0) is held by it too, as is an empty
  // range at an empty segment's address: those few are looked for in turn.
  int64_t I = addresses().Loads.find(VAddr);
  if (I >= 0 && Holds(*Segments[I]))
    return Segments[I].get();
  if (Size != 0)
    return nullptr;
  for (const auto &P : Segments)
    if (Holds(*P))
      return P.get();
  return nullptr;
}

uint64_t Object::firstFreeAddress(uint64_t PageSize) const {
  uint64_t End = 0;
  for (const auto &P : Segments)
    if (P->Type == ELF::PT_LOAD)
      End = std::max(End, P->VAddr + P->MemSize); // validated by the reader
  for (const auto &S : Sections)
    if (S->isAlloc())
      End = std::max(End, S->Addr + S->size());
  return alignTo(End, PageSize);
}

Section &Object::addSection(std::unique_ptr<Section> S) {
  S->Index = static_cast<uint32_t>(Sections.size());
  Sections.push_back(std::move(S));
  return *Sections.back();
}

Segment &Object::addSegment(std::unique_ptr<Segment> S) {
  S->IsNew = true;
  Segments.push_back(std::move(S));
  return *Segments.back();
}

void Object::removeSegment(size_t Index) {
  assert(Index < Segments.size() && "no such program header");
  Segments.erase(Segments.begin() + Index);
  this->Index.reset();
}

Error Object::removeSections(ArrayRef<uint32_t> Indexes) {
  if (Indexes.empty())
    return Error::success();
  std::vector<bool> Gone(Sections.size(), false);
  for (uint32_t I : Indexes) {
    if (I == 0 || I >= Sections.size())
      return makeError("cannot remove section " + Twine(I) +
                       ": there is no such section");
    Gone[I] = true;
  }
  const uint32_t First = *llvm::min_element(Indexes);
  const std::string Which = "cannot remove section " + Twine(First).str() +
                            " ('" + Sections[First]->Name + "'): ";
  // (First or a later one: those are gone or move down.)
  auto Moves = [&](const Section *S) { return S && S->index() >= First; };
  if (Moves(SectionNames))
    return makeError(Which + "it or a later section is the section name "
                             "string table");
  for (const auto &S : Sections) {
    if (S->Type == ELF::SHT_GROUP || S->Type == ELF::SHT_SYMTAB_SHNDX)
      return makeError(Which + "the object has section groups or extended "
                               "section indexes");
    if (Gone[S->index()])
      continue;
    const bool InfoNamesSection = (S->Flags & ELF::SHF_INFO_LINK) ||
                                  S->Type == ELF::SHT_REL ||
                                  S->Type == ELF::SHT_RELA;
    if (Moves(S->Link) || (InfoNamesSection && S->Info >= First))
      return makeError(Which + "section '" + S->Name +
                       "' names it or a later one");
  }
  for (const auto &T : SymbolTables) {
    if (T->section().index() >= First || T->stringTable().index() >= First)
      return makeError(Which + "it or a later one is a symbol table");
    std::optional<std::string> Named;
    T->forEach([&](const Symbol &Sym) {
      if (!Named && (Moves(Sym.Sec) || (!Sym.Sec && Sym.Shndx >= First &&
                                        Sym.Shndx < ELF::SHN_LORESERVE)))
        Named = Sym.Name.str();
    });
    if (Named)
      return makeError(Which + "symbol '" + *Named +
                       "' is defined in it or a later one");
  }
  for (const auto &P : Segments)
    if (Moves(P->Describes) || llvm::any_of(P->Members, Moves))
      return makeError(Which + "a segment holds it or a later one");
  std::vector<std::unique_ptr<Section>> Kept;
  for (auto &S : Sections)
    if (!Gone[S->index()])
      Kept.push_back(std::move(S));
  Sections = std::move(Kept);
  for (uint32_t I = First; I < Sections.size(); ++I)
    Sections[I]->Index = I;
  Index.reset();
  return Error::success();
}

SymbolTable &Object::createSymtab() {
  auto Str = std::make_unique<Section>();
  Str->Name = ".strtab";
  Str->Type = ELF::SHT_STRTAB;
  Str->AddrAlign = 1;
  Str->setContents({0});
  Section &StrSec = addSection(std::move(Str));

  auto Sym = std::make_unique<Section>();
  Sym->Name = ".symtab";
  Sym->Type = ELF::SHT_SYMTAB;
  Sym->AddrAlign = 8;
  Sym->EntSize = sizeof(ELF::Elf64_Sym);
  Sym->Link = &StrSec;
  Sym->Info = 1;
  Sym->setContents(std::vector<uint8_t>(sizeof(ELF::Elf64_Sym), 0));
  Section &SymSec = addSection(std::move(Sym));

  auto T = std::make_unique<SymbolTable>(SymSec, StrSec);
  SymSec.Symbols = T.get();
  SymbolTables.push_back(std::move(T));
  return *SymbolTables.back();
}

Expected<ArrayRef<uint8_t>> Object::bytesAt(uint64_t VAddr,
                                            uint64_t Size) const {
  if (std::optional<ArrayRef<uint8_t>> B = bytesIfAt(VAddr, Size))
    return *B;
  int64_t I = addresses().WithContents.find(VAddr);
  if (I < 0)
    return makeError("address " + hex(VAddr) +
                     " is not inside any section with file contents");
  return makeError("range " + hex(VAddr) + ".." + hex(VAddr + Size) +
                   " is not inside section '" + Sections[I]->Name + "'");
}

std::optional<ArrayRef<uint8_t>> Object::bytesIfAt(uint64_t VAddr,
                                                   uint64_t Size) const {
  int64_t I = addresses().WithContents.find(VAddr);
  if (I < 0)
    return std::nullopt;
  const Section &S = *Sections[I];
  uint64_t Rel = VAddr - S.Addr;
  if (Size > S.size() - Rel)
    return std::nullopt;
  return S.contents().slice(Rel, Size);
}

bool Object::needsNewLayout() const {
  if (SectionHeadersLast || Sections.size() != InTables.ShNum ||
      Segments.size() != InTables.PhNum)
    return true;
  for (const auto &P : Segments)
    if (P->IsNew || P->Describes)
      return true;
  // Symbol tables only grow (SymbolTable::add): a modified one is longer.
  for (const auto &T : SymbolTables)
    if (T->isModified())
      return true;
  // Section 0's header is written back as read; it has no contents. (No
  // drop_begin: a file without section headers has no section 0 either.)
  for (const auto &S : ArrayRef(Sections).drop_front(Sections.empty() ? 0 : 1))
    if (S->isNew() || (!S->isNoBits() && S->size() != S->Orig->Size))
      return true;
  // A renamed section needs a new name in the section name string table.
  if (SectionNames)
    for (const auto &S : Sections)
      if (!keepsInputName(*S))
        return true;
  return false;
}

bool Object::keepsInputName(const Section &S) const {
  if (!S.Orig || !SectionNames)
    return false;
  ArrayRef<uint8_t> Names = SectionNames->contents();
  if (S.Orig->NameOffset >= Names.size())
    return false;
  const char *P =
      reinterpret_cast<const char *>(Names.data()) + S.Orig->NameOffset;
  return StringRef(P, strnlen(P, Names.size() - S.Orig->NameOffset)) == S.Name;
}

bool Object::sectionHeadersWillBeLastAndAligned() const {
  if (Sections.empty() || needsNewLayout())
    return true;
  if (InTables.ShOff % 8 != 0)
    return false;
  for (const auto &S : llvm::drop_begin(Sections))
    if (!S->isNoBits() && S->size() &&
        S->Orig->Offset + S->size() > InTables.ShOff)
      return false;
  return true;
}
