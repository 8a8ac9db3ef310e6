//===- lib/Object/Object.cpp - Mutable ELF model --------------------------===//

#include "hotswap/Object/Object.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstring>

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
  for (const auto &S : Sections) {
    if (!S->isAlloc() || S->isNoBits())
      continue;
    uint64_t SSize = S->size();
    if (VAddr < S->Addr || VAddr - S->Addr >= SSize)
      continue;
    uint64_t Rel = VAddr - S->Addr;
    if (Size > SSize - Rel)
      return makeError("range " + hex(VAddr) + ".." + hex(VAddr + Size) +
                       " is not inside section '" + S->Name + "'");
    return S->contents().slice(Rel, Size);
  }
  return makeError("address " + hex(VAddr) +
                   " is not inside any section with file contents");
}

bool Object::needsNewLayout() const {
  if (SectionHeadersLast || Sections.size() != InTables.ShNum ||
      Segments.size() != InTables.PhNum)
    return true;
  for (const auto &P : Segments)
    if (P->IsNew)
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
