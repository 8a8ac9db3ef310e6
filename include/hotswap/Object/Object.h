//===- hotswap/Object/Object.h - Mutable ELF model --------------*- C++ -*-===//
//
// The mutable model of an ELF64 little-endian file (an AMDGPU code object,
// or an x86-64 HIP host binary read with ReadOptions::AllowHost) that every
// pass works on. Shaped like llvm-objcopy's ELF Object: sections,
// segments and symbols are plain objects that refer to each other by
// pointer; string-table offsets and file offsets are derived only when the
// writer lays the object out (Layout.h), once per run.
//
// Invariants the model keeps by construction:
//   * Everything the writer derives from the model (section and symbol
//     tables, string tables, headers) is derived from its current state:
//     there is no flag to set by hand. Symbol tables change only through
//     SymbolTable::add(); section contents only through Section::overwrite()
//     (in place) and Section::setContents() (whole, checked by the writer).
//   * A section's index is its position in sections(); sections are only
//     ever appended, so an index never changes once assigned.
//
// Layout policy: bytes under a PT_LOAD never move. Loaded sections of the
// input may be edited in place (same size) but never grow; only non-loaded
// sections may change size; new loadable bytes live in new sections covered
// by a new last PT_LOAD above every existing address.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_OBJECT_H
#define HOTSWAP_OBJECT_OBJECT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/StringSaver.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

class Object;
class SymbolTable;

/// One section. Contents are borrowed from the input until first changed.
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
  /// Raw sh_info. The writer derives it for symbol tables that changed.
  uint32_t Info = 0;
  /// A non-loaded section a new layout puts after every other one and after
  /// the input's last byte (a record of the input's bytes, which must not
  /// lie among them).
  bool AfterInput = false;

  /// Where the section came from. Sections created by passes have none.
  struct Origin {
    uint32_t NameOffset = 0;
    uint64_t Offset = 0;
    uint64_t Size = 0;
    /// The raw sh_link. Only section 0's is written back from here (its
    /// link names no section; Link stays null), so that a file is
    /// rewritten byte for byte whatever that field holds.
    uint32_t RawLink = 0;
  };
  std::optional<Origin> Orig;

  /// Position in the section header table (0 is the null section).
  uint32_t index() const { return Index; }
  bool isNew() const { return !Orig.has_value(); }
  bool isAlloc() const { return Flags & llvm::ELF::SHF_ALLOC; }
  bool isExec() const { return Flags & llvm::ELF::SHF_EXECINSTR; }
  bool isNoBits() const { return Type == llvm::ELF::SHT_NOBITS; }

  /// Size in memory (for NOBITS) or in the file.
  uint64_t size() const {
    return isNoBits() || External ? NoBitsSize : contents().size();
  }
  /// Whether the section's bytes may differ from the input.
  bool isDirty() const { return Owned.has_value() || !Orig; }

  llvm::ArrayRef<uint8_t> contents() const {
    if (Owned)
      return *Owned;
    return Borrowed;
  }
  /// Replaces \p Bytes.size() bytes at \p Offset in place (copy on first
  /// write). Error when the range is not inside the contents.
  llvm::Error overwrite(uint64_t Offset, llvm::ArrayRef<uint8_t> Bytes);
  /// Replaces the contents. A loaded section of the input cannot change
  /// size: the writer refuses such an object.
  void setContents(std::vector<uint8_t> Bytes) {
    Owned = std::move(Bytes);
    External = false;
  }
  void setNoBitsSize(uint64_t Size) { NoBitsSize = Size; }
  /// A new section of \p Size bytes of file contents that the model does
  /// not hold: whoever writes the object puts them at the section's offset
  /// (a host binary's new bundles, composed straight into the output). The
  /// writer leaves zeros there; contents() is empty.
  void setExternalContents(uint64_t Size) {
    External = true;
    NoBitsSize = Size;
    Owned.reset();
  }
  bool hasExternalContents() const { return External; }

  /// The symbol table this section holds, if it is SHT_SYMTAB/SHT_DYNSYM.
  SymbolTable *symbols() const { return Symbols; }

private:
  friend class Object;
  friend class Reader;
  uint32_t Index = 0;
  llvm::ArrayRef<uint8_t> Borrowed;
  std::optional<std::vector<uint8_t>> Owned;
  uint64_t NoBitsSize = 0;
  bool External = false;
  SymbolTable *Symbols = nullptr;
};

