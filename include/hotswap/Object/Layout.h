//===- hotswap/Object/Layout.h - Where everything goes ----------*- C++ -*-===//
//
// The first of the writer's two phases, as in the `object` crate's writer:
// computeLayout() reserves every region of the output (offsets and total
// size) and derives the tables that changed (symbol tables, string tables,
// section names) without writing a byte; writeObject() (Writer.h) then fills
// one buffer. It runs once per written object. The policy: every byte of
// the input keeps its offset, so an output starts with the whole input and
// writing it is one copy (in the kernel, OutputFile.h) plus a small tail:
//   * new sections of new PT_LOADs go after the input's last byte, at an
//     offset congruent to their address modulo the segment alignment (the
//     new segments lie above every existing address);
//   * the program header table goes inside the new segment that asks to
//     hold it (Segment::HoldsProgramHeaders: at its start, before its
//     members) and PT_PHDR is updated to describe it there; without such a
//     segment it stays in place unless it must grow, then it follows the new
//     segments and PT_PHDR becomes PT_NULL (right for code objects, whose
//     loader never reads PT_PHDR);
//   * a new segment with Segment::VAddrMinusOffset gets exactly that
//     p_vaddr - p_offset (the bytes before it are zeros), or the layout
//     fails;
//   * non-loaded sections that grew (symbol and string tables) and new ones
//     follow, each at its alignment; their old bytes stay behind, unused;
//   * the section header table comes last, 8-byte aligned.
// An object that needs no new layout (Object::needsNewLayout()) keeps every
// offset of the input. An impossible layout is an error, never a move of
// loaded bytes.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_LAYOUT_H
#define HOTSWAP_OBJECT_LAYOUT_H

#include "hotswap/Object/Object.h"

#include "llvm/ADT/DenseMap.h"

namespace hotswap {

/// Where everything goes in the output file.
struct Layout {
  uint64_t FileSize = 0;
  uint64_t PhOff = 0;
  uint64_t ShOff = 0;
  /// Indexed like Object::sections().
  std::vector<uint64_t> SectionOffsets;
  /// Like Object::segments(), with offset, filesz and memsz of new segments
  /// derived, and PT_PHDR moved with the table (or turned into PT_NULL when
  /// the table left it behind).
  std::vector<Segment> Segments;
  /// A symbol or string table rebuilt for output: the bytes it keeps of the
  /// section as it is (written from where they are: the input, copied in the
  /// kernel), then bytes of its own (new symbols, new names; a table that
  /// had to be reordered is all new bytes).
  struct RebuiltTable {
    llvm::ArrayRef<uint8_t> Kept;
    std::vector<uint8_t> Added;
    uint64_t size() const { return Kept.size() + Added.size(); }
  };
  llvm::DenseMap<const Section *, RebuiltTable> Rebuilt;
  /// sh_info of rebuilt symbol tables.
  llvm::DenseMap<const Section *, uint32_t> SymtabInfo;
  /// sh_name of every section (existing names keep their offsets).
  llvm::DenseMap<const Section *, uint32_t> SectionNameOffsets;
  /// The input's offsets are kept (only bytes edited in place differ).
  bool InPlace = true;
  /// How many leading bytes of the input the output starts with unchanged
  /// (apart from headers and sections edited in place, which the writer
  /// rewrites over them).
  uint64_t BaseLength = 0;
  /// Where what the layout placed anew starts: the input's bytes before it
  /// keep their offsets; those after it (a tail of non-loaded sections and
  /// tables, Object::allowTailRelayout) may be written over. The input's
  /// size when nothing could move.
  uint64_t TailStart = 0;
  /// The input's own header tables where they lie in a tail that moved:
  /// written back as they were, under whatever the layout put over them,
  /// so that where nothing did they are no edit to record.
  std::vector<std::pair<uint64_t, uint64_t>> OldTables;

  /// Size of \p S in the output file (0 for NOBITS).
  uint64_t outputSize(const Section &S) const;
};

/// Lays \p Obj out. Never moves loaded bytes: an impossible layout is an
/// error.
llvm::Expected<Layout> computeLayout(const Object &Obj);

/// The file offset computeLayout() gives a new segment at \p VAddr aligned
/// to \p Align (a power of two) without Segment::VAddrMinusOffset, when its
/// bytes may start at \p Pos at the earliest (the input's size, for the
/// first new segment): the first offset from Pos on that is congruent to
/// VAddr modulo Align. (With VAddrMinusOffset it is VAddr minus that.)
uint64_t newSegmentOffset(uint64_t Pos, uint64_t VAddr, uint64_t Align);

} // namespace hotswap

#endif // HOTSWAP_OBJECT_LAYOUT_H
