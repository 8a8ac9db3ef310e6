//===- lib/AMDGPU/MetadataReader.cpp - Read one metadata note -------------===//
//
// One pass over the descriptor with MsgPackTokenizer (no msgpack::Document,
// whose per-map std::map dominated the run time on large code objects). The
// tokenizer enforces the msgpack rules; this file checks the AMDGPU shape of
// the document and captures the values of the keys in KernelField.
//
//===----------------------------------------------------------------------===//

#include "MetadataReader.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>

using namespace llvm;
using msgpack::Type;

namespace hotswap {
namespace amdgpu {

namespace {

constexpr StringLiteral FieldKeys[NumKernelFields] = {
    ".sgpr_count",
    ".vgpr_count",
    ".agpr_count",
    ".kernarg_segment_size",
    ".wavefront_size",
    ".group_segment_fixed_size",
    ".private_segment_fixed_size",
    ".max_flat_workgroup_size",
    ".sgpr_spill_count",
    ".vgpr_spill_count",
    ".uses_dynamic_stack",
};

/// The KernelMD member of each integer field, in KernelField order.
constexpr std::optional<uint64_t> KernelMD::*IntMembers[] = {
    &KernelMD::SGPRCount,
    &KernelMD::VGPRCount,
    &KernelMD::AGPRCount,
    &KernelMD::KernargSegmentSize,
    &KernelMD::WavefrontSize,
    &KernelMD::GroupSegmentFixedSize,
    &KernelMD::PrivateSegmentFixedSize,
    &KernelMD::MaxFlatWorkgroupSize,
    &KernelMD::SGPRSpillCount,
    &KernelMD::VGPRSpillCount,
};
static_assert(std::size(IntMembers) + 1 == NumKernelFields,
              "every field but UsesDynamicStack is an integer");

constexpr unsigned DynamicStack = unsigned(KernelField::UsesDynamicStack);

/// Where the values of the keys a kernel map may have are captured: one slot
/// per KernelField, then .name and .symbol.
enum : unsigned { NameSlot = NumKernelFields, SymbolSlot, NumSlots };

std::optional<unsigned> slotForKey(StringRef Key) {
  if (Key.size() < 5 || Key[0] != '.')
    return std::nullopt;
  if (Key == ".name")
    return NameSlot;
  if (Key == ".symbol")
    return SymbolSlot;
  for (unsigned F = 0; F != NumKernelFields; ++F)
    if (FieldKeys[F] == Key)
      return F;
  return std::nullopt;
}

using Slots = std::array<std::optional<MsgPackToken>, NumSlots>;

std::string sameSymbol(size_t Earlier, size_t I, StringRef Symbol) {
  return "kernels " + std::to_string(Earlier) + " and " + std::to_string(I) +
         " have the same symbol '" + Symbol.str() + "'";
}

/// Reads one descriptor. Each read* function returns false when the payload
/// is malformed (reading stops there) and records the first problem of the
/// content of each kind, to be reported after the whole blob was read.
class NoteReader {
public:
  NoteReader(StringRef Blob, NoteKernelSink &Sink)
      : TS(Blob), Size(Blob.size()), Sink(Sink) {}

  bool read();
  /// The first problem of the content, in the order the header promises.
  std::optional<std::string> problem() const;

  MsgPackTokenizer TS;
  const uint64_t Size;
  NoteContents Contents;
  /// Where valid kernels go.
  NoteKernelSink &Sink;

private:
  bool readVersion(const MsgPackToken &V);
  bool readKernels(const MsgPackToken &V);
  bool readKernel(size_t I, const MsgPackToken &Map);
  std::optional<std::string> checkKernel(size_t I, const Slots &S,
                                         NoteKernel &K);