/// One symbol of a symbol table. The section is referenced by pointer;
/// Shndx keeps reserved indices (SHN_UNDEF, SHN_ABS, SHN_COMMON,
/// SHN_AMDGPU_LDS, ...) when Sec is null.
struct Symbol {
  /// A symbol read from the input borrows its name from the input's string
  /// table (a Tensile object has 1.8M symbols: a heap copy of each name
  /// cost a third of the run and ~60 MiB); SymbolTable::add keeps a copy of
  /// an added symbol's name, so the name need only live until then.
  llvm::StringRef Name;
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
/// symbol) is not stored. A table that changed is written with its locals
/// first and sh_info derived from them.
///
/// The symbols read from the input stay as the input's records until a
/// client asks for all of them as `Symbol`s (symbols()): a Tensile object
/// has 1.8M local labels, and 64-byte structs for each took 115 MiB and a
/// tenth of a rewrite that appends 14k. forEach() and find() read the
/// records without keeping them; globals added to a table still in that
/// form are kept after them (a local added makes the table whole, as it
/// goes before the globals).
class SymbolTable {
public:
  SymbolTable(Section &Sec, Section &StrTab) : Sec(&Sec), StrTab(&StrTab) {}

  Section &section() const { return *Sec; }
  Section &stringTable() const { return *StrTab; }
  /// Every symbol, as structs (made from the input's records on the first
  /// call; references stay valid until the next add()).
  llvm::ArrayRef<Symbol> symbols() const {
    materialize();
    return Symbols;
  }
  size_t size() const {
    return isMaterialized() ? Symbols.size() : InputCount + Symbols.size();
  }
  /// Calls \p F with each symbol in order. The reference is valid during
  /// the call only (copy what must be kept; names stay valid).
  void forEach(llvm::function_ref<void(const Symbol &)> F) const;
  /// forEach() over the symbols of type \p Type (STT_*) only: an input
  /// record of another type is passed over before its name is read (most
  /// of a Tensile object's 1.8M symbols are local labels, STT_NOTYPE).
  void forEachOfType(uint8_t Type,
                     llvm::function_ref<void(const Symbol &)> F) const;
  /// Input records from which a scan (forEach and the like) hands the
  /// bytes it read back to the object's owner (Object::releaseInput).
  static constexpr uint64_t ReleaseFrom = 16u << 20;
  /// The symbols added after the input's, when the table has only had
  /// globals appended and has not been made whole: what a writer that keeps
  /// the input's records writes after them.
  std::optional<llvm::ArrayRef<Symbol>> appendedOnly() const {
    if (isMaterialized())
      return std::nullopt;
    return llvm::ArrayRef<Symbol>(Symbols);
  }

  /// Adds a symbol, keeping locals before globals. The table keeps its own
  /// copy of the name.
  Symbol &add(Symbol S);
  /// Room for \p More symbols: adding many at once grows the table once
  /// (a table of 400 000 symbols reallocated by doubling held two copies).
  void reserve(size_t More) { Symbols.reserve(Symbols.size() + More); }
  /// Whether symbols were added since the table was read (the writer then
  /// serialises it and its string table anew).
  bool isModified() const { return Modified; }
  /// Whether the table as read had its locals first and sh_info right (the
  /// reader refuses a loaded table that has not; the writer repartitions a
  /// non-loaded one whenever it lays the object out anew).
  bool wasPartitioned() const { return InputPartitioned; }
  /// Whether the symbols read from the input are still the first ones, in
  /// their order, with only symbols added after them (the writer then keeps
  /// the table's bytes and appends the new entries).
  bool onlyAppended() const { return !InsertedBefore; }
  /// How many symbols the table had when it was read (0 for a new one).
  size_t inputCount() const { return InputCount; }
  /// Index (1-based, as in the file) of the first non-local symbol.
  uint32_t firstNonLocal() const;
  /// Finds a symbol by name (first match).
  std::optional<Symbol> find(llvm::StringRef Name) const;
  /// The first symbol \p Pred holds for.
  std::optional<Symbol>
  findIf(llvm::function_ref<bool(const Symbol &)> Pred) const;

private:
  friend class Reader;
  /// The input's symbol \p K (0-based, the null entry left out) as a
  /// struct. The reader checked every record.
  Symbol inputSymbol(size_t K) const;
  /// Makes Symbols hold every symbol (once; readers on several threads may
  /// ask at the same time).
  void materialize() const;
  bool isMaterialized() const {
    return Materialized.load(std::memory_order_acquire);
  }

