//===- lib/Object/Object.cpp - Mutable ELF model --------------------------===//

#include "hotswap/Object/Object.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;

MutableArrayRef<uint8_t> Section::mutableContents() {
  if (!Owned)
    Owned.emplace(Borrowed.begin(), Borrowed.end());
  return *Owned;
}

void Section::setContents(std::vector<uint8_t> Bytes) {
  Owned = std::move(Bytes);
}

Symbol &SymbolTable::add(Symbol S) {
  Modified = true;
  if (!S.isLocal()) {
    Symbols.push_back(std::move(S));
    return Symbols.back();
  }
  // Insert after the last local to keep the partition.
  auto It = std::find_if(Symbols.begin(), Symbols.end(),
                         [](const Symbol &X) { return !X.isLocal(); });
  return *Symbols.insert(It, std::move(S));
}

uint32_t SymbolTable::firstNonLocal() const {
  uint32_t I = 1;
  for (const Symbol &S : Symbols) {
    if (!S.isLocal())
      break;
    ++I;
  }
  return I;
}

const Symbol *SymbolTable::find(StringRef Name) const {
  for (const Symbol &S : Symbols)
    if (S.Name == Name)
      return &S;
  return nullptr;
}

SymbolTable *Object::symtab() const {
  for (const auto &T : SymbolTables)
    if (T->Sec->Type == ELF::SHT_SYMTAB)
      return T.get();
  return nullptr;
}

SymbolTable *Object::dynsym() const {
  for (const auto &T : SymbolTables)
    if (T->Sec->Type == ELF::SHT_DYNSYM)
      return T.get();
  return nullptr;
}

Section *Object::findSection(StringRef Name) const {
  for (const auto &S : Sections)
    if (S->Name == Name && S->Type != ELF::SHT_NULL)
      return S.get();
  return nullptr;
}

uint32_t Object::indexOf(const Section *S) const {
  for (size_t I = 0, E = Sections.size(); I != E; ++I)
    if (Sections[I].get() == S)
      return static_cast<uint32_t>(I);
  return 0;
}

Section *Object::sectionForAddress(uint64_t VAddr) const {
  for (const auto &S : Sections) {
    if (!S->isAlloc() || S->size() == 0)
      continue;
    if (VAddr >= S->Addr && VAddr - S->Addr < S->size())
      return S.get();
  }
  return nullptr;
}

const Segment *Object::loadSegmentFor(uint64_t VAddr, uint64_t Size) const {
  for (const auto &P : Segments) {
    if (P->Type != ELF::PT_LOAD)
      continue;
    if (VAddr < P->VAddr)
      continue;
    uint64_t Rel = VAddr - P->VAddr;
    if (Rel <= P->MemSize && Size <= P->MemSize - Rel)
      return P.get();
  }
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
  Sections.push_back(std::move(S));
  return *Sections.back();
}

Segment &Object::addSegment(std::unique_ptr<Segment> S) {
  S->IsNew = true;
  Segments.push_back(std::move(S));
  return *Segments.back();
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

  auto T = std::make_unique<SymbolTable>();
  T->Sec = &SymSec;
  T->StrTab = &StrSec;
  SymSec.Symbols = T.get();
  SymbolTables.push_back(std::move(T));
  return *SymbolTables.back();
}

Expected<ArrayRef<uint8_t>> Object::bytesAt(uint64_t VAddr,
                                            uint64_t Size) const {
  for (const auto &S : Sections) {
    if (!S->isAlloc() || S->isNoBits())
      continue;
    uint64_t SSize = S->size();
    if (VAddr < S->Addr || VAddr - S->Addr >= SSize)
      continue;
    uint64_t Rel = VAddr - S->Addr;
    if (Size > SSize - Rel)
      return createStringError(
          "range 0x%llx..0x%llx is not inside section '%s'",
          (unsigned long long)VAddr, (unsigned long long)(VAddr + Size),
          S->Name.c_str());
    return S->contents().slice(Rel, Size);
  }
  return createStringError("address 0x%llx is not inside any section with "
                           "file contents",
                           (unsigned long long)VAddr);
}
