//===- lib/Bundle/DynamicRelocations.cpp - x86-64 dynamic relocs ----------===//
//
// RELA entries are { u64 r_offset, u64 r_info, i64 r_addend } (24 bytes),
// REL entries { u64 r_offset, u64 r_info } (16); r_info holds the symbol
// index in its high 32 bits and the type in its low 32. RELR (the format of
// -z pack-relative-relocs) is a list of u64 words: an even word is an
// address to relocate, after which the next bitmap starts at that address
// plus 8; an odd word is a bitmap whose bits 1 to 63 relocate the 63 words
// from the current start, which then advances by 63 words.
//
//===----------------------------------------------------------------------===//

#include "DynamicRelocations.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/Record.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFTypes.h"

#include <algorithm>

using namespace llvm;
using namespace llvm::ELF;

namespace hotswap {
namespace bundle {

namespace {

using Elf_Rel = object::ELF64LE::Rel;
using Elf_Rela = object::ELF64LE::Rela;

constexpr uint64_t WordSize = 8;

class Finder {
public:
  explicit Finder(ArrayRef<AddressRange> Ranges) : Ranges(Ranges) {}

  /// Whether [Offset, Offset + 8) overlaps a range (an end past 2^64 is
  /// taken as 2^64).
  bool touches(uint64_t Offset) const {
    // The first range that ends after Offset.
    auto It = std::upper_bound(
        Ranges.begin(), Ranges.end(), Offset,
        [](uint64_t V, const AddressRange &R) { return V < R.End; });
    if (It == Ranges.end())
      return false;
    uint64_t End =
        Offset > UINT64_MAX - WordSize ? UINT64_MAX : Offset + WordSize;
    return It->Begin < End;
  }

  Error readRela(const Section &S, bool HasAddend);
  Error readRelr(const Section &S);

  std::vector<DynamicRelocation> Found;

private:
  ArrayRef<AddressRange> Ranges;
};

std::string name(const Section &S) { return "section '" + S.Name + "'"; }

Error Finder::readRela(const Section &S, bool HasAddend) {
  const uint64_t EntSize = HasAddend ? sizeof(Elf_Rela) : sizeof(Elf_Rel);
  ArrayRef<uint8_t> C = S.contents();
  if (S.EntSize != EntSize)
    return makeError(name(S) + " has sh_entsize " + hex(S.EntSize) +
                     ", expected " + hex(EntSize));
  if (C.size() % EntSize != 0)
    return makeError(name(S) + " size " + hex(C.size()) +
                     " is not a multiple of " + hex(EntSize));
  // Every entry lies inside: the size is a multiple of the entry's.
  for (uint64_t Off = 0; Off < C.size(); Off += EntSize) {
    // A Rela begins with the Rel it extends.
    const Elf_Rel &Entry = recordAt<Elf_Rel>(C, Off);
    if (!touches(Entry.r_offset))
      continue;
    DynamicRelocation R;
    R.Table = HasAddend ? DynamicRelocation::Rela : DynamicRelocation::Rel;
    R.Offset = Entry.r_offset;
    R.Type = Entry.getType(/*isMips64EL=*/false);
    R.SymbolIndex = Entry.getSymbol(/*isMips64EL=*/false);
    if (HasAddend)
      R.Addend = recordAt<Elf_Rela>(C, Off).r_addend;
    R.TableSection = &S;
    R.EntryOffset = Off;
    Found.push_back(R);
  }
  return Error::success();
}

Error Finder::readRelr(const Section &S) {
  ArrayRef<uint8_t> C = S.contents();
  if (S.EntSize != WordSize)
    return makeError(name(S) + " has sh_entsize " + hex(S.EntSize) +
                     ", expected 0x8");
  if (C.size() % WordSize != 0)
    return makeError(name(S) + " size " + hex(C.size()) +
                     " is not a multiple of 0x8");
  auto add = [&](uint64_t Target) {
    if (!touches(Target))
      return;
    DynamicRelocation R;
    R.Table = DynamicRelocation::Relr;
    R.Offset = Target;
    R.TableSection = &S;
    Found.push_back(R);
  };
  constexpr uint64_t BitmapSpan = 63 * WordSize;
  bool HaveBase = false, BaseOverflows = false;
  uint64_t Base = 0;
  for (uint64_t Off = 0; Off < C.size(); Off += WordSize) {
    const uint64_t Word = recordAt<object::ELF64LE::Relr>(C, Off);
    if ((Word & 1) == 0) {
      add(Word);
      if (Word > UINT64_MAX - WordSize)
        return makeError(name(S) + " entry at offset " + hex(Off) +
                         ": address " + hex(Word) + " overflows");
      Base = Word + WordSize;
      HaveBase = true;
      BaseOverflows = false;
      continue;
    }
    if (BaseOverflows)
      return makeError(name(S) + " entry at offset " + hex(Off) +
                       ": bitmap starts past the end of the address space");
    if (!HaveBase)
      return makeError(name(S) + " entry at offset " + hex(Off) +
                       " is a bitmap with no address before it");
    for (unsigned Bit = 1; Bit < 64; ++Bit) {
      if (!((Word >> Bit) & 1))
        continue;
      uint64_t Rel = (Bit - 1) * WordSize;
      if (Base > UINT64_MAX - WordSize - Rel)
        return makeError(name(S) + " entry at offset " + hex(Off) +
                         ": bitmap from " + hex(Base) + " overflows");
      add(Base + Rel);
    }
    // The next bitmap continues where this one ends; an end past 2^64 is
    // only an error if another bitmap uses it.
    if (Base > UINT64_MAX - BitmapSpan)
      BaseOverflows = true;
    else
      Base += BitmapSpan;
  }
  return Error::success();
}

} // namespace

Expected<std::vector<DynamicRelocation>>
findDynamicRelocations(const Object &Obj, ArrayRef<AddressRange> Ranges) {
  Finder F(Ranges);
  for (const auto &SP : Obj.sections()) {
    const Section &S = *SP;
    if (!S.isAlloc() || S.isNoBits())
      continue;
    Error E = Error::success();
    if (S.Type == SHT_RELA || S.Type == SHT_REL)
      E = F.readRela(S, S.Type == SHT_RELA);
    else if (S.Type == SHT_RELR)
      E = F.readRelr(S);
    if (E)
      return std::move(E);
  }
  return std::move(F.Found);
}

} // namespace bundle
} // namespace hotswap
