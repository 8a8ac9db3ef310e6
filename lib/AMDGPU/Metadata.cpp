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
                          uint64_t FileOffset, bool Borrow,
                          function_ref<void(ArrayRef<uint8_t>)> DoneWith) {
  CodeObjectMetadata MD;
  if (Borrow) {
    MD.Section = NoteSectionBytes;
  } else {
    MD.OwnedSection.assign(NoteSectionBytes.begin(), NoteSectionBytes.end());
    MD.Section = MD.OwnedSection;
  }
  MD.FileOffset = FileOffset;
  if (Error E = MD.load(DoneWith))
    return std::move(E);
  return std::move(MD);
}

/// Puts each note's kernels straight where the metadata keeps them (one
/// copy, one map of symbols), and tells the section's owner which bytes
/// were read.
class CodeObjectMetadata::Loader : public NoteKernelSink {
public:
  Loader(CodeObjectMetadata &MD, function_ref<void(ArrayRef<uint8_t>)> DoneWith)
      : MD(MD), DoneWith(DoneWith) {}
  ~Loader() override {
    if (DoneWith && Done < MD.Section.size())
      DoneWith(MD.Section.drop_front(Done));
  }

  /// The note at index \p Note (in NoteRefs) is read next.
  void startNote(unsigned Note) {
    this->Note = Note;
    First = MD.Kernels.size();
  }
  void expect(size_t N) override {
    MD.Kernels.reserve(MD.Kernels.size() + N);
    MD.FieldLocs.reserve(MD.FieldLocs.size() + N);
    MD.MapLocs.reserve(MD.MapLocs.size() + N);
    if (MD.BySymbol.empty()) // (a StringMap grows, but has no reserve)
      MD.BySymbol = StringMap<unsigned>(unsigned(N));
  }
  std::optional<unsigned> take(NoteKernel &&K) override {
    K.MD.Note = Note;
    auto [It, New] = MD.BySymbol.try_emplace(K.MD.Symbol, MD.Kernels.size());
    if (!New) {
      if (It->second >= First) // this note's problem
        return MD.Kernels[It->second].Index;
      if (!TwoNotes) // reported once every note was read
        TwoNotes = {It->second, Note};
      // (The map then leads to this note's kernel, so that a second one in
      // this note is this note's problem, as it is without the first note.)
      It->second = unsigned(MD.Kernels.size());
    }
    MD.FieldLocs.push_back(K.Fields);
    MD.MapLocs.push_back(K.Map);
    MD.Kernels.push_back(std::move(K.MD));
    return std::nullopt;
  }
  void readUpTo(uint64_t Offset) override {
    if (!DoneWith)
      return;
    const uint64_t At = Desc + Offset; // (within the section)
    if (At >= Done + DoneWithStep) {
      DoneWith(MD.Section.slice(Done, At - Done));
      Done = At;
    }
  }
  /// Where the descriptor being read starts in the section.
  uint64_t Desc = 0;
  /// The first kernel described by two notes: the earlier kernel's index
  /// and the later note's.
  std::optional<std::pair<unsigned, unsigned>> TwoNotes;

private:
  CodeObjectMetadata &MD;
  function_ref<void(ArrayRef<uint8_t>)> DoneWith;
  unsigned Note = 0;
  size_t First = 0;
  uint64_t Done = 0; // bytes of the section handed to DoneWith
};

Error CodeObjectMetadata::load(function_ref<void(ArrayRef<uint8_t>)> DoneWith) {
  Expected<std::vector<NoteRef>> All = parseNotes(Section);
  if (!All)
    return All.takeError();
  for (const NoteRef &N : *All)
    if (N.Name == AMDGPUNoteOwner && N.Type == NT_AMDGPU_METADATA)
      NoteRefs.push_back(N);

  // Every note is read first; with several, a message about the content of
  // one names it. Kernels, note by note; a .symbol belongs to one note.
  const bool NameNote = NoteRefs.size() > 1;
  std::vector<NoteContents> Read;
  Read.reserve(NoteRefs.size());
  Loader L(*this, DoneWith);
  for (size_t I = 0; I != NoteRefs.size(); ++I) {
    const NoteRef &N = NoteRefs[I];
    L.startNote(unsigned(I));
    L.Desc = uint64_t(N.Desc.data() - Section.data());
    Expected<NoteContents> C =
        readMetadataNote(toStringRef(N.Desc), N.Offset, NameNote, L);
    if (!C)
      return prefixError("metadata", C.takeError());
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
  if (L.TwoNotes) {
    const KernelMD &K = Kernels[L.TwoNotes->first];
    return makeError("metadata: kernel '" + K.Symbol +
                     "' is described by the notes at offsets " +
                     hex(Notes[K.Note].Offset) + " and " +
                     hex(Notes[L.TwoNotes->second].Offset));
  }
  return Error::success();
}

const KernelMD *CodeObjectMetadata::findBySymbol(StringRef Symbol) const {
  auto It = BySymbol.find(Symbol);
  return It == BySymbol.end() ? nullptr : &Kernels[It->second];
}

} // namespace amdgpu
} // namespace hotswap