  Section *Sec;
  Section *StrTab;
  /// Every symbol once Materialized; before, only those added after the
  /// input's (globals).
  mutable std::vector<Symbol> Symbols;
  mutable std::atomic<bool> Materialized{true};
  mutable std::mutex MaterializeLock;
  /// Calls \p Each with the index of every input record, in order; a
  /// table of ReleaseFrom bytes or more hands its records back behind it
  /// and its names at the end (Owner's releaseInput: they are read again
  /// from the file when touched later). \p Each returns false to stop.
  void scanInput(llvm::function_ref<bool(size_t)> Each) const;
  /// The object the table belongs to (set by the reader).
  const Object *Owner = nullptr;
  /// The input's records (the null entry left out), its string table, and
  /// the sections by their input index: what inputSymbol() reads.
  llvm::ArrayRef<uint8_t> InputRecords;
  llvm::ArrayRef<uint8_t> InputStr;
  std::vector<Section *> InputSections;
  /// 1-based index of the input's first non-local symbol.
  uint32_t InputFirstNonLocal = 1;
  /// The names of added symbols.
  llvm::BumpPtrAllocator NameStorage;
  llvm::StringSaver Names{NameStorage};
  bool Modified = false;
  bool InputPartitioned = true;
  bool InsertedBefore = false;
  size_t InputCount = 0;
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
  /// New segments only: the writer puts the program header table at the
  /// start of this segment (VAddr, which must be 8-byte aligned; its
  /// members must lie above the table) and updates PT_PHDR to describe it
  /// there. What a host binary needs: its loader finds the table through
  /// PT_PHDR, which must stay inside a PT_LOAD; and GNU objcopy and strip
  /// lay out a PT_LOAD that holds the table as the table first, then its
  /// sections (a table after them makes them move the sections). At most
  /// one segment holds the table.
  bool HoldsProgramHeaders = false;
  /// New segments only: the layout must give this segment exactly this
  /// p_vaddr - p_offset (its file offset is then VAddr minus it), and fails
  /// when that offset falls before what precedes the segment in the output
  /// (the input's end for the first new segment). Linux before 5.18 computes
  /// an executable's AT_PHDR as the first PT_LOAD's p_vaddr - p_offset plus
  /// e_phoff: a segment holding the moved table of an executable must have
  /// the first PT_LOAD's value.
  std::optional<uint64_t> VAddrMinusOffset;
  /// A segment that is not PT_LOAD (PT_NOTE) may describe exactly one
  /// loaded section, wherever the layout puts it: the layout then gives it
  /// that section's offset, address and size (p_align is kept). What leads
  /// a reader to a note written anew (code::commitMetadata): an input
  /// PT_NOTE keeps its place in the table and points at the new note.
  const Section *Describes = nullptr;
};

/// ELF header fields (everything except the table positions and counts,
/// which the writer derives).
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

/// Where the tables were in the input.
struct InputTables {
  uint64_t PhOff = 0, ShOff = 0;
  uint16_t PhNum = 0, ShNum = 0;
};

/// The whole file.
class Object {
public:
  Object();
  Object(const Object &) = delete;
  Object &operator=(const Object &) = delete;

  FileHeader Header;

  /// Sections in section-header-table order; entry 0 is the null section.
  llvm::ArrayRef<std::unique_ptr<Section>> sections() const { return Sections; }
  /// Program headers in table order.
  llvm::ArrayRef<std::unique_ptr<Segment>> segments() const { return Segments; }
  llvm::ArrayRef<std::unique_ptr<SymbolTable>> symbolTables() const {
    return SymbolTables;
  }
  /// The section name string table (e_shstrndx), or null.
  Section *sectionNames() const { return SectionNames; }
  /// The input bytes, which sections borrow until they change.
  llvm::ArrayRef<uint8_t> input() const { return Input; }
  const InputTables &inputTables() const { return InTables; }
  /// Says that the reader is done, for now, with \p Bytes of the input: the
  /// owner of the input may hand their pages back (they stay readable; a
  /// file mapping reads them again when touched). A hint, for bytes spread
  /// over a large input (a few at each kernel entry of 250 MB of code map
  /// nearly all of it): nothing happens unless the owner set a releaser.
  void releaseInput(llvm::ArrayRef<uint8_t> Bytes) const {
    if (InputReleaser)
      InputReleaser(Bytes);
  }
  void setInputReleaser(std::function<void(llvm::ArrayRef<uint8_t>)> F) {
    InputReleaser = std::move(F);
  }

  /// The `.symtab` / `.dynsym` tables, or null.
  SymbolTable *symtab() const;
  SymbolTable *dynsym() const;

  Section *findSection(llvm::StringRef Name) const;
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
  /// Removes the program header at position \p Index of segments().
  void removeSegment(size_t Index);
  /// Removes the sections \p Indexes; the others after the first of them
  /// move down. Refused (an error, nothing changed) unless nothing else
  /// names one of them or any section after the first by index or pointer:
  /// no symbol, sh_link or sh_info, segment, section group or extended
  /// index table (what sections an earlier run of the caller appended, at
  /// the end of the table, are).
  llvm::Error removeSections(llvm::ArrayRef<uint32_t> Indexes);
  /// Creates an empty symbol table section `.symtab` with a new `.strtab`.
  SymbolTable &createSymtab();

