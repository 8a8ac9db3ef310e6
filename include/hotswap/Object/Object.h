//===- hotswap/Object/Object.h - Mutable ELF model --------------*- C++ -*-===//
//
// The mutable model of an AMDGPU code object (ELF64, little endian) that every
// pass works on. Shaped like llvm-objcopy's ELFObject: sections, segments and
// symbols are plain objects that refer to each other by pointer; indices,
// string-table offsets and file offsets are derived only when the writer lays
// the object out (see Writer.h).
//
// Layout policy (DESIGN.md §2): bytes under a PT_LOAD never move. Loaded
// sections may be edited in place (same size); only non-loaded sections may
// change size; new loadable bytes live in new sections covered by a new last
// PT_LOAD placed above every existing address.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_OBJECT_H
#define HOTSWAP_OBJECT_OBJECT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

class Object;
class SymbolTable;

/// One section. Contents are borrowed from the input until first written.
class Section {
public:
  std::string Name;
  uint32_t Type = llvm::ELF::SHT_NULL;
  uint64_t Flags = 0;
  uint64_t Addr = 0;
  uint64_t AddrAlign = 0;
  uint64_t EntSize = 0;
  /// sh_link, resolved to a section (null when sh_link is 0).
  Section *Link = nullptr;
  /// Raw sh_info. For symbol tables the writer derives it when the table
  /// changed.
  uint32_t Info = 0;

  /// Where the section came from. Sections created by passes have no origin.
  struct Origin {
    uint32_t Index = 0;
    uint32_t NameOffset = 0;
    uint64_t Offset = 0;
    uint64_t Size = 0;
  };
  std::optional<Origin> Orig;

  bool isNew() const { return !Orig.has_value(); }
  bool isAlloc() const { return Flags & llvm::ELF::SHF_ALLOC; }
  bool isExec() const { return Flags & llvm::ELF::SHF_EXECINSTR; }
  bool isNoBits() const { return Type == llvm::ELF::SHT_NOBITS; }

  /// Size in memory (for NOBITS) or in the file.
  uint64_t size() const { return isNoBits() ? NoBitsSize : contents().size(); }
  /// Whether the writer must lay this section out anew.
  bool sizeChanged() const { return !Orig || size() != Orig->Size; }
  /// Whether the section's bytes may differ from the input.
  bool isDirty() const { return Owned.has_value() || !Orig; }

  llvm::ArrayRef<uint8_t> contents() const {
    if (Owned)
      return *Owned;
    return Borrowed;
  }
  /// Mutable view of the contents, same size (copy on first write).
  llvm::MutableArrayRef<uint8_t> mutableContents();
  /// Replaces the contents. Loaded sections of the input cannot change size:
  /// the writer refuses such an object.
  void setContents(std::vector<uint8_t> Bytes);
  void setNoBitsSize(uint64_t Size) { NoBitsSize = Size; }

  /// The symbol table this section holds, if it is SHT_SYMTAB/SHT_DYNSYM.
  SymbolTable *symbols() const { return Symbols; }

private:
  friend class Object;
  friend class Reader;
  llvm::ArrayRef<uint8_t> Borrowed;
  std::optional<std::vector<uint8_t>> Owned;
  uint64_t NoBitsSize = 0;
  SymbolTable *Symbols = nullptr;
};

/// One symbol of a symbol table. The section is referenced by pointer;
/// Shndx keeps reserved indices (SHN_UNDEF, SHN_ABS, SHN_COMMON,
/// SHN_AMDGPU_LDS, ...) when Sec is null.
struct Symbol {
  std::string Name;
  uint8_t Binding = llvm::ELF::STB_LOCAL;
  uint8_t Type = llvm::ELF::STT_NOTYPE;
  uint8_t Other = 0; // st_other (visibility in the low 2 bits)
  Section *Sec = nullptr;
  uint16_t Shndx = llvm::ELF::SHN_UNDEF;
  uint64_t Value = 0;
  uint64_t Size = 0;
  /// st_name in the input's string table; unset for new symbols.
  std::optional<uint32_t> OrigNameOffset;

  uint8_t visibility() const { return Other & 0x3; }
  bool isLocal() const { return Binding == llvm::ELF::STB_LOCAL; }
};

/// The symbols of one SHT_SYMTAB or SHT_DYNSYM section. Entry 0 (the null
/// symbol) is not stored. Locals always precede non-locals in the output;
/// the writer derives sh_info.
class SymbolTable {
public:
  Section *Sec = nullptr;
  Section *StrTab = nullptr;
  std::vector<Symbol> Symbols;

