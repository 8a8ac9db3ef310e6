//===- lib/AMDGPU/Metadata.cpp - AMDGPU metadata note ---------------------===//
//
// Reading goes through llvm::msgpack::Document. Writing does not: Document
// re-serializes with sorted keys and minimal encodings, which changes bytes
// nobody asked to change. Instead a small msgpack scanner finds the exact
// byte range of every value that may change, and rewrite() splices new
// encodings into a copy of the original blob (see Metadata.h for the order in
// which same-size encodings are tried).
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/Notes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/BinaryFormat/MsgPackReader.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>

using namespace llvm;

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

std::optional<unsigned> fieldForKey(StringRef Key) {
  for (unsigned I = 0; I != NumKernelFields; ++I)
    if (FieldKeys[I] == Key)
      return I;
  return std::nullopt;
}

bool isBoolField(unsigned F) {
  return F == unsigned(KernelField::UsesDynamicStack);
}

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

std::string hex(uint64_t V) { return "0x" + utohexstr(V, /*LowerCase=*/true); }

Error mdError(const Twine &Msg) {
  return createStringError("metadata: " + Msg);
}

//===-- msgpack integer encodings -----------------------------------------===//
//
// An integer keeps its signedness family when re-encoded, because LLVM's
// reader turns the unsigned forms (positive fixint, 0xcc-0xcf) into
// Type::UInt and the signed forms (0xd0-0xd3) into Type::Int, and a consumer
// may insist on one of them. Values handled here are never negative.

enum class IntFamily : uint8_t { Unsigned, Signed };

/// Whether \p V can be encoded in family \p Fam with exactly \p Size bytes.
bool fitsIn(IntFamily Fam, uint64_t V, unsigned Size) {
  if (Fam == IntFamily::Unsigned) {
    switch (Size) {
    case 1: return V <= 0x7f;
    case 2: return V <= 0xff;
    case 3: return V <= 0xffff;
    case 5: return V <= 0xffffffff;
    case 9: return true;
    }
    return false;
  }
  switch (Size) {
  case 2: return V <= 0x7f;
  case 3: return V <= 0x7fff;
  case 5: return V <= 0x7fffffff;
  case 9: return V <= uint64_t(std::numeric_limits<int64_t>::max());
  }
  return false;
}

constexpr unsigned IntSizes[] = {1, 2, 3, 5, 9};

/// Smallest size of \p V in \p Fam, or 0 if it has none.
unsigned minimalSize(IntFamily Fam, uint64_t V) {
  for (unsigned S : IntSizes)
    if (fitsIn(Fam, V, S))
      return S;
  return 0;
}

void encodeInt(IntFamily Fam, uint64_t V, unsigned Size,
               std::vector<uint8_t> &Out) {
  assert(fitsIn(Fam, V, Size) && "value does not fit the encoding");
  if (Size == 1) {
    Out.push_back(uint8_t(V));
    return;
  }
  static constexpr uint8_t UTags[] = {0, 0, 0xcc, 0xcd, 0, 0xce, 0, 0, 0, 0xcf};
  static constexpr uint8_t STags[] = {0, 0, 0xd0, 0xd1, 0, 0xd2, 0, 0, 0, 0xd3};
  Out.push_back(Fam == IntFamily::Unsigned ? UTags[Size] : STags[Size]);
  for (unsigned I = Size - 1; I != 0; --I)
    Out.push_back(uint8_t(V >> (8 * (I - 1))));
}

//===-- msgpack scanner ---------------------------------------------------===//

struct Head {
  enum Kind { UInt, SInt, Nil, Bool, Float, Str, Bin, Ext, Array, Map } K;
  /// Bytes of the tag plus its length/value fields.
  unsigned HeadSize = 1;
  /// Payload bytes (Str, Bin, Ext, Float) or element count (Array, Map).
  uint64_t N = 0;
  /// Integer value (SInt: two's complement).
  uint64_t Value = 0;
};

/// Where an integer lives in the blob.
struct IntSlot {
  uint64_t Offset = 0;
  unsigned Size = 0;
  IntFamily Fam = IntFamily::Unsigned;
  uint64_t Value = 0;
};

struct FieldSlot {
  enum Kind { Absent, Int, Bool, Other } K = Absent;
  IntSlot At; // Offset/Size are valid for every kind but Absent
};

struct KernelScan {
  uint64_t HeaderOffset = 0;
  unsigned HeaderSize = 0;
  uint64_t Count = 0;
  /// Offset just past the last entry of the kernel's map.
  uint64_t End = 0;
  std::array<FieldSlot, NumKernelFields> Fields;
};

