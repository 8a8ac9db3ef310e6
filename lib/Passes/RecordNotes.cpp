//===- lib/Passes/RecordNotes.cpp - The records' one note family ----------===//

#include "hotswap/Passes/RecordNotes.h"

#include "hotswap/AMDGPU/Notes.h"
#include "hotswap/Support/Error.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"

using namespace llvm;
using namespace hotswap;

namespace {
/// The owner's size with its NUL: the name needs no padding.
constexpr uint32_t OwnerSize = 8;
static_assert(RecordNoteOwner.size() + 1 == OwnerSize &&
                  amdgpu::NoteHeaderSize + OwnerSize == RecordNoteDescAt,
              "the owner fills its padded name");

void putU32(std::vector<uint8_t> &Out, uint32_t V) {
  uint8_t B[4];
  support::endian::write32le(B, V);
  Out.insert(Out.end(), B, B + 4);
}
} // namespace

void hotswap::putRecordNoteHead(std::vector<uint8_t> &Out, RecordNoteType T,
                                uint32_t DescSize) {
  putU32(Out, OwnerSize);
  putU32(Out, DescSize);
  putU32(Out, static_cast<uint32_t>(T));
  Out.insert(Out.end(), RecordNoteOwner.begin(), RecordNoteOwner.end());
  Out.push_back(0);
}

Expected<ArrayRef<uint8_t>>
hotswap::recordNoteDesc(ArrayRef<uint8_t> SectionBytes, RecordNoteType T) {
  Expected<std::vector<amdgpu::NoteRef>> Notes =
      amdgpu::parseNotes(SectionBytes);
  if (!Notes)
    return Notes.takeError();
  if (Notes->size() != 1)
    return makeError("the section holds " + Twine(Notes->size()) +
                     " notes, not one");
  const amdgpu::NoteRef &N = Notes->front();
  if (N.Name != RecordNoteOwner || N.NameSize != OwnerSize ||
      N.Type != static_cast<uint32_t>(T))
    return makeError("the note is not a '" + RecordNoteOwner +
                     "' note of type " + Twine(static_cast<uint32_t>(T)));
  return N.Desc;
}
