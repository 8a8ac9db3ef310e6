//===- lib/Object/Summary.cpp - Readable change dumps ---------------------===//

#include "hotswap/Object/Summary.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

using namespace llvm;
using namespace hotswap;

static std::string phdrType(uint32_t T) {
  switch (T) {
  case ELF::PT_NULL:
    return "PT_NULL";
  case ELF::PT_LOAD:
    return "PT_LOAD";
  case ELF::PT_DYNAMIC:
    return "PT_DYNAMIC";
  case ELF::PT_NOTE:
    return "PT_NOTE";
  case ELF::PT_PHDR:
    return "PT_PHDR";
  case ELF::PT_GNU_STACK:
    return "PT_GNU_STACK";
  case ELF::PT_GNU_RELRO:
    return "PT_GNU_RELRO";
  default:
    return hex(T);
  }
}

ObjectSnapshot ObjectSnapshot::take(const Object &Obj) {
  ObjectSnapshot S;
  for (const auto &Sec : Obj.sections()) {
    ObjectSnapshot::Sec X{Sec->Name, Sec->Type, Sec->Addr, Sec->size(), {}};
    // Allocated sections can only be edited in place: keep their bytes to
    // show which ranges changed.
    if (Sec->isAlloc() && !Sec->isNoBits())
      X.Bytes.assign(Sec->contents().begin(), Sec->contents().end());
    S.Sections.push_back(std::move(X));
  }
  for (const auto &P : Obj.segments())
    S.Segments.push_back({P->Type, P->Flags, P->VAddr, P->MemSize});
  for (const auto &T : Obj.symbolTables()) {
    auto &V = S.Symbols[T->section().Name];
    for (const Symbol &Sym : T->symbols())
      V.push_back(Sym.Name.str());
  }
  S.SectionHeadersLast = Obj.sectionHeadersLastRequested();
  return S;
}

void ObjectSnapshot::printDiff(const Object &Now, raw_ostream &OS) const {
  bool Any = false;
  for (size_t I = 0; I < Now.sections().size(); ++I) {
    const Section &S = *Now.sections()[I];
    if (I >= Sections.size()) {
      OS << "  + section [" << I << "] '" << S.Name << "' addr " << hex(S.Addr)
         << " size " << hex(S.size()) << "\n";
      Any = true;
      continue;
    }
    const Sec &Old = Sections[I];
    if (Old.Size != S.size()) {
      OS << "  ~ section [" << I << "] '" << S.Name << "' size "
         << hex(Old.Size) << " -> " << hex(S.size()) << "\n";
      Any = true;
    } else if (S.isAlloc() && !S.isNoBits() && !Old.Bytes.empty()) {
      ArrayRef<uint8_t> C = S.contents();
      for (size_t B = 0; B < C.size();) {
        if (C[B] == Old.Bytes[B]) {
          ++B;
          continue;
        }
        size_t E = B;
        while (E < C.size() && C[E] != Old.Bytes[E])
          ++E;
        OS << "  ~ section '" << S.Name << "' bytes at " << hex(S.Addr + B)
           << ".." << hex(S.Addr + E) << " rewritten in place\n";
        Any = true;
        B = E;
      }
    }
  }
  for (size_t I = 0; I < Now.segments().size(); ++I) {
    const Segment &P = *Now.segments()[I];
    if (I >= Segments.size()) {
      OS << "  + segment [" << I << "] " << phdrType(P.Type) << " vaddr "
         << hex(P.VAddr) << "\n";
      Any = true;
    } else if (Segments[I].Type != P.Type) {
      OS << "  ~ segment [" << I << "] type " << phdrType(Segments[I].Type)
         << " -> " << phdrType(P.Type) << "\n";
      Any = true;
    }
  }
  for (const auto &T : Now.symbolTables()) {
    auto It = Symbols.find(T->section().Name);
    StringSet<> Old;
    if (It != Symbols.end())
      for (const std::string &N : It->second)
        Old.insert(N);
    for (const Symbol &Sym : T->symbols())
      if (!Old.count(Sym.Name)) {
        OS << "  + symbol '" << Sym.Name << "' in " << T->section().Name
           << " value " << hex(Sym.Value) << " size " << Sym.Size << "\n";
        Any = true;
      }
  }
  if (Now.sectionHeadersLastRequested() && !SectionHeadersLast) {
    OS << "  ~ section header table laid out anew\n";
    Any = true;
  }
  if (!Any)
    OS << "  no changes\n";
}
