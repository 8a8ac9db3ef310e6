//===- lib/AMDGPU/MetadataRewrite.cpp - Edit metadata notes ---------------===//
//
// No msgpack::Document: it re-serializes with sorted keys and minimal
// encodings, which changes bytes nobody asked to change. Instead each new
// value is spliced over the bytes of the value it replaces (the reader
// recorded where they are), keeping their width when the value fits it and
// their signedness family always (LLVM's reader types the uint forms as
// UInt and the int forms as Int, and a consumer may insist on one). The
// framing (n_descsz, padding) is Notes.cpp's.
//
// The self-check reads the result again with the same reader (every value,
// every kernel), and checks that it is the original byte for byte but for
// the changed values, each now one integer (or boolean) token holding its new
// value.
//
//===----------------------------------------------------------------------===//

#include "MetadataReader.h"
#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/MsgPackTokenizer.h"
#include "hotswap/AMDGPU/Notes.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace llvm;

namespace hotswap {
namespace amdgpu {

namespace {

/// Whether \p V has an encoding of \p Size bytes in the uint (or, with
/// \p Signed, the int) family. Values here are never negative.
bool fits(bool Signed, uint64_t V, unsigned Size) {
  switch (Size) {
  case 1:
    return !Signed && V <= 0x7f; // positive fixint
  case 2:
    return V <= (Signed ? 0x7fu : 0xffu);
  case 3:
    return V <= (Signed ? 0x7fffu : 0xffffu);
  case 5:
    return V <= (Signed ? 0x7fffffffu : 0xffffffffu);
  case 9:
    return !Signed || V <= uint64_t(std::numeric_limits<int64_t>::max());
  default:
    return false;
  }
}

/// Appends \p V in the smallest encoding of at least \p MinSize bytes of its
/// family (the uint family when no int form holds it).
void encode(bool Signed, uint64_t V, unsigned MinSize,
            SmallVectorImpl<uint8_t> &Out) {
  if (Signed && !fits(true, V, 9))
    Signed = false;
  unsigned Size = 9;
  for (unsigned S : {1u, 2u, 3u, 5u})
    if (S >= MinSize && fits(Signed, V, S)) {
      Size = S;
      break;
    }
  if (Size == 1) {
    Out.push_back(uint8_t(V));
    return;
  }
  const uint8_t LogSize = Size == 2 ? 0 : Size == 3 ? 1 : Size == 5 ? 2 : 3;
  Out.push_back(uint8_t((Signed ? 0xd0 : 0xcc) + LogSize));
  for (unsigned I = Size - 1; I != 0; --I)
    Out.push_back(uint8_t(V >> (8 * (I - 1))));
}

/// Appends a map header for \p Length entries, at least \p MinSize bytes
/// (fixmap 1, map16 3, map32 5).
void encodeMapHeader(uint64_t Length, unsigned MinSize,
                     SmallVectorImpl<uint8_t> &Out) {
  if (MinSize <= 1 && Length <= 15) {
    Out.push_back(uint8_t(0x80 | Length));
    return;
  }
  const unsigned Size = MinSize <= 3 && Length <= 0xffff ? 3 : 5;
  Out.push_back(Size == 3 ? 0xde : 0xdf);
  for (unsigned I = Size - 1; I != 0; --I)
    Out.push_back(uint8_t(Length >> (8 * (I - 1))));
}

/// One change of a descriptor: a new value over the encoding of its
/// predecessor, a key and its value added at the end of a kernel's map
/// (Size 0), or the header of that map with its new length.
struct Edit {
  enum Kinds : uint8_t { NewValue, AddKey, MapHeader };
  Kinds Kind = NewValue;
  uint64_t Offset = 0;
  unsigned Size = 0;
  bool Signed = false;
  /// The new value, or a MapHeader's new length.
  uint64_t Value = 0;
  const KernelMD *Kernel = nullptr;
  /// The field changed or added (a MapHeader's: the first added).
  KernelField Field = KernelField::SGPRCount;

