//===- hotswap/AMDGPU/Notes.h - Validating ELF note iterator ----*- C++ -*-===//
//
// Splits the bytes of an ELF note section (SHT_NOTE / PT_NOTE contents) into
// notes. Pure bytes-in/bytes-out: it knows nothing about the ELF model, so it
// can be used and tested on its own. AMDGPU code objects are little-endian
// and use 4-byte alignment for the name and the descriptor of every note.
//
// Every size read from the bytes is checked against the bytes that remain
// before it is used, so no input can cause an out-of-bounds read.
//
// A note section is often loaded memory, so a note's descriptor is replaced
// in place only by one that keeps the note's size: the descriptor may grow
// into its own alignment padding (or shrink within it), nothing else moves.
// A section written anew elsewhere (resizeDescriptor) may grow: the notes
// after a grown one move by what it grew.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_NOTES_H
#define HOTSWAP_AMDGPU_NOTES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace hotswap {
namespace amdgpu {

/// Size of an ELF note header (n_namesz, n_descsz, n_type; 4 bytes each).
constexpr uint64_t NoteHeaderSize = 12;
/// Alignment of the name and of the descriptor inside a note.
constexpr uint64_t NoteAlign = 4;

/// One note of a note section. Name and Desc point into the section bytes
/// passed to parseNotes, which must outlive the NoteRef.
struct NoteRef {
  /// Owner name without its terminating NUL ("AMDGPU").
  llvm::StringRef Name;
  /// n_namesz as stored (includes the NUL when there is one).
  uint32_t NameSize = 0;
  uint32_t Type = 0;
  /// The descriptor, n_descsz bytes (padding not included).
  llvm::ArrayRef<uint8_t> Desc;
  /// Offset of the note header within the section.
  uint64_t Offset = 0;
  /// Offset of the descriptor within the section.
  uint64_t DescOffset = 0;
  /// Total size of the note: header, padded name and padded descriptor.
  uint64_t Size = 0;
};

/// Splits \p SectionBytes into notes. Fails with a message naming the note's
/// offset when a header is truncated or a name or descriptor (with its
/// padding) extends past the end of the section.
llvm::Expected<std::vector<NoteRef>>
parseNotes(llvm::ArrayRef<uint8_t> SectionBytes);

/// The most bytes a descriptor of \p Note may have without changing the
/// note's size: its size rounded up to NoteAlign.
uint64_t descriptorCapacity(const NoteRef &Note);

/// Replaces the descriptor of \p Note (parsed from bytes laid out like
/// \p Section) by \p NewDesc, in place: n_descsz is updated and, when the
/// size changes, the padding after the new descriptor is zeroed (otherwise it
/// is kept). Fails, changing nothing, when \p NewDesc would change the size
/// of the note (it does not round up to descriptorCapacity(\p Note)) or the
/// note does not lie within \p Section.
llvm::Error replaceDescriptor(llvm::MutableArrayRef<uint8_t> Section,
                              const NoteRef &Note,
                              llvm::ArrayRef<uint8_t> NewDesc);

/// Replaces the descriptor of \p Note (parsed from bytes laid out like
/// \p Section) by \p NewDesc of any size: n_descsz is updated, the new
/// descriptor is zero-padded to NoteAlign and every byte after the note
/// moves by what it grew or shrank. Notes parsed before keep their offsets
/// only when they lie before \p Note: resize from the last note to the
/// first. Fails, changing nothing, when the note does not lie within
/// \p Section or \p NewDesc does not fit n_descsz.
llvm::Error resizeDescriptor(std::vector<uint8_t> &Section, const NoteRef &Note,
                             llvm::ArrayRef<uint8_t> NewDesc);

/// Appends one note (header, name with NUL and padding, descriptor and
/// padding) to \p Out. Padding bytes are zero.
void appendNote(std::vector<uint8_t> &Out, llvm::StringRef Name, uint32_t Type,
                llvm::ArrayRef<uint8_t> Desc);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_NOTES_H
