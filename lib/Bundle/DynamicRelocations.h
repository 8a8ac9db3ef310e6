//===- lib/Bundle/DynamicRelocations.h - x86-64 dynamic relocs --*- C++ -*-===//
//
// Private to the Bundle layer: the dynamic relocations of a host ELF that
// touch given address ranges, read from its loaded relocation sections
// (SHF_ALLOC SHT_RELA, SHT_REL and SHT_RELR: .rela.dyn, .rela.plt,
// .relr.dyn). Only the relocations whose target overlaps a range are kept,
// so a library with millions of relocations costs one pass and no memory.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_BUNDLE_DYNAMICRELOCATIONS_H
#define HOTSWAP_LIB_BUNDLE_DYNAMICRELOCATIONS_H

#include "hotswap/Object/Object.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace hotswap {
namespace bundle {

/// [Begin, End) in the address space.
struct AddressRange {
  uint64_t Begin = 0;
  uint64_t End = 0;
};

/// Where r_addend lies in an ELF64 RELA entry: object::ELF64LE::Rela is the
/// Rel it extends (r_offset, r_info), then r_addend. (Not offsetof: a type
/// with members in a base and in the derived class has no standard layout.)
constexpr uint64_t RelaAddendOffset = sizeof(llvm::object::ELF64LE::Rel);
static_assert(sizeof(llvm::object::ELF64LE::Rela) ==
                  RelaAddendOffset +
                      sizeof(llvm::object::ELF64LE::Rela::r_addend),
              "r_addend is the last field of a RELA entry");

struct DynamicRelocation {
  enum TableKind { Rela, Rel, Relr };
  TableKind Table = Rela;
  /// The address it relocates (r_offset, or a RELR address or bit).
  uint64_t Offset = 0;
  /// Rela and Rel: r_info split into type and symbol index, and r_addend.
  uint32_t Type = 0;
  uint32_t SymbolIndex = 0;
  int64_t Addend = 0;
  /// The section holding it, and for Rela and Rel the offset of its entry
  /// in that section (a RELR bit has no entry of its own).
  const Section *TableSection = nullptr;
  uint64_t EntryOffset = 0;
};

/// Every dynamic relocation of \p Obj whose 8 target bytes overlap one of
/// \p Ranges (sorted by Begin, disjoint), in table then entry order.
/// Malformed tables are errors: an entry size other than the format's, a
/// size that is not a multiple of it, a RELR bitmap with no address before
/// it, an address that overflows.
llvm::Expected<std::vector<DynamicRelocation>>
findDynamicRelocations(const Object &Obj, llvm::ArrayRef<AddressRange> Ranges);

} // namespace bundle
} // namespace hotswap

#endif // HOTSWAP_LIB_BUNDLE_DYNAMICRELOCATIONS_H