  /// Adds a symbol, keeping locals before globals. Marks the table changed.
  Symbol &add(Symbol S);
  bool isModified() const { return Modified; }
  /// Index (1-based, as in the file) of the first non-local symbol.
  uint32_t firstNonLocal() const;
  /// Finds a symbol by name (first match), or null.
  const Symbol *find(llvm::StringRef Name) const;

private:
  friend class Reader;
  friend class Writer;
  bool Modified = false;
};

/// One program header. Segments of the input keep their raw fields; new
/// segments derive offset and sizes from their member sections at layout.
struct Segment {
  uint32_t Type = llvm::ELF::PT_NULL;
  uint32_t Flags = 0;
  uint64_t Offset = 0;
  uint64_t VAddr = 0;
  uint64_t PAddr = 0;
  uint64_t FileSize = 0;
  uint64_t MemSize = 0;
  uint64_t Align = 0;
  /// Members of a new segment, in address order. Empty for input segments.
  std::vector<Section *> Members;
  bool IsNew = false;
};

/// ELF header fields (everything except the table positions, which the
/// writer derives).
struct FileHeader {
  std::array<uint8_t, llvm::ELF::EI_NIDENT> Ident{};
  uint16_t Type = 0;
  uint16_t Machine = 0;
  uint32_t Version = 0;
  uint64_t Entry = 0;
  uint32_t Flags = 0;
  uint16_t EhSize = 0;
  uint16_t PhEntSize = 0;
  uint16_t ShEntSize = 0;

  uint8_t abiVersion() const { return Ident[llvm::ELF::EI_ABIVERSION]; }
  uint8_t osABI() const { return Ident[llvm::ELF::EI_OSABI]; }
};

/// The whole code object.
class Object {
public:
  Object() = default;
  Object(const Object &) = delete;
  Object &operator=(const Object &) = delete;

  FileHeader Header;
  /// Sections in section-header-table order; entry 0 is the null section.
  std::vector<std::unique_ptr<Section>> Sections;
  std::vector<std::unique_ptr<Segment>> Segments;
  std::vector<std::unique_ptr<SymbolTable>> SymbolTables;
  Section *SectionNames = nullptr; // e_shstrndx

  /// Where the tables were in the input.
  uint64_t OrigPhOff = 0, OrigShOff = 0;
  uint16_t OrigPhNum = 0, OrigShNum = 0;
  /// The input bytes (borrowed section contents point into them).
  llvm::ArrayRef<uint8_t> Input;
  llvm::StringRef InputName;

  /// Set by passes (realign-shdrs) that need the section header table laid
  /// out anew even though no section changed size.
  bool RelayoutSectionHeaders = false;

  /// The `.symtab` / `.dynsym` tables, or null.
  SymbolTable *symtab() const;
  SymbolTable *dynsym() const;

  Section *findSection(llvm::StringRef Name) const;
  /// Index a section will have in the output (position in Sections).
  uint32_t indexOf(const Section *S) const;
  /// The section whose address range [Addr, Addr+Size) holds VAddr, among
  /// SHF_ALLOC sections; null if none.
  Section *sectionForAddress(uint64_t VAddr) const;
  /// The PT_LOAD covering [VAddr, VAddr+Size) in memory, or null.
  const Segment *loadSegmentFor(uint64_t VAddr, uint64_t Size = 1) const;

  /// Lowest page-aligned address above every PT_LOAD and SHF_ALLOC section:
  /// where a new loaded segment can go without moving anything.
  uint64_t firstFreeAddress(uint64_t PageSize = 0x1000) const;

  /// Appends a section (after every existing one in the header table).
  Section &addSection(std::unique_ptr<Section> S);
  /// Appends a program header (last in table order).
  Segment &addSegment(std::unique_ptr<Segment> S);
  /// Creates an empty symbol table section `.symtab` with a new `.strtab`.
  SymbolTable &createSymtab();

  /// File-relative view of an allocated range of the input (VAddr..+Size),
  /// through the section that holds it. Error if not fully inside one
  /// section with file contents.
  llvm::Expected<llvm::ArrayRef<uint8_t>> bytesAt(uint64_t VAddr,
                                                  uint64_t Size) const;

  /// Keeps the input buffer alive when the object owns it.
  std::unique_ptr<llvm::MemoryBuffer> OwnedInput;
};

} // namespace hotswap

#endif // HOTSWAP_OBJECT_OBJECT_H