/// Walks the blob once. Records the slots of the kernels in Wanted and every
/// non-negative integer encoded wider than necessary.
class Scanner {
public:
  Scanner(ArrayRef<uint8_t> Blob, const DenseSet<unsigned> &Wanted)
      : B(Blob), Wanted(Wanted) {}

  Error scan();

  std::map<unsigned, KernelScan> Kernels;
  std::vector<IntSlot> OverWide;

private:
  static constexpr unsigned MaxDepth = 512;

  Error err(uint64_t Pos, const Twine &Msg) {
    return mdError("msgpack at offset " + hex(Pos) + ": " + Msg);
  }
  uint64_t readBE(uint64_t Pos, unsigned Bytes) const {
    uint64_t V = 0;
    for (unsigned I = 0; I != Bytes; ++I)
      V = (V << 8) | B[Pos + I];
    return V;
  }
  Expected<Head> readHead(uint64_t Pos);
  Error skip(uint64_t &Pos, unsigned Depth);
  Expected<std::optional<StringRef>> readKey(uint64_t &Pos, unsigned Depth);
  Error scanKernel(uint64_t &Pos, unsigned Index, const Head &H);

  ArrayRef<uint8_t> B;
  const DenseSet<unsigned> &Wanted;
};

Expected<Head> Scanner::readHead(uint64_t Pos) {
  if (Pos >= B.size())
    return err(Pos, "unexpected end of data");
  const uint8_t T = B[Pos];
  Head H;
  unsigned LenBytes = 0; // big-endian length/value bytes after the tag
  if (T <= 0x7f) {
    H.K = Head::UInt;
    H.Value = T;
    return H;
  }
  if (T >= 0xe0) {
    H.K = Head::SInt;
    H.Value = uint64_t(int64_t(int8_t(T)));
    return H;
  }
  if ((T & 0xf0) == 0x80 || (T & 0xf0) == 0x90) {
    H.K = (T & 0xf0) == 0x80 ? Head::Map : Head::Array;
    H.N = T & 0x0f;
    return H;
  }
  if ((T & 0xe0) == 0xa0) {
    H.K = Head::Str;
    H.N = T & 0x1f;
    return H;
  }
  switch (T) {
  case 0xc0: H.K = Head::Nil; return H;
  case 0xc2: case 0xc3: H.K = Head::Bool; H.Value = T == 0xc3; return H;
  case 0xc4: H.K = Head::Bin; LenBytes = 1; break;
  case 0xc5: H.K = Head::Bin; LenBytes = 2; break;
  case 0xc6: H.K = Head::Bin; LenBytes = 4; break;
  case 0xc7: H.K = Head::Ext; LenBytes = 1; break;
  case 0xc8: H.K = Head::Ext; LenBytes = 2; break;
  case 0xc9: H.K = Head::Ext; LenBytes = 4; break;
  case 0xca: H.K = Head::Float; H.N = 4; return H;
  case 0xcb: H.K = Head::Float; H.N = 8; return H;
  case 0xcc: case 0xcd: case 0xce: case 0xcf:
    H.K = Head::UInt;
    LenBytes = 1u << (T - 0xcc);
    break;
  case 0xd0: case 0xd1: case 0xd2: case 0xd3:
    H.K = Head::SInt;
    LenBytes = 1u << (T - 0xd0);
    break;
  case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
    // fixext: a type byte, then 1 << (T - 0xd4) bytes.
    H.K = Head::Ext;
    H.HeadSize = 2;
    H.N = 1u << (T - 0xd4);
    if (B.size() - Pos < 2)
      return err(Pos, "unexpected end of data");
    return H;
  case 0xd9: H.K = Head::Str; LenBytes = 1; break;
  case 0xda: H.K = Head::Str; LenBytes = 2; break;
  case 0xdb: H.K = Head::Str; LenBytes = 4; break;
  case 0xdc: H.K = Head::Array; LenBytes = 2; break;
  case 0xdd: H.K = Head::Array; LenBytes = 4; break;
  case 0xde: H.K = Head::Map; LenBytes = 2; break;
  case 0xdf: H.K = Head::Map; LenBytes = 4; break;
  default:
    return err(Pos, "invalid type byte " + hex(T));
  }
  H.HeadSize = 1 + LenBytes + (H.K == Head::Ext ? 1 : 0);
  if (B.size() - Pos < H.HeadSize)
    return err(Pos, "unexpected end of data");
  const uint64_t V = readBE(Pos + 1, LenBytes);
  if (H.K == Head::UInt) {
    H.Value = V;
  } else if (H.K == Head::SInt) {
    H.Value = LenBytes == 8 ? V : uint64_t(SignExtend64(V, 8 * LenBytes));
  } else {
    H.N = V;
  }
  return H;
}