  std::optional<std::string> RootProblem, VersionProblem, TargetProblem,
      KernelsProblem, KernelProblem;
};

bool NoteReader::read() {
  MsgPackToken Root;
  if (!TS.next(Root))
    return false;
  if (Root.Obj.Kind != Type::Map) {
    RootProblem = "root is not a map";
    return TS.skip(Root);
  }
  for (size_t P = 0; P != Root.Obj.Length; ++P) {
    MsgPackToken Key, V;
    if (!TS.next(Key) || !TS.next(V))
      return false;
    StringRef K = Key.Obj.Kind == Type::String ? Key.Obj.Raw : StringRef();
    if (K == "amdhsa.version") {
      if (!readVersion(V))
        return false;
      continue;
    }
    if (K == "amdhsa.kernels" && V.Obj.Kind == Type::Array) {
      if (!readKernels(V))
        return false;
      continue;
    }
    if (K == "amdhsa.kernels")
      KernelsProblem = "'amdhsa.kernels' is not an array";
    if (K == "amdhsa.target") {
      if (V.Obj.Kind == Type::String)
        Contents.Target = V.Obj.Raw.str();
      else
        TargetProblem = "'amdhsa.target' is not a string";
    }
    if (!TS.skip(V))
      return false;
  }
  return true;
}

std::optional<std::string> NoteReader::problem() const {
  for (const std::optional<std::string> *P :
       {&RootProblem, &VersionProblem, &TargetProblem, &KernelsProblem,
        &KernelProblem})
    if (*P)
      return *P;
  return std::nullopt;
}

bool NoteReader::readVersion(const MsgPackToken &V) {
  std::optional<uint64_t> Parts[2];
  if (V.Obj.Kind == Type::Array) {
    for (size_t E = 0; E != V.Obj.Length; ++E) {
      MsgPackToken Elt;
      if (!TS.next(Elt))
        return false;
      if (E < 2)
        Parts[E] = Elt.asUnsigned();
      if (!TS.skip(Elt))
        return false;
    }
  } else if (!TS.skip(V)) {
    return false;
  }
  if (Parts[0] && Parts[1])
    Contents.Version = MetadataVersion{*Parts[0], *Parts[1]};
  else
    VersionProblem = "'amdhsa.version' is not an array of two unsigned "
                     "integers";
  return true;
}

bool NoteReader::readKernels(const MsgPackToken &V) {
  // A kernel map takes at least 16 bytes (".name", ".symbol" and their
  // values), so this is no more than the blob can hold.
  const size_t Expect =
      std::min<size_t>(V.Obj.Length, (Size - TS.offset()) / 16 + 1);
  Sink.expect(Expect);
  for (size_t I = 0; I != V.Obj.Length; ++I) {
    MsgPackToken Map;
    if (!TS.next(Map))
      return false;
    if (Map.Obj.Kind != Type::Map) {
      if (!KernelProblem)
        KernelProblem = "kernel " + std::to_string(I) + " is not a map";
      if (!TS.skip(Map))
        return false;
      continue;
    }
    if (!readKernel(I, Map))
      return false;
    Sink.readUpTo(TS.offset());
  }
  return true;
}

bool NoteReader::readKernel(size_t I, const MsgPackToken &Map) {
  Slots S;
  for (size_t E = 0; E != Map.Obj.Length; ++E) {
    MsgPackToken Key, V;
    if (!TS.next(Key) || !TS.next(V))
      return false;
    // Once a kernel is bad, later kernels are only read, not checked.
    if (!KernelProblem && Key.Obj.Kind == Type::String)
      if (std::optional<unsigned> Slot = slotForKey(Key.Obj.Raw))
        S[*Slot] = V;
    if (!TS.skip(V))
      return false;
  }
  if (KernelProblem)
    return true;
  NoteKernel K;
  KernelProblem = checkKernel(I, S, K);
  if (KernelProblem)
    return true;
  // (Offsets fit 32 bits: readMetadataNote refuses a larger blob.)
  K.Map = {uint32_t(Map.Offset), uint32_t(TS.offset()),
           uint32_t(Map.Obj.Length), uint8_t(Map.Size)};
  const StringRef Symbol = S[SymbolSlot]->Obj.Raw; // (in the blob)
  if (std::optional<unsigned> Earlier = Sink.take(std::move(K)))
    KernelProblem = sameSymbol(*Earlier, I, Symbol);
  return true;
}

std::optional<std::string> NoteReader::checkKernel(size_t I, const Slots &S,
                                                   NoteKernel &K) {
  const std::string Kernel = "kernel " + std::to_string(I) + ": ";
  for (unsigned Slot : {unsigned(NameSlot), unsigned(SymbolSlot)}) {
    const char *Key = Slot == NameSlot ? ".name" : ".symbol";
    if (!S[Slot])
      return Kernel + "missing '" + Key + "'";
    if (S[Slot]->Obj.Kind != Type::String)
      return Kernel + "'" + Key + "' is not a string";
  }
  K.MD.Name = S[NameSlot]->Obj.Raw.str();
  K.MD.Symbol = S[SymbolSlot]->Obj.Raw.str();
  K.MD.Index = unsigned(I);
  for (unsigned F = 0; F != NumKernelFields; ++F) {
    const std::optional<MsgPackToken> &V = S[F];
    if (!V)
      continue;
    if (F == DynamicStack) {
      if (V->Obj.Kind != Type::Boolean)
        return Kernel + "'" + FieldKeys[F].str() + "' is not a boolean";
      K.MD.UsesDynamicStack = V->Obj.Bool;
      continue;
    }
    std::optional<uint64_t> Value = V->asUnsigned();
    if (!Value)
      return Kernel + "'" + FieldKeys[F].str() + "' is not an unsigned integer";
    K.MD.*IntMembers[F] = *Value;
  }
  for (unsigned F = 0; F != NumKernelFields; ++F)
    if (const std::optional<MsgPackToken> &T = S[F])
      K.Fields[F] = {uint32_t(T->Offset), uint8_t(T->Size),
                     T->Obj.Kind == msgpack::Type::Int};
  return std::nullopt;
}

} // namespace

StringRef kernelFieldKey(KernelField F) { return FieldKeys[unsigned(F)]; }

std::optional<uint64_t> KernelMD::get(KernelField F) const {
  if (F == KernelField::UsesDynamicStack) {
    if (!UsesDynamicStack)
      return std::nullopt;
    return uint64_t(*UsesDynamicStack);
  }
  return this->*IntMembers[unsigned(F)];
}

Expected<NoteContents> readMetadataNote(StringRef Blob, uint64_t NoteOffset,
                                        bool NameNote, NoteKernelSink &Sink) {
  const std::string Note = "note at offset " + hex(NoteOffset) + ": ";
  // n_descsz is 32 bits; kernel indices (bounded by the size) fit unsigned.
  if (Blob.size() > std::numeric_limits<uint32_t>::max())
    return makeError(Note + "descriptor larger than 4 GiB");
  NoteReader R(Blob, Sink);
  // read() stops early only where the tokenizer failed.
  if (!R.read())
    return makeError(Note + toString(R.TS.error()));
  if (std::optional<std::string> P = R.problem())
    return makeError((NameNote ? Note : std::string()) + *P);
  return std::move(R.Contents);
}

} // namespace amdgpu
} // namespace hotswap