  bool isBool() const { return Field == KernelField::UsesDynamicStack; }
  /// Whether the new encoding is as wide as the old one.
  bool fitsInPlace() const {
    switch (Kind) {
    case AddKey:
      return false;
    case MapHeader: {
      SmallVector<uint8_t, 5> New;
      encodeInto(New);
      return New.size() == Size;
    }
    case NewValue:
      break;
    }
    return isBool() || fits(Signed && fits(true, Value, 9), Value, Size);
  }
  /// Appends the new encoding, at least as wide as the old one.
  void encodeInto(SmallVectorImpl<uint8_t> &Out) const {
    if (Kind == MapHeader)
      return encodeMapHeader(Value, Size, Out);
    if (Kind == AddKey) {
      StringRef Key = kernelFieldKey(Field); // fixstr: at most 31 bytes
      Out.push_back(uint8_t(0xa0 | Key.size()));
      Out.append(Key.bytes_begin(), Key.bytes_end());
    }
    if (isBool())
      Out.push_back(Value ? 0xc3 : 0xc2);
    else
      encode(Signed, Value, Size, Out);
  }
};

/// \p Desc with \p Edits (in offset order) applied; a NoteGrowthError naming
/// the first edit after which it no longer fits \p Capacity bytes.
Expected<std::vector<uint8_t>> applyEdits(ArrayRef<uint8_t> Desc,
                                          ArrayRef<Edit> Edits,
                                          uint64_t Capacity,
                                          uint64_t NoteOffset) {
  std::vector<uint8_t> Out;
  // A value grows by 8 bytes at most.
  Out.reserve(std::min<uint64_t>(Capacity, Desc.size() + 8 * Edits.size()));
  uint64_t Pos = 0;
  for (const Edit &E : Edits) {
    assert(E.Offset >= Pos && E.Size <= Desc.size() - E.Offset &&
           "edits are in order and inside the descriptor");
    Out.insert(Out.end(), Desc.begin() + Pos, Desc.begin() + E.Offset);
    SmallVector<uint8_t, 9> New;
    E.encodeInto(New);
    Out.insert(Out.end(), New.begin(), New.end());
    Pos = E.Offset + E.Size;
    if (Out.size() + (Desc.size() - Pos) > Capacity)
      return make_error<NoteGrowthError>(E.Kernel->Symbol, E.Field, E.Value,
                                         NoteOffset);
  }
  Out.insert(Out.end(), Desc.begin() + Pos, Desc.end());
  return std::move(Out);
}

/// Offset (in \p New) of the first byte where \p New, starting at
/// \p NewPos, differs from \p Old starting at \p OldPos over \p Len bytes.
std::optional<uint64_t> firstDifference(StringRef Old, uint64_t OldPos,
                                        StringRef New, uint64_t NewPos,
                                        uint64_t Len) {
  StringRef A = Old.substr(OldPos, Len), B = New.substr(NewPos, Len);
  if (A == B)
    return std::nullopt;
  auto [AI, BI] = std::mismatch(A.begin(), A.end(), B.begin(), B.end());
  return NewPos + uint64_t(BI - B.begin());
}

/// The size of what edit \p E wrote at \p Pos of \p New: one integer or
/// boolean token holding the new value, a map header with the new length,
/// or a string token naming the added key and its value token; an error
/// when that is not what is there.
Expected<uint64_t> editTokensAt(StringRef New, uint64_t Pos, const Edit &E) {
  if (Pos > New.size())
    return makeError("the descriptor ends before offset " + hex(Pos));
  // One tokenizer per token: each reads one top-level object.
  auto Token = [&](uint64_t At, MsgPackToken &T, Error &Why) {
    MsgPackTokenizer TS(New.drop_front(At));
    if (TS.next(T))
      return true;
    Why = TS.error();
    return false;
  };
  MsgPackToken K, T;
  Error Why = Error::success();
  bool Ok;
  if (E.Kind == Edit::MapHeader) {
    Ok = Token(Pos, T, Why) && T.Obj.Kind == msgpack::Type::Map &&
         T.Obj.Length == E.Value;
  } else {
    Ok = E.Kind != Edit::AddKey ||
         (Token(Pos, K, Why) && K.Obj.Kind == msgpack::Type::String &&
          K.Obj.Raw == kernelFieldKey(E.Field));
    Ok = Ok && Token(Pos + K.Size, T, Why) &&
         (E.isBool() ? T.Obj.Kind == msgpack::Type::Boolean &&
                           T.Obj.Bool == (E.Value != 0)
                     : T.asUnsigned() == E.Value);
  }
  if (Ok) {
    consumeError(std::move(Why));
    return K.Size + T.Size;
  }
  std::string Cause = Why ? ": " + toString(std::move(Why)) : "";
  return makeError("msgpack token at offset " + hex(Pos) + " is not the " +
                   (E.Kind == Edit::MapHeader ? "new map header"
                    : E.Kind == Edit::AddKey  ? "added key and value"
                                              : "new value") +
                   " for '" + kernelFieldKey(E.Field) + "' of kernel '" +
                   E.Kernel->Symbol + "'" + Cause);
}

/// Checks that \p New is \p Old with the tokens of \p Edits (at their
/// offsets in \p Old, which are token boundaries) replaced, each by one
/// msgpack integer token holding its new value: every other byte is equal.
Error compareWithEdits(StringRef Old, StringRef New, ArrayRef<Edit> Edits) {
  uint64_t OldPos = 0, NewPos = 0;
  for (const Edit &E : Edits) {
    if (std::optional<uint64_t> At =
            firstDifference(Old, OldPos, New, NewPos, E.Offset - OldPos))
      return makeError("byte at offset " + hex(*At) +
                       " differs from the original");
    NewPos += E.Offset - OldPos;
    Expected<uint64_t> Size = editTokensAt(New, NewPos, E);
    if (!Size)
      return Size.takeError();
    NewPos += *Size;
    OldPos = E.Offset + E.Size;
  }
  const uint64_t Rest = Old.size() - OldPos;
  if (New.size() - NewPos != Rest)
    return makeError("the descriptor has " + hex(New.size()) +
                     " bytes instead of " + hex(NewPos + Rest));
  if (std::optional<uint64_t> At =
          firstDifference(Old, OldPos, New, NewPos, Rest))
    return makeError("byte at offset " + hex(*At) +
                     " differs from the original");
  return Error::success();
}

/// The pending edits, note by note (indexed like the notes), each in
/// document order (the fields of a kernel are in the order of its keys; a
/// kernel's map header before them, its added keys after them in field
/// order).
std::vector<std::vector<Edit>>
pendingEdits(ArrayRef<KernelMD> Kernels, const BitVector &Pending,
             ArrayRef<std::array<MetadataValueLoc, NumKernelFields>> Locs,
             ArrayRef<KernelMapLoc> MapLocs, size_t NumNotes) {
  std::vector<std::vector<Edit>> ByNote(NumNotes);
  std::optional<unsigned> HeaderOf; // the kernel whose header was added last
  for (unsigned Bit : Pending.set_bits()) {
    const unsigned I = Bit / NumKernelFields;
    const KernelField F = KernelField(Bit % NumKernelFields);
    const MetadataValueLoc &L = Locs[I][unsigned(F)];
    std::vector<Edit> &Edits = ByNote[Kernels[I].Note];
    if (L.Size) {
      Edits.push_back({Edit::NewValue, L.Offset, L.Size, L.Signed,
                       *Kernels[I].get(F), &Kernels[I], F});
      continue;
    }
    const KernelMapLoc &M = MapLocs[I];
    if (HeaderOf != I) { // (set bits come kernel by kernel)
      Edits.push_back(
          {Edit::MapHeader, M.Offset, M.Size, false, M.Length, &Kernels[I], F});
      HeaderOf = I;
    }
    for (Edit &E : llvm::reverse(Edits))
      if (E.Kind == Edit::MapHeader && E.Kernel == &Kernels[I]) {
        ++E.Value;
        break;
      }
    Edits.push_back(
        {Edit::AddKey, M.End, 0, false, *Kernels[I].get(F), &Kernels[I], F});
  }
  for (std::vector<Edit> &Edits : ByNote)
    llvm::stable_sort(Edits, [](const Edit &A, const Edit &B) {
      return A.Offset < B.Offset;
    });
  return ByNote;
}

/// Whether the note headers and names at \p A and \p B (\p Size bytes
/// from each, at least a header) are equal but for n_descsz (bytes 4 to 8).
bool sameButDescSize(const uint8_t *A, const uint8_t *B, uint64_t Size) {
  return std::equal(A, A + 4, B) && std::equal(A + 8, A + Size, B + 8);
}

} // namespace

Error CodeObjectMetadata::setSGPRCount(StringRef Symbol, uint64_t Value) {
  return setField(Symbol, KernelField::SGPRCount, Value);
}

Error CodeObjectMetadata::setField(StringRef Symbol, KernelField Field,
                                   uint64_t Value) {
  if (!hasMetadata())
    return makeError("metadata: no AMDGPU metadata note");
  auto It = BySymbol.find(Symbol);
  if (It == BySymbol.end())
    return makeError("metadata: no kernel with symbol '" + Symbol + "'");
  const unsigned I = It->second;
  const unsigned F = unsigned(Field);
  if (Field == KernelField::UsesDynamicStack && Value > 1)
    return makeError("metadata: kernel '" + Symbol + "': '" +
                     kernelFieldKey(Field) + "' is a boolean, not " +
                     Twine(Value));
  if (Kernels[I].get(Field) == Value)
    return Error::success();
  KernelMD &K = Kernels[I];
  switch (Field) {
  case KernelField::SGPRCount:
    K.SGPRCount = Value;
    break;
  case KernelField::VGPRCount:
    K.VGPRCount = Value;
    break;
  case KernelField::AGPRCount:
    K.AGPRCount = Value;
    break;
  case KernelField::KernargSegmentSize:
    K.KernargSegmentSize = Value;
    break;
  case KernelField::WavefrontSize:
    K.WavefrontSize = Value;
    break;
  case KernelField::GroupSegmentFixedSize:
    K.GroupSegmentFixedSize = Value;
    break;
  case KernelField::PrivateSegmentFixedSize:
    K.PrivateSegmentFixedSize = Value;
    break;
  case KernelField::MaxFlatWorkgroupSize:
    K.MaxFlatWorkgroupSize = Value;
    break;
  case KernelField::SGPRSpillCount:
    K.SGPRSpillCount = Value;
    break;
  case KernelField::VGPRSpillCount:
    K.VGPRSpillCount = Value;
    break;
  case KernelField::UsesDynamicStack:
    K.UsesDynamicStack = Value != 0;
    break;
  }
  if (Pending.empty())
    Pending.resize(Kernels.size() * NumKernelFields);
  const unsigned Bit = I * NumKernelFields + F;
  if (!Pending.test(Bit)) {
    Pending.set(Bit);
    ++NumPending;
  }
  return Error::success();
}

Expected<NoteRewrite> CodeObjectMetadata::rewrite(bool AllowGrowth) const {
  NoteRewrite R;
  R.Bytes = Section.vec();
  if (!NumPending)
    return std::move(R);
  R.How = NoteRewrite::Method::InPlace;
  const std::vector<std::vector<Edit>> ByNote =
      pendingEdits(Kernels, Pending, FieldLocs, MapLocs, Notes.size());
  // Descriptors that grow beyond their padding, applied last to first once
  // every other note is written (the offsets of the notes before a grown
  // one stay valid).
  std::vector<std::pair<size_t, std::vector<uint8_t>>> Grown;
  for (size_t N = 0; N != Notes.size(); ++N) {
    if (ByNote[N].empty())
      continue;
    const NoteRef &Note = NoteRefs[N];
    // The usual case: every new value fits the width of the old one, and is
    // written over it in place.
    if (llvm::all_of(ByNote[N],
                     [](const Edit &E) { return E.fitsInPlace(); })) {
      for (const Edit &E : ByNote[N]) {
        SmallVector<uint8_t, 9> New;
        E.encodeInto(New);
        assert(New.size() == E.Size && "the value fits its old width");
        llvm::copy(New, R.Bytes.begin() + Note.DescOffset + E.Offset);
      }
      continue;
    }
    Expected<std::vector<uint8_t>> Desc =
        applyEdits(Note.Desc, ByNote[N],
                   AllowGrowth ? UINT64_MAX : descriptorCapacity(Note),
                   FileOffset + Note.Offset);
    if (!Desc)
      return Desc.takeError();
    if (Desc->size() > descriptorCapacity(Note)) {
      Grown.emplace_back(N, std::move(*Desc));
      continue;
    }
    if (Desc->size() != Note.Desc.size() &&
        R.How == NoteRewrite::Method::InPlace)
      R.How = NoteRewrite::Method::PaddingSlack;
    if (Error E = replaceDescriptor(R.Bytes, Note, *Desc))
      return make_error<MetadataSelfCheckError>(toString(std::move(E)));
  }
  for (auto It = Grown.rbegin(); It != Grown.rend(); ++It) {
    R.How = NoteRewrite::Method::Grown;
    if (Error E = resizeDescriptor(R.Bytes, NoteRefs[It->first], It->second))
      return make_error<MetadataSelfCheckError>(toString(std::move(E)));
  }
  if (Error E = verifyRewrite(R.Bytes))
    return std::move(E);
  return std::move(R);
}

Error CodeObjectMetadata::verifyRewrite(ArrayRef<uint8_t> NewSection) const {
  if (Error E = checkRewrite(NewSection))
    return make_error<MetadataSelfCheckError>(toString(std::move(E)));
  return Error::success();
}

Error CodeObjectMetadata::checkRewrite(ArrayRef<uint8_t> New) const {
  // The framing: the same notes in the same order with the same sizes; only
  // a changed metadata note's n_descsz, descriptor and padding differ, and
  // when its descriptor grew, every note after it moved by as much.
  Expected<std::vector<NoteRef>> OldNotes = parseNotes(Section);
  Expected<std::vector<NoteRef>> NewNotes = parseNotes(New);
  if (!OldNotes)
    return OldNotes.takeError();
  if (!NewNotes)
    return NewNotes.takeError();
  if (OldNotes->size() != NewNotes->size())
    return makeError("the section has " + Twine(NewNotes->size()) +
                     " notes instead of " + Twine(OldNotes->size()));
  const std::vector<std::vector<Edit>> ByNote =
      pendingEdits(Kernels, Pending, FieldLocs, MapLocs, Notes.size());
  std::vector<NoteRef> NewMetadata;
  uint64_t Shift = 0; // how far the notes from here on moved
  for (size_t I = 0; I != OldNotes->size(); ++I) {
    const NoteRef &O = (*OldNotes)[I], &N = (*NewNotes)[I];
    const std::string Where = "note at offset " + hex(O.Offset) + ": ";
    size_t M = NewMetadata.size();
    const bool IsMetadata =
        M != NoteRefs.size() && NoteRefs[M].Offset == O.Offset;
    const bool Changed = IsMetadata && !ByNote[M].empty();
    if (N.Offset != O.Offset + Shift ||
        N.DescOffset - N.Offset != O.DescOffset - O.Offset ||
        (N.Size != O.Size && !(Changed && N.Size > O.Size)))
      return makeError(Where + "the note moved or changed its size");
    if (IsMetadata)
      NewMetadata.push_back(N);
    bool Same;
    if (Changed)
      Same = sameButDescSize(Section.data() + O.Offset, New.data() + N.Offset,
                             O.DescOffset - O.Offset);
    else
      Same = ArrayRef<uint8_t>(Section).slice(O.Offset, O.Size) ==
             New.slice(N.Offset, N.Size);
    if (!Same)
      return makeError(Where + "bytes changed outside a changed descriptor");
    Shift += N.Size - O.Size;
  }
  if (New.size() != Section.size() + Shift)
    return makeError("the section has " + hex(New.size()) +
                     " bytes instead of " + hex(Section.size() + Shift));
  if (NewMetadata.size() != Notes.size())
    return makeError("the metadata notes changed");

  // The content: each note reads as valid metadata with the kernels and
  // values expected (the new values where changed, the old elsewhere:
  // Kernels holds both), and changed descriptors equal the old ones token by
  // token but for the new values.
  size_t NextKernel = 0;
  for (size_t M = 0; M != Notes.size(); ++M) {
    const MetadataNote &Info = Notes[M];
    const std::string Where = "note at offset " + hex(Info.Offset) + ": ";
    // Each kernel compared as it is read (the first difference kept, and
    // reported after what reading the note may report).
    struct Compare : NoteKernelSink {
      Compare(ArrayRef<KernelMD> Kernels, size_t &Next, size_t Note)
          : Kernels(Kernels), Next(Next), Note(Note) {}
      std::optional<unsigned> take(NoteKernel &&K) override {
        if (Differs)
          return std::nullopt;
        if (Next == Kernels.size() || Kernels[Next].Note != Note ||
            Kernels[Next].Symbol != K.MD.Symbol ||
            Kernels[Next].Name != K.MD.Name ||
            Kernels[Next].Index != K.MD.Index) {
          Differs = "the kernel list differs";
          return std::nullopt;
        }
        const KernelMD &Want = Kernels[Next++];
        for (unsigned F = 0; F != NumKernelFields; ++F)
          if (K.MD.get(KernelField(F)) != Want.get(KernelField(F))) {
            Differs = "kernel '" + Want.Symbol + "': '" +
                      kernelFieldKey(KernelField(F)).str() +
                      "' does not have the expected value";
            break;
          }
        return std::nullopt;
      }
      ArrayRef<KernelMD> Kernels;
      size_t &Next;
      size_t Note;
      std::optional<std::string> Differs;
    } Cmp(Kernels, NextKernel, M);
    Expected<NoteContents> C =
        readMetadataNote(toStringRef(NewMetadata[M].Desc), Info.Offset,
                         /*NameNote=*/true, Cmp);
    if (!C)
      return C.takeError();
    if (C->Version.has_value() != Info.Version.has_value() ||
        (C->Version && !(*C->Version == *Info.Version)) ||
        C->Target != Info.Target)
      return makeError(Where + "'amdhsa.version' or 'amdhsa.target' differs");
    if (Cmp.Differs)
      return makeError(Where + *Cmp.Differs);
    if (NextKernel != Kernels.size() && Kernels[NextKernel].Note == M)
      return makeError(Where + "the kernel list differs");
    if (!ByNote[M].empty())
      if (Error E =
              compareWithEdits(toStringRef(NoteRefs[M].Desc),
                               toStringRef(NewMetadata[M].Desc), ByNote[M]))
        return prefixError(StringRef(Where).drop_back(2), std::move(E));
  }
  return Error::success();
}

} // namespace amdgpu
} // namespace hotswap
