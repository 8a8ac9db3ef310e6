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