Error Scanner::skip(uint64_t &Pos, unsigned Depth) {
  if (Depth > MaxDepth)
    return err(Pos, "nesting deeper than " + Twine(MaxDepth) + " levels");
  Expected<Head> HOrErr = readHead(Pos);
  if (!HOrErr)
    return HOrErr.takeError();
  const Head &H = *HOrErr;
  const uint64_t Start = Pos;
  Pos += H.HeadSize;
  switch (H.K) {
  case Head::UInt:
  case Head::SInt: {
    const IntFamily Fam =
        H.K == Head::UInt ? IntFamily::Unsigned : IntFamily::Signed;
    const bool NonNegative = H.K == Head::UInt || int64_t(H.Value) >= 0;
    if (NonNegative && minimalSize(Fam, H.Value) < H.HeadSize)
      OverWide.push_back({Start, H.HeadSize, Fam, H.Value});
    return Error::success();
  }
  case Head::Nil:
  case Head::Bool:
    return Error::success();
  case Head::Float:
  case Head::Str:
  case Head::Bin:
  case Head::Ext:
    if (H.N > B.size() - Pos)
      return err(Start, "payload extends past end of data");
    Pos += H.N;
    return Error::success();
  case Head::Array:
  case Head::Map: {
    // Every element takes at least one byte: bounds the loop on bad counts.
    const uint64_t Elements = H.K == Head::Map ? 2 * H.N : H.N;
    if (Elements > B.size() - Pos)
      return err(Start, "element count extends past end of data");
    for (uint64_t I = 0; I != Elements; ++I)
      if (Error E = skip(Pos, Depth + 1))
        return E;
    return Error::success();
  }
  }
  return Error::success();
}

Expected<std::optional<StringRef>> Scanner::readKey(uint64_t &Pos,
                                                    unsigned Depth) {
  Expected<Head> H = readHead(Pos);
  if (!H)
    return H.takeError();
  std::optional<StringRef> Key;
  if (H->K == Head::Str && H->N <= B.size() - Pos - H->HeadSize)
    Key = StringRef(reinterpret_cast<const char *>(B.data()) + Pos +
                        H->HeadSize,
                    H->N);
  if (Error E = skip(Pos, Depth))
    return std::move(E);
  return Key;
}

Error Scanner::scanKernel(uint64_t &Pos, unsigned Index, const Head &H) {
  KernelScan &KS = Kernels[Index];
  KS.HeaderOffset = Pos;
  KS.HeaderSize = H.HeadSize;
  KS.Count = H.N;
  if (2 * H.N > B.size() - Pos - H.HeadSize)
    return err(Pos, "element count extends past end of data");
  Pos += H.HeadSize;
  for (uint64_t I = 0; I != H.N; ++I) {
    Expected<std::optional<StringRef>> Key = readKey(Pos, 3);
    if (!Key)
      return Key.takeError();
    std::optional<unsigned> F = *Key ? fieldForKey(**Key) : std::nullopt;
    if (F) {
      Expected<Head> V = readHead(Pos);
      if (!V)
        return V.takeError();
      FieldSlot &S = KS.Fields[*F];
      S.At.Offset = Pos;
      S.At.Size = V->HeadSize;
      S.At.Value = V->Value;
      const bool NonNegative =
          V->K == Head::UInt || (V->K == Head::SInt && int64_t(V->Value) >= 0);
      if (NonNegative) {
        S.K = FieldSlot::Int;
        S.At.Fam =
            V->K == Head::UInt ? IntFamily::Unsigned : IntFamily::Signed;
      } else {
        S.K = V->K == Head::Bool ? FieldSlot::Bool : FieldSlot::Other;
      }
    }
    if (Error E = skip(Pos, 3))
      return E;
  }
  KS.End = Pos;
  return Error::success();
}

Error Scanner::scan() {
  uint64_t Pos = 0;
  Expected<Head> Root = readHead(Pos);
  if (!Root)
    return Root.takeError();
  if (Root->K != Head::Map)
    return err(0, "root is not a map");
  if (2 * Root->N > B.size() - Root->HeadSize)
    return err(0, "element count extends past end of data");
  Pos += Root->HeadSize;
  for (uint64_t I = 0; I != Root->N; ++I) {
    Expected<std::optional<StringRef>> Key = readKey(Pos, 1);
    if (!Key)
      return Key.takeError();
    Expected<Head> V = readHead(Pos);
    if (!V)
      return V.takeError();
    if (!*Key || **Key != "amdhsa.kernels" || V->K != Head::Array) {
      if (Error E = skip(Pos, 1))
        return E;
      continue;
    }
    if (V->N > B.size() - Pos - V->HeadSize)
      return err(Pos, "element count extends past end of data");
    Pos += V->HeadSize;
    for (uint64_t K = 0; K != V->N; ++K) {
      Expected<Head> KH = readHead(Pos);
      if (!KH)
        return KH.takeError();
      if (KH->K == Head::Map && K <= std::numeric_limits<unsigned>::max() &&
          Wanted.contains(unsigned(K))) {
        if (Error E = scanKernel(Pos, unsigned(K), *KH))
          return E;
      } else if (Error E = skip(Pos, 2)) {
        return E;
      }
    }
  }
  return Error::success();
}