  /// The input bytes at virtual address range VAddr..+Size, read through
  /// the allocated section that holds them. Error if the range is not fully
  /// inside one section with file contents.
  llvm::Expected<llvm::ArrayRef<uint8_t>> bytesAt(uint64_t VAddr,
                                                  uint64_t Size) const;
  /// The same bytes, or nullopt where bytesAt fails: for questions such as
  /// "do the bytes there look like a stub?", where bytes that are not in
  /// the file simply answer no.
  std::optional<llvm::ArrayRef<uint8_t>> bytesIfAt(uint64_t VAddr,
                                                   uint64_t Size) const;

  /// Whether the file must be laid out anew when written: a section, a
  /// segment or a symbol was added, a section was renamed, a non-loaded
  /// section changed size, or the section header table was asked to move
  /// (requestSectionHeadersLast()). Otherwise the writer keeps every offset
  /// of the input and only rewrites bytes edited in place.
  bool needsNewLayout() const;
  /// Whether \p S still has the name it had in the input (so its sh_name
  /// can stay), false for new and renamed sections.
  bool keepsInputName(const Section &S) const;
  /// Asks the writer to lay the file out anew even if nothing else changed,
  /// which puts the section header table last at an 8-byte-aligned offset
  /// (what realign-shdrs establishes). A property of the model, kept until
  /// the object is written.
  void requestSectionHeadersLast() { SectionHeadersLast = true; }
  bool sectionHeadersLastRequested() const { return SectionHeadersLast; }
  /// Whether the file, written as it is now, has its section header table
  /// after all section data at an 8-byte-aligned offset (always true when it
  /// is laid out anew).
  bool sectionHeadersWillBeLastAndAligned() const;
  /// Lets a new layout move the input's non-loaded tail: the sections,
  /// tables and zero padding after the last byte that must stay (loaded
  /// bytes, the ELF header, anything else) are laid out again after the new
  /// segments, which start where that tail started. Whoever asks records
  /// how to give the moved bytes back (the pipeline's provenance record
  /// does, as ranges the output holds elsewhere); without it every input
  /// byte keeps its offset and what grew is appended. Outputs are never
  /// shorter than the input.
  /// \p OursFrom: where the bytes an earlier run of the caller appended
  /// start (the original's size, by its record): nothing there needs
  /// keeping, header tables and stray bytes included.
  void allowTailRelayout(uint64_t OursFrom = UINT64_MAX) {
    RelayTail = true;
    TailOursFrom = OursFrom;
  }
  bool tailRelayoutAllowed() const { return RelayTail; }
  uint64_t tailOursFrom() const { return TailOursFrom; }
  /// Says that the input's bytes from \p From on are what an earlier run of
  /// the caller appended (a host's new segment, record and tables, past its
  /// original's extent by its record), and that the caller took every
  /// segment and loaded section that lay there out of the model: a new
  /// layout treats the input as \p From bytes long, so that what it lays
  /// out replaces those bytes instead of following them (the non-loaded
  /// sections there are laid out again). Outputs are never shorter than the
  /// input.
  void replaceAppended(uint64_t From) {
    AppendedFrom = From;
    TailOursFrom = std::min(TailOursFrom, From);
  }
  std::optional<uint64_t> appendedFrom() const { return AppendedFrom; }

  ~Object();

private:
  friend class Reader;
  /// Finds sections and PT_LOADs by address in log time (built on first
  /// use, rebuilt when sections or segments are added or removed, or a new
  /// section changes size).
  class AddressIndex;
  const AddressIndex &addresses() const;
  mutable std::unique_ptr<AddressIndex> Index;

  std::vector<std::unique_ptr<Section>> Sections;
  std::vector<std::unique_ptr<Segment>> Segments;
  std::vector<std::unique_ptr<SymbolTable>> SymbolTables;
  Section *SectionNames = nullptr;
  llvm::ArrayRef<uint8_t> Input;
  std::function<void(llvm::ArrayRef<uint8_t>)> InputReleaser;
  InputTables InTables;
  bool SectionHeadersLast = false;
  bool RelayTail = false;
  uint64_t TailOursFrom = UINT64_MAX;
  std::optional<uint64_t> AppendedFrom;
  /// Keeps the input buffer alive when the object owns it.
  std::unique_ptr<llvm::MemoryBuffer> OwnedInput;
};

} // namespace hotswap

#endif // HOTSWAP_OBJECT_OBJECT_H
