//===- hotswap/Object/Writer.h - Layout and serialization -------*- C++ -*-===//
//
// Two phases, as in the `object` crate's writer: computeLayout() reserves
// every region (offsets and total size) without touching bytes, then
// writeObject() fills one buffer. The layout policy:
//   * everything under a PT_LOAD, the ELF header and allocated sections keep
//     their file offsets (the input bytes are copied verbatim);
//   * new sections of new PT_LOADs go above the loaded image at an offset
//     congruent to their address modulo the segment alignment;
//   * the program header table stays in place unless it must grow, then it
//     follows the new segments and PT_PHDR becomes PT_NULL;
//   * non-loaded sections that changed (or follow something that moved) are
//     packed after that, each at its alignment;
//   * the section header table comes last, 8-byte aligned.
// An object with no layout change is written back byte for byte.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_OBJECT_WRITER_H
#define HOTSWAP_OBJECT_WRITER_H

#include "hotswap/Object/Object.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

namespace hotswap {

/// Where everything goes in the output file.
struct Layout {
  uint64_t FileSize = 0;
  uint64_t PhOff = 0;
  uint64_t ShOff = 0;
  /// Same order as Object::Sections.
  std::vector<uint64_t> SectionOffsets;
  /// Same order as Object::Segments (offset, filesz, memsz for new ones).
  std::vector<Segment> Segments;
  /// Bytes of symbol tables and string tables rebuilt for output.
  llvm::DenseMap<const Section *, std::vector<uint8_t>> Rebuilt;
  llvm::DenseMap<const Section *, uint32_t> SymtabInfo;
  /// sh_name of every section (existing names keep their offsets).
  llvm::DenseMap<const Section *, uint32_t> SectionNameOffsets;
  /// Whether the input is copied through unchanged apart from in-place edits.
  bool InPlace = true;
};

class Writer {
public:
  /// Derives string tables, symbol tables and offsets. Never moves loaded
  /// bytes: an impossible layout is an error.
  static llvm::Expected<Layout> computeLayout(const Object &Obj);
  /// Writes the object into \p Out, which must be Layout.FileSize bytes.
  /// With \p Touched, \p Out is assumed to hold the first baseLength()
  /// bytes of the input and zeros after them already (the caller copies
  /// them, e.g. in the kernel): only the bytes that differ are written, and
  /// their ranges (offset, size) are appended to \p Touched.
  static void write(const Object &Obj, const Layout &L,
                    llvm::MutableArrayRef<uint8_t> Out,
                    std::vector<std::pair<uint64_t, uint64_t>> *Touched =
                        nullptr);
  /// How many leading bytes of the input the output starts with.
  static uint64_t baseLength(const Object &Obj, const Layout &L);
};

/// Convenience: layout + write into a new buffer.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
writeObjectToBuffer(const Object &Obj);

/// Layout + write to \p Path atomically (temporary file in the same
/// directory, renamed on success); "-" writes to standard output. On error no
/// file is created or changed.
llvm::Error writeObjectToFile(const Object &Obj, llvm::StringRef Path);

} // namespace hotswap

#endif // HOTSWAP_OBJECT_WRITER_H