//===-- validation helpers ------------------------------------------------===//

/// msgpack::Document keeps maps in a std::map ordered by DocNode's
/// operator<, which has no order for two arrays or two maps: it reaches
/// llvm_unreachable, undefined behaviour in a release LLVM (a wild jump found
/// by hotswap-fuzz). Rejects every array or map used as a map key before the
/// document is read. Truncation is left to readFromBlob to report.
Error checkMapKeys(StringRef Blob) {
  msgpack::Reader R(Blob);
  struct Level {
    uint64_t Left; // objects still to read (two per map entry)
    bool IsMap;
  };
  SmallVector<Level, 8> Stack;
  do {
    msgpack::Object O;
    Expected<bool> Got = R.read(O);
    if (!Got)
      return Got.takeError();
    if (!*Got)
      return Error::success();
    bool IsKey = !Stack.empty() && Stack.back().IsMap &&
                 Stack.back().Left % 2 == 0;
    if (!Stack.empty())
      --Stack.back().Left;
    bool Nested = O.Kind == msgpack::Type::Map || O.Kind == msgpack::Type::Array;
    if (IsKey && Nested)
      return createStringError("a map key is an array or a map");
    if (Nested)
      Stack.push_back({O.Kind == msgpack::Type::Map ? 2 * uint64_t(O.Length)
                                                    : uint64_t(O.Length),
                       O.Kind == msgpack::Type::Map});
    while (!Stack.empty() && Stack.back().Left == 0)
      Stack.pop_back();
  } while (!Stack.empty());
  return Error::success();
}

std::optional<uint64_t> asUnsigned(const msgpack::DocNode &N) {
  if (N.getKind() == msgpack::Type::UInt)
    return N.getUInt();
  if (N.getKind() == msgpack::Type::Int && N.getInt() >= 0)
    return uint64_t(N.getInt());
  return std::nullopt;
}

