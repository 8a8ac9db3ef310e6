//===- lib/AMDGPU/Notes.cpp - Validating ELF note iterator ----------------===//
//
// All arithmetic is done in 64 bits on 32-bit sizes, and every size is
// compared with the number of bytes remaining in the section (never added to
// an offset first), so neither overflow nor an out-of-bounds read is possible.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/Notes.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/Record.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;

namespace hotswap {
namespace amdgpu {

namespace {

using Elf_Nhdr = object::ELF64LE::Nhdr;
static_assert(sizeof(Elf_Nhdr) == NoteHeaderSize, "n_namesz, n_descsz, n_type");

Error noteError(uint64_t NoteOffset, const Twine &Msg) {
  return makeError("note at offset " + hex(NoteOffset) + ": " + Msg);
}
} // namespace

Expected<std::vector<NoteRef>> parseNotes(ArrayRef<uint8_t> SectionBytes) {
  std::vector<NoteRef> Notes;
  const uint64_t End = SectionBytes.size();
  const std::string SectionSize = "(size " + hex(End) + ")";
  uint64_t Pos = 0;
  while (Pos < End) {
    const uint64_t Remaining = End - Pos;
    if (Remaining < NoteHeaderSize)
      return noteError(Pos, "truncated header (" + hex(Remaining) +
                                " bytes left, need " + hex(NoteHeaderSize) +
                                ")");
    const Elf_Nhdr &H = recordAt<Elf_Nhdr>(SectionBytes, Pos);
    NoteRef N;
    N.Offset = Pos;
    N.NameSize = H.n_namesz;
    const uint32_t DescSize = H.n_descsz;
    N.Type = H.n_type;

    // Name, then its padding, each checked against what is left.
    uint64_t Left = Remaining - NoteHeaderSize;
    if (N.NameSize > Left)
      return noteError(Pos, "name size " + hex(N.NameSize) +
                                " extends past end of section " + SectionSize);
    const uint64_t PaddedName = alignTo(uint64_t(N.NameSize), NoteAlign);
    if (PaddedName > Left)
      return noteError(Pos, "name padding extends past end of section " +
                                SectionSize);
    const uint64_t NameOffset = Pos + NoteHeaderSize;
    StringRef Name(reinterpret_cast<const char *>(SectionBytes.data()) +
                       NameOffset,
                   N.NameSize);
    if (!Name.empty() && Name.back() == '\0')
      Name = Name.drop_back();
    N.Name = Name;
    Left -= PaddedName;

    // Descriptor, then its padding.
    N.DescOffset = NameOffset + PaddedName;
    if (DescSize > Left)
      return noteError(Pos, "descriptor size " + hex(DescSize) +
                                " extends past end of section " + SectionSize);
    const uint64_t PaddedDesc = alignTo(uint64_t(DescSize), NoteAlign);
    if (PaddedDesc > Left)
      return noteError(Pos, "descriptor padding extends past end of section " +
                                SectionSize);
    N.Desc = SectionBytes.slice(N.DescOffset, DescSize);
    N.Size = NoteHeaderSize + PaddedName + PaddedDesc;
    Notes.push_back(N);
    Pos += N.Size;
  }
  return std::move(Notes);
}

uint64_t descriptorCapacity(const NoteRef &Note) {
  return alignTo(uint64_t(Note.Desc.size()), NoteAlign);
}

/// That \p Note (its header, and its descriptor with padding) lies within
/// a section of \p Size bytes.
static Error checkWithin(const NoteRef &Note, uint64_t Size) {
  const uint64_t Capacity = descriptorCapacity(Note);
  if (Note.Offset > Note.DescOffset ||
      Note.DescOffset - Note.Offset < NoteHeaderSize ||
      Note.DescOffset > Size || Capacity > Size - Note.DescOffset)
    return noteError(Note.Offset,
                     "extends past end of section (size " + hex(Size) + ")");
  return Error::success();
}

Error replaceDescriptor(MutableArrayRef<uint8_t> Section, const NoteRef &Note,
                        ArrayRef<uint8_t> NewDesc) {
  const uint64_t Capacity = descriptorCapacity(Note);
  if (alignTo(uint64_t(NewDesc.size()), NoteAlign) != Capacity)
    return noteError(Note.Offset, "a descriptor of " + hex(NewDesc.size()) +
                                      " bytes would change the size of the "
                                      "note (" +
                                      hex(Capacity) +
                                      " bytes for the descriptor)");
  if (Error E = checkWithin(Note, Section.size()))
    return E;
  // The header lies before the descriptor, inside the section.
  mutableRecordAt<Elf_Nhdr>(Section, Note.Offset).n_descsz =
      static_cast<uint32_t>(NewDesc.size());
  uint8_t *Desc = Section.data() + Note.DescOffset;
  std::copy(NewDesc.begin(), NewDesc.end(), Desc);
  if (NewDesc.size() != Note.Desc.size())
    std::fill(Desc + NewDesc.size(), Desc + Capacity, 0);
  return Error::success();
}

Error resizeDescriptor(std::vector<uint8_t> &Section, const NoteRef &Note,
                       ArrayRef<uint8_t> NewDesc) {
  const uint64_t Capacity = descriptorCapacity(Note);
  if (Error E = checkWithin(Note, Section.size()))
    return E;
  if (NewDesc.size() > UINT32_MAX - (NoteAlign - 1))
    return noteError(Note.Offset, "a descriptor of " + hex(NewDesc.size()) +
                                      " bytes does not fit n_descsz");
  mutableRecordAt<Elf_Nhdr>(Section, Note.Offset).n_descsz =
      static_cast<uint32_t>(NewDesc.size());
  std::vector<uint8_t> Padded(NewDesc.begin(), NewDesc.end());
  Padded.resize(alignTo(uint64_t(NewDesc.size()), NoteAlign), 0);
  auto At = Section.begin() + Note.DescOffset;
  At = Section.erase(At, At + Capacity);
  Section.insert(At, Padded.begin(), Padded.end());
  return Error::success();
}

void appendNote(std::vector<uint8_t> &Out, StringRef Name, uint32_t Type,
                ArrayRef<uint8_t> Desc) {
  const uint32_t NameSize = Name.size() + 1;
  Elf_Nhdr H;
  H.n_namesz = NameSize;
  H.n_descsz = static_cast<uint32_t>(Desc.size());
  H.n_type = Type;
  const auto *HB = reinterpret_cast<const uint8_t *>(&H);
  Out.insert(Out.end(), HB, HB + sizeof(H));
  Out.insert(Out.end(), Name.bytes_begin(), Name.bytes_end());
  Out.push_back(0);
  Out.resize(Out.size() + (alignTo(NameSize, NoteAlign) - NameSize), 0);
  Out.insert(Out.end(), Desc.begin(), Desc.end());
  Out.resize(Out.size() + (alignTo(Desc.size(), NoteAlign) - Desc.size()), 0);
}

} // namespace amdgpu
} // namespace hotswap
