//===- lib/Code/MetadataCommit.cpp - Writing metadata back ----------------===//

#include "hotswap/Code/MetadataCommit.h"

#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Support/Error.h"

#include "llvm/BinaryFormat/ELF.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

bool code::isNewNote(const Section &S) {
  return !S.Orig && S.Type == ELF::SHT_NOTE && S.Name == NoteSectionName;
}

/// The PT_NOTE that leads a reader to \p Note (null when none does), or an
/// error when it leads to more than \p Note.
static Expected<Segment *> leadingNote(Object &Obj, const Section &Note) {
  for (size_t PI = 0; PI < Obj.segments().size(); ++PI) {
    Segment &P = *Obj.segments()[PI];
    if (P.Type != ELF::PT_NOTE)
      continue;
    if (P.Describes) {
      if (P.Describes == &Note)
        return &P;
      continue;
    }
    if (!Note.Orig || P.FileSize == 0 || Note.Orig->Offset < P.Offset ||
        Note.Orig->Offset - P.Offset >= P.FileSize)
      continue;
    if (P.Offset != Note.Orig->Offset || P.FileSize != Note.Orig->Size)
      return makeError("metadata: the PT_NOTE at program header " + Twine(PI) +
                       " holds more than section '" + Note.Name +
                       "': a note written anew would lose the rest");
    return &P;
  }
  return nullptr;
}

Expected<code::MetadataCommit>
code::commitMetadata(const CodeObjectMetadata &MD, Object &Obj,
                     Section *&NoteSection) {
  if (!MD.hasPendingChanges())
    return MetadataCommit::Unchanged;
  const bool RunNote = isNewNote(*NoteSection);
  if (!RunNote) {
    Expected<NoteRewrite> NR = MD.rewrite();
    if (NR) {
      // The whole note section, the same size (rewrite() checks it): moved
      // in, not copied over a copy of the input's bytes.
      if (NR->Bytes.size() != NoteSection->size())
        return makeError("metadata: the rewritten note section changed size");
      NoteSection->setContents(std::move(NR->Bytes));
      return MetadataCommit::InPlace;
    }
    if (Error E = handleErrors(NR.takeError(), [](const NoteGrowthError &) {}))
      return std::move(E);
  }
  Expected<NoteRewrite> Grown = MD.rewrite(/*AllowGrowth=*/true);
  if (!Grown)
    return Grown.takeError();
  CodeAppender Appender(Obj);
  if (RunNote) {
    if (Error E = Appender.replace(*NoteSection, std::move(Grown->Bytes)))
      return prefixError("metadata", std::move(E));
    return MetadataCommit::NewNote;
  }
  Expected<Segment *> Lead = leadingNote(Obj, *NoteSection);
  if (!Lead)
    return Lead.takeError();
  Expected<Section &> New = Appender.append(
      CodePurpose::Metadata, std::max<uint64_t>(NoteSection->AddrAlign, 4), 0,
      std::move(Grown->Bytes));
  if (!New)
    return New.takeError();
  if (!*Lead) {
    auto P = std::make_unique<Segment>();
    P->Type = ELF::PT_NOTE;
    P->Flags = ELF::PF_R;
    P->Align = std::max<uint64_t>(New->AddrAlign, 4);
    *Lead = &Obj.addSegment(std::move(P));
  }
  (*Lead)->Describes = &*New;
  NoteSection = &*New;
  return MetadataCommit::NewNote;
}