/// Structural equality of two nodes from (possibly) different documents.
/// DocNode's operator== only works within one document.
bool sameNode(msgpack::DocNode &A, msgpack::DocNode &B) {
  if (A.getKind() != B.getKind())
    return false;
  switch (A.getKind()) {
  case msgpack::Type::Int: return A.getInt() == B.getInt();
  case msgpack::Type::UInt: return A.getUInt() == B.getUInt();
  case msgpack::Type::Nil:
  case msgpack::Type::Empty: return true;
  case msgpack::Type::Extension:
    return false; // Document cannot read extension objects
  case msgpack::Type::Boolean: return A.getBool() == B.getBool();
  case msgpack::Type::Float:
    return bit_cast<uint64_t>(A.getFloat()) == bit_cast<uint64_t>(B.getFloat());
  case msgpack::Type::String: return A.getString() == B.getString();
  case msgpack::Type::Binary: return A.getBinary() == B.getBinary();
  case msgpack::Type::Array: {
    auto &X = A.getArray(), &Y = B.getArray();
    if (X.size() != Y.size())
      return false;
    for (size_t I = 0, E = X.size(); I != E; ++I)
      if (!sameNode(X[I], Y[I]))
        return false;
    return true;
  }
  case msgpack::Type::Map: {
    auto &X = A.getMap(), &Y = B.getMap();
    if (X.size() != Y.size())
      return false;
    // Both maps are sorted by the same key order.
    for (auto I = X.begin(), J = Y.begin(); I != X.end(); ++I, ++J) {
      msgpack::DocNode KA = I->first, KB = J->first;
      if (!sameNode(KA, KB) || !sameNode(I->second, J->second))
        return false;
    }
    return true;
  }
  }
  return false;
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

CodeObjectMetadata::CodeObjectMetadata() = default;
CodeObjectMetadata::CodeObjectMetadata(CodeObjectMetadata &&) = default;
CodeObjectMetadata &
CodeObjectMetadata::operator=(CodeObjectMetadata &&) = default;
CodeObjectMetadata::~CodeObjectMetadata() = default;

Expected<CodeObjectMetadata>
CodeObjectMetadata::parse(ArrayRef<uint8_t> NoteSectionBytes) {
  CodeObjectMetadata MD;
  MD.Section.assign(NoteSectionBytes.begin(), NoteSectionBytes.end());
  if (Error E = MD.load())
    return std::move(E);
  return std::move(MD);
}

Error CodeObjectMetadata::load() {
  Expected<std::vector<NoteRef>> Notes = parseNotes(Section);
  if (!Notes)
    return Notes.takeError();
  const NoteRef *Found = nullptr;
  for (const NoteRef &N : *Notes) {
    if (N.Name != AMDGPUNoteOwner || N.Type != NT_AMDGPU_METADATA)
      continue;
    if (Found)
      return mdError("more than one NT_AMDGPU_METADATA note (at offsets " +
                     hex(Found->Offset) + " and " + hex(N.Offset) + ")");
    Found = &N;
  }
  if (!Found)
    return Error::success();

  HasNote = true;
  NoteOffset = Found->Offset;
  DescOffset = Found->DescOffset;
  DescSize = Found->Desc.size();
  NameSize = Found->NameSize;

  Doc = std::make_unique<msgpack::Document>();
  StringRef Blob(reinterpret_cast<const char *>(Found->Desc.data()),
                 Found->Desc.size());
  // Reader errors (bad bytes, truncation) read as the generic message below;
  // only the structural problem gets its own words.
  if (Error E = checkMapKeys(Blob)) {
    std::string Msg = toString(std::move(E));
    return mdError("note at offset " + hex(NoteOffset) +
                   ": malformed msgpack payload" +
                   (Msg == "a map key is an array or a map" ? ": " + Msg
                                                             : std::string()));
  }
  if (Blob.empty() || !Doc->readFromBlob(Blob, /*Multi=*/false))
    return mdError("note at offset " + hex(NoteOffset) +
                   ": malformed msgpack payload");

  msgpack::DocNode &Root = Doc->getRoot();
  if (!Root.isMap())
    return mdError("root is not a map");
  msgpack::MapDocNode RootMap = Root.getMap();

  auto VersionIt = RootMap.find("amdhsa.version");
  if (VersionIt != RootMap.end()) {
    msgpack::DocNode &V = VersionIt->second;
    std::optional<uint64_t> Major, Minor;
    if (V.isArray() && V.getArray().size() >= 2) {
      Major = asUnsigned(V.getArray()[0]);
      Minor = asUnsigned(V.getArray()[1]);
    }
    if (!Major || !Minor)
      return mdError("'amdhsa.version' is not an array of two unsigned "
                     "integers");
    Version = MetadataVersion{*Major, *Minor};
  }

  auto TargetIt = RootMap.find("amdhsa.target");
  if (TargetIt != RootMap.end()) {
    if (!TargetIt->second.isString())
      return mdError("'amdhsa.target' is not a string");
    Target = TargetIt->second.getString().str();
  }

  auto KernelsIt = RootMap.find("amdhsa.kernels");
  if (KernelsIt == RootMap.end())
    return Error::success();
  if (!KernelsIt->second.isArray())
    return mdError("'amdhsa.kernels' is not an array");
  msgpack::ArrayDocNode KernelArray = KernelsIt->second.getArray();
  if (KernelArray.size() > std::numeric_limits<unsigned>::max())
    return mdError("too many kernels");
  Kernels.reserve(KernelArray.size());
  for (size_t I = 0, E = KernelArray.size(); I != E; ++I) {
    const std::string Where = "kernel " + std::to_string(I);
    msgpack::DocNode &KN = KernelArray[I];
    if (!KN.isMap())
      return mdError(Where + " is not a map");
    msgpack::MapDocNode KMap = KN.getMap();
    KernelMD K;
    K.Index = unsigned(I);
    for (StringRef Key : {".name", ".symbol"}) {
      auto It = KMap.find(Key);
      if (It == KMap.end())
        return mdError(Where + ": missing '" + Key + "'");
      if (!It->second.isString())
        return mdError(Where + ": '" + Key + "' is not a string");
      (Key == ".name" ? K.Name : K.Symbol) = It->second.getString().str();
    }
    for (unsigned F = 0; F != NumKernelFields; ++F) {
      auto It = KMap.find(FieldKeys[F]);
      if (It == KMap.end())
        continue;
      if (isBoolField(F)) {
        if (It->second.getKind() != msgpack::Type::Boolean)
          return mdError(Where + ": '" + FieldKeys[F] + "' is not a boolean");
        K.UsesDynamicStack = It->second.getBool();
        continue;
      }
      std::optional<uint64_t> V = asUnsigned(It->second);
      if (!V)
        return mdError(Where + ": '" + FieldKeys[F] +
                       "' is not an unsigned integer");
      K.*IntMembers[F] = *V;
    }
    auto [It, Inserted] = BySymbol.try_emplace(K.Symbol, K.Index);
    if (!Inserted)
      return mdError("kernels " + Twine(It->second) + " and " + Twine(I) +
                     " have the same symbol '" + K.Symbol + "'");
    Kernels.push_back(std::move(K));
  }
  return Error::success();
}

const KernelMD *CodeObjectMetadata::findBySymbol(StringRef Symbol) const {
  auto It = BySymbol.find(Symbol);
  return It == BySymbol.end() ? nullptr : &Kernels[It->second];
}

Error CodeObjectMetadata::setField(StringRef Symbol, KernelField F,
                                   uint64_t Value) {
  if (!HasNote)
    return mdError("no AMDGPU metadata note");
  auto It = BySymbol.find(Symbol);
  if (It == BySymbol.end())
    return mdError("no kernel with symbol '" + Symbol + "'");
  KernelMD &K = Kernels[It->second];
  if (F == KernelField::UsesDynamicStack) {
    if (Value > 1)
      return mdError("'" + kernelFieldKey(F) + "' must be 0 or 1, not " +
                     Twine(Value));
    if (K.UsesDynamicStack && *K.UsesDynamicStack == (Value != 0))
      return Error::success();
    K.UsesDynamicStack = Value != 0;
  } else {
    std::optional<uint64_t> &Slot = K.*IntMembers[unsigned(F)];
    if (Slot && *Slot == Value)
      return Error::success();
    Slot = Value;
  }
  Pending[{K.Index, unsigned(F)}] = Value;
  return Error::success();
}

namespace {
/// Replace Old bytes at Offset (in the original blob) by New.
struct Splice {
  uint64_t Offset = 0;
  uint64_t OldLen = 0;
  std::vector<uint8_t> New;
};

void encodeFixStr(StringRef S, std::vector<uint8_t> &Out) {
  assert(S.size() <= 31 && "keys are short");
  Out.push_back(uint8_t(0xa0 | S.size()));
  Out.insert(Out.end(), S.bytes_begin(), S.bytes_end());
}

/// The smallest map header at least \p MinSize bytes long that holds \p N.
void encodeMapHeader(uint64_t N, unsigned MinSize, std::vector<uint8_t> &Out) {
  if (MinSize <= 1 && N <= 15) {
    Out.push_back(uint8_t(0x80 | N));
  } else if (MinSize <= 3 && N <= 0xffff) {
    Out.push_back(0xde);
    Out.push_back(uint8_t(N >> 8));
    Out.push_back(uint8_t(N));
  } else {
    Out.push_back(0xdf);
    for (int Shift = 24; Shift >= 0; Shift -= 8)
      Out.push_back(uint8_t(N >> Shift));
  }
}
} // namespace

Expected<NoteRewrite> CodeObjectMetadata::rewrite() const {
  NoteRewrite R;
  if (Pending.empty()) {
    R.Bytes = Section;
    return std::move(R);
  }
  assert(HasNote && "pending changes without a note");

  ArrayRef<uint8_t> Blob(Section.data() + DescOffset, DescSize);
  DenseSet<unsigned> Wanted;
  for (const auto &P : Pending)
    Wanted.insert(P.first.first);
  Scanner S(Blob, Wanted);
  if (Error E = S.scan())
    return std::move(E);

  // 1. One splice per changed value (or inserted key), growing only where a
  //    value does not fit its current width.
  std::vector<Splice> Splices;
  DenseSet<uint64_t> Changed; // offsets of rewritten integers
  uint64_t Growth = 0;
  for (auto I = Pending.begin(), E = Pending.end(); I != E;) {
    const unsigned KI = I->first.first;
    auto KSIt = S.Kernels.find(KI);
    if (KSIt == S.Kernels.end())
      return mdError("internal error: kernel " + Twine(KI) +
                     " not found by the scanner");
    const KernelScan &KS = KSIt->second;
    std::vector<uint8_t> Inserted;
    uint64_t NumInserted = 0;
    for (; I != E && I->first.first == KI; ++I) {
      const unsigned F = I->first.second;
      const uint64_t V = I->second;
      const FieldSlot &FS = KS.Fields[F];
      if (FS.K == FieldSlot::Absent) {
        encodeFixStr(FieldKeys[F], Inserted);
        if (isBoolField(F))
          Inserted.push_back(V ? 0xc3 : 0xc2);
        else
          encodeInt(IntFamily::Unsigned, V,
                    minimalSize(IntFamily::Unsigned, V), Inserted);
        ++NumInserted;
        continue;
      }
      Splice Sp;
      Sp.Offset = FS.At.Offset;
      Sp.OldLen = FS.At.Size;
      if (isBoolField(F) && FS.K == FieldSlot::Bool) {
        Sp.New.push_back(V ? 0xc3 : 0xc2);
      } else if (!isBoolField(F) && FS.K == FieldSlot::Int) {
        IntFamily Fam = FS.At.Fam;
        if (!minimalSize(Fam, V))
          Fam = IntFamily::Unsigned;
        const unsigned Size = fitsIn(Fam, V, FS.At.Size)
                                  ? FS.At.Size
                                  : std::max(FS.At.Size, minimalSize(Fam, V));
        encodeInt(Fam, V, Size, Sp.New);
        Growth += Size - FS.At.Size;
        Changed.insert(FS.At.Offset);
      } else {
        return mdError("internal error: kernel " + Twine(KI) + ": '" +
                       FieldKeys[F] + "' has an unexpected type");
      }
      Splices.push_back(std::move(Sp));
    }
    if (NumInserted) {
      Splice Header;
      Header.Offset = KS.HeaderOffset;
      Header.OldLen = KS.HeaderSize;
      encodeMapHeader(KS.Count + NumInserted, KS.HeaderSize, Header.New);
      Growth += Header.New.size() - KS.HeaderSize + Inserted.size();
      Splices.push_back(std::move(Header));
      Splice Tail;
      Tail.Offset = KS.End;
      Tail.New = std::move(Inserted);
      Splices.push_back(std::move(Tail));
    }
  }

  // 2./3. Decide how the growth is absorbed.
  const uint64_t PaddedDesc = alignTo(uint64_t(DescSize), NoteAlign);
  const uint64_t PadSlack = PaddedDesc - DescSize;
  std::vector<Splice> Compactions;
  if (Growth == 0) {
    R.How = NoteRewrite::Method::InPlace;
  } else if (Growth <= PadSlack) {
    R.How = NoteRewrite::Method::PaddingSlack;
  } else {
    // Shrink over-wide integers in document order. For each one pick the
    // smallest saving that covers what is still needed; the encoding sizes
    // (1, 2, 3, 5, 9) differ by at most 4, so the overshoot is at most 3
    // bytes and fits the descriptor's alignment padding.
    uint64_t Need = Growth - PadSlack;
    for (const IntSlot &C : S.OverWide) {
      if (Need == 0)
        break;
      if (Changed.contains(C.Offset))
        continue;
      unsigned Best = C.Size; // size giving the chosen saving
      for (unsigned Size : IntSizes) {
        if (Size >= C.Size || !fitsIn(C.Fam, C.Value, Size))
          continue;
        // Sizes ascend: remember the largest size still covering Need, or
        // the smallest size (maximum saving) if none covers it.
        if (C.Size - Size >= Need || Best == C.Size)
          Best = Size;
      }
      if (Best == C.Size)
        continue;
      Splice Sp;
      Sp.Offset = C.Offset;
      Sp.OldLen = C.Size;
      encodeInt(C.Fam, C.Value, Best, Sp.New);
      const uint64_t Saving = C.Size - Best;
      Need = Saving >= Need ? 0 : Need - Saving;
      Compactions.push_back(std::move(Sp));
    }
    if (Need == 0) {
      R.How = NoteRewrite::Method::Compacted;
      for (Splice &Sp : Compactions)
        Splices.push_back(std::move(Sp));
    } else {
      R.How = NoteRewrite::Method::Relocate;
      R.SameSize = false;
    }
  }

  // Apply the splices to a copy of the blob.
  llvm::sort(Splices, [](const Splice &A, const Splice &B) {
    return std::make_pair(A.Offset, A.OldLen) <
           std::make_pair(B.Offset, B.OldLen);
  });
  std::vector<uint8_t> NewDesc;
  NewDesc.reserve(Blob.size() + Growth);
  uint64_t Pos = 0;
  for (const Splice &Sp : Splices) {
    if (Sp.Offset < Pos || Sp.OldLen > Blob.size() - Sp.Offset)
      return mdError("internal error: overlapping edits at offset " +
                     hex(Sp.Offset));
    NewDesc.insert(NewDesc.end(), Blob.begin() + Pos, Blob.begin() + Sp.Offset);
    NewDesc.insert(NewDesc.end(), Sp.New.begin(), Sp.New.end());
    Pos = Sp.Offset + Sp.OldLen;
  }
  NewDesc.insert(NewDesc.end(), Blob.begin() + Pos, Blob.end());
  if (NewDesc.size() > std::numeric_limits<uint32_t>::max())
    return mdError("metadata descriptor too large");

  // Reassemble the section: everything outside this note's descriptor and
  // its padding is copied; only n_descsz changes in the header.
  const uint64_t OldDescEnd = DescOffset + PaddedDesc;
  const uint64_t NewPadded = alignTo(uint64_t(NewDesc.size()), NoteAlign);
  std::vector<uint8_t> &Out = R.Bytes;
  Out.reserve(Section.size() - PaddedDesc + NewPadded);
  Out.assign(Section.begin(), Section.begin() + DescOffset);
  support::endian::write32le(Out.data() + NoteOffset + 4,
                             uint32_t(NewDesc.size()));
  Out.insert(Out.end(), NewDesc.begin(), NewDesc.end());
  if (NewDesc.size() == DescSize)
    Out.insert(Out.end(), Section.begin() + DescOffset + DescSize,
               Section.begin() + OldDescEnd);
  else
    Out.resize(Out.size() + (NewPadded - NewDesc.size()), 0);
  Out.insert(Out.end(), Section.begin() + OldDescEnd, Section.end());

  if (R.SameSize && Out.size() != Section.size())
    return mdError("internal error: same-size rewrite changed the note "
                   "section size from " +
                   hex(Section.size()) + " to " + hex(Out.size()));

  // Self-check: the result must parse, carry every new value, and be equal
  // to the original everywhere else.
  auto CheckFailed = [](const Twine &Msg) {
    return mdError("internal error: rewritten note fails self-check: " + Msg);
  };
  Expected<CodeObjectMetadata> NewMD = parse(Out);
  if (!NewMD)
    return CheckFailed(toString(NewMD.takeError()));
  if (NewMD->Kernels.size() != Kernels.size() ||
      NewMD->NoteOffset != NoteOffset)
    return CheckFailed("kernel list or note position differs");
  for (size_t I = 0, E = Kernels.size(); I != E; ++I) {
    const KernelMD &A = Kernels[I], &B = NewMD->Kernels[I];
    if (A.Name != B.Name || A.Symbol != B.Symbol)
      return CheckFailed("kernel " + Twine(I) + " changed its name");
    for (unsigned F = 0; F != NumKernelFields; ++F)
      if (A.get(KernelField(F)) != B.get(KernelField(F)))
        return CheckFailed("kernel " + Twine(I) + ": '" + FieldKeys[F] +
                           "' does not have the expected value");
  }
  // Structural comparison of everything but the changed keys.
  msgpack::MapDocNode OldRoot = Doc->getRoot().getMap();
  msgpack::MapDocNode NewRoot = NewMD->Doc->getRoot().getMap();
  if (OldRoot.size() != NewRoot.size())
    return CheckFailed("top-level keys differ");
  for (auto &[Key, OldValue] : OldRoot) {
    if (!Key.isString())
      continue; // compared through the map sizes and the string keys
    auto NewIt = NewRoot.find(Key.getString());
    if (NewIt == NewRoot.end())
      return CheckFailed("'" + Key.getString() + "' is missing");
    if (Key.getString() != "amdhsa.kernels") {
      if (!sameNode(OldValue, NewIt->second))
        return CheckFailed("'" + Key.getString() + "' differs");
      continue;
    }
    auto &OldK = OldValue.getArray(), &NewK = NewIt->second.getArray();
    for (size_t I = 0, E = OldK.size(); I != E; ++I) {
      msgpack::MapDocNode OM = OldK[I].getMap(), NM = NewK[I].getMap();
      size_t Added = 0;
      for (unsigned F = 0; F != NumKernelFields; ++F)
        if (Pending.count({unsigned(I), F}) &&
            OM.find(FieldKeys[F]) == OM.end())
          ++Added;
      if (NM.size() != OM.size() + Added)
        return CheckFailed("kernel " + Twine(I) + " has unexpected keys");
      for (auto &[KKey, KVal] : OM) {
        if (!KKey.isString())
          continue; // covered by the size comparison
        std::optional<unsigned> F = fieldForKey(KKey.getString());
        if (F && Pending.count({unsigned(I), *F}))
          continue;
        auto NIt = NM.find(KKey.getString());
        if (NIt == NM.end() || !sameNode(KVal, NIt->second))
          return CheckFailed("kernel " + Twine(I) + ": '" + KKey.getString() +
                             "' differs");
      }
    }
  }
  return std::move(R);
}

Expected<std::string> CodeObjectMetadata::toYAML() const {
  if (!HasNote)
    return mdError("no AMDGPU metadata note");
  std::string S;
  raw_string_ostream OS(S);
  Doc->toYAML(OS);
  return S;
}

} // namespace amdgpu
} // namespace hotswap
