//===- lib/AMDGPU/Metadata.cpp - AMDGPU metadata notes --------------------===//
//
// Puts the metadata notes of a section together: each note is read on its
// own (MetadataReader.cpp); here the kernels of all notes are joined, a
// .symbol described by two notes is refused, and amdhsa.version and
// amdhsa.target must agree wherever present. Editing is in
// MetadataRewrite.cpp.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/Metadata.h"
#include "MetadataReader.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace hotswap {
namespace amdgpu {

char NoteGrowthError::ID;
char MetadataSelfCheckError::ID;

void NoteGrowthError::log(raw_ostream &OS) const {
  OS << "metadata: kernel '" << Symbol << "': '" << kernelFieldKey(Field)
     << "' " << Value << " does not fit: the note at offset " << hex(NoteOffset)
     << " would have to grow, and it is loaded memory";
}

void MetadataSelfCheckError::log(raw_ostream &OS) const {
  OS << "metadata: internal error: rewritten note fails self-check: " << Reason;
}

namespace {
std::string versionString(const MetadataVersion &V) {
  return std::to_string(V.Major) + "." + std::to_string(V.Minor);
}
} // namespace

CodeObjectMetadata::CodeObjectMetadata() = default;
CodeObjectMetadata::CodeObjectMetadata(CodeObjectMetadata &&) = default;
CodeObjectMetadata &
CodeObjectMetadata::operator=(CodeObjectMetadata &&) = default;
CodeObjectMetadata::~CodeObjectMetadata() = default;

Expected<CodeObjectMetadata>
CodeObjectMetadata::parse(ArrayRef<uint8_t> NoteSectionBytes,
                          uint64_t FileOffset, bool Borrow) {
  CodeObjectMetadata MD;
  if (Borrow) {
    MD.Section = NoteSectionBytes;
  } else {
    MD.OwnedSection.assign(NoteSectionBytes.begin(), NoteSectionBytes.end());
    MD.Section = MD.OwnedSection;
  }
  MD.FileOffset = FileOffset;
  if (Error E = MD.load())
    return std::move(E);
  return std::move(MD);
}

Error CodeObjectMetadata::load() {
  Expected<std::vector<NoteRef>> All = parseNotes(Section);
  if (!All)
    return All.takeError();
  for (const NoteRef &N : *All)
    if (N.Name == AMDGPUNoteOwner && N.Type == NT_AMDGPU_METADATA)
      NoteRefs.push_back(N);

  // Every note is read first; with several, a message about the content of
  // one names it.
  const bool NameNote = NoteRefs.size() > 1;
  std::vector<NoteContents> Read;
  Read.reserve(NoteRefs.size());
  size_t NumKernels = 0;
  for (const NoteRef &N : NoteRefs) {
    Expected<NoteContents> C =
        readMetadataNote(toStringRef(N.Desc), N.Offset, NameNote);
    if (!C)
      return prefixError("metadata", C.takeError());
    NumKernels += C->Kernels.size();
    Read.push_back(std::move(*C));
  }

  // The first note with amdhsa.version (amdhsa.target) sets it; every other
  // note that has one must agree.
  std::optional<size_t> VersionNote, TargetNote;
  for (size_t I = 0; I != Read.size(); ++I) {
    MetadataNote &Info = Notes.emplace_back();
    Info.Offset = NoteRefs[I].Offset;
    Info.Version = Read[I].Version;
    Info.Target = std::move(Read[I].Target);
    auto Disagree = [&](size_t First, StringRef Key, const std::string &A,
                        const std::string &B) {
      return makeError("metadata: notes at offsets " +
                       hex(Notes[First].Offset) + " and " + hex(Info.Offset) +
                       " disagree on '" + Key + "' ('" + A + "' and '" + B +
                       "')");
    };
    if (Info.Version && !VersionNote) {
      Version = Info.Version;
      VersionNote = I;
    } else if (Info.Version && !(*Info.Version == *Version)) {
      return Disagree(*VersionNote, "amdhsa.version", versionString(*Version),
                      versionString(*Info.Version));
    }
    if (Info.Target && !TargetNote) {
      Target = *Info.Target;
      TargetNote = I;
    } else if (Info.Target && *Info.Target != Target) {
      return Disagree(*TargetNote, "amdhsa.target", Target, *Info.Target);
    }
  }

  // Kernels, note by note; a .symbol belongs to one note.
  Kernels.reserve(NumKernels);
  FieldLocs.reserve(NumKernels);
  MapLocs.reserve(NumKernels);
  BySymbol = StringMap<unsigned>(unsigned(NumKernels));
  for (size_t I = 0; I != Read.size(); ++I) {
    for (NoteKernel &K : Read[I].Kernels) {
      K.MD.Note = unsigned(I);
      auto [It, New] = BySymbol.try_emplace(K.MD.Symbol, Kernels.size());
      if (!New)
        return makeError("metadata: kernel '" + K.MD.Symbol +
                         "' is described by the notes at offsets " +
                         hex(Notes[Kernels[It->second].Note].Offset) + " and " +
                         hex(Notes[I].Offset));
      FieldLocs.push_back(K.Fields);
      MapLocs.push_back(K.Map);
      Kernels.push_back(std::move(K.MD));
    }
  }
  return Error::success();
}

const KernelMD *CodeObjectMetadata::findBySymbol(StringRef Symbol) const {
  auto It = BySymbol.find(Symbol);
  return It == BySymbol.end() ? nullptr : &Kernels[It->second];
}

} // namespace amdgpu
} // namespace hotswap
