//===- lib/AMDGPU/Metadata.cpp - AMDGPU metadata note ---------------------===//
//
// Reading streams the blob once through llvm::msgpack::Reader (no Document,
// whose per-map std::map dominated the run time on large code objects).
// Writing does not use a Document either: Document re-serializes with sorted keys and minimal encodings, which changes bytes
// nobody asked to change. Instead a small msgpack scanner finds the exact
// byte range of every value that may change, and rewrite() splices new
// encodings into a copy of the original blob (see Metadata.h for the order in
// which same-size encodings are tried).
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/Support/Format.h"
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
#include <cmath>
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
static_assert(NumKernelFields <= 16, "a field mask fits 16 bits");


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
               SmallVectorImpl<uint8_t> &Out) {
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
  bool Found = false;
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
  Scanner(ArrayRef<uint8_t> Blob, ArrayRef<uint16_t> Wanted)
      : Kernels(Wanted.size()), B(Blob), Wanted(Wanted) {}

  Error scan();

  /// Indexed by kernel index; Found for the wanted kernels.
  std::vector<KernelScan> Kernels;
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
  /// readHead for the one-byte heads (fixint, fixstr, fixmap, fixarray,
  /// nil, bool): true and \p H set, false for any other head.
  bool readShortHead(uint64_t Pos, Head &H) const {
    if (Pos >= B.size())
      return false;
    const uint8_t T = B[Pos];
    H.HeadSize = 1;
    if (T <= 0x7f) {
      H.K = Head::UInt;
      H.Value = T;
      H.N = 0;
      return true;
    }
    if ((T & 0xe0) == 0xa0) {
      H.K = Head::Str;
      H.N = T & 0x1f;
      H.Value = 0;
      return true;
    }
    return false;
  }
  Error skip(uint64_t &Pos, unsigned Depth);
  Expected<std::optional<StringRef>> readKey(uint64_t &Pos, unsigned Depth);
  Error scanKernel(uint64_t &Pos, unsigned Index, const Head &H);

  ArrayRef<uint8_t> B;
  ArrayRef<uint16_t> Wanted; // kernel index -> nonzero if wanted
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
  Head Short;
  std::optional<Expected<Head>> Long;
  if (!readShortHead(Pos, Short)) {
    Long.emplace(readHead(Pos));
    if (!*Long)
      return Long->takeError();
  }
  const Head &H = Long ? **Long : Short;
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
  KS.Found = true;
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
          K < Wanted.size() && Wanted[K]) {
        if (Error E = scanKernel(Pos, unsigned(K), *KH))
          return E;
      } else if (Error E = skip(Pos, 2)) {
        return E;
      }
    }
  }
  return Error::success();
}

//===-- streaming msgpack reading -----------------------------------------===//
//
// The note is read with llvm::msgpack::Reader in one pass, without building a
// msgpack::Document. The pass accepts exactly the blobs Document::readFromBlob
// (single top-level object) accepts: every token must be readable, no
// container may end early, extension objects are rejected, and no map may
// hold two equal keys (keys are equal when they have the same msgpack type
// and value, the order of DocNode's operator<). Bytes after the top-level
// object are ignored. One deliberate difference: a map key that is itself a
// map or an array is rejected; Document does not descend into such a key
// (its elements are read as the map's next entries) and crashes comparing
// two of them (its key order has no case for containers).

using msgpack::Type;

bool isContainer(const msgpack::Object &O) {
  return O.Kind == Type::Map || O.Kind == Type::Array;
}

/// A map key, ordered like msgpack::DocNode.
struct KeyRec {
  Type Kind = Type::Nil;
  union {
    int64_t Int;
    uint64_t UInt;
    bool Bool;
    double Float;
  };
  StringRef Raw;

  KeyRec() : UInt(0) {}

  friend bool operator<(const KeyRec &A, const KeyRec &B) {
    if (A.Kind != B.Kind)
      return unsigned(A.Kind) < unsigned(B.Kind);
    switch (A.Kind) {
    case Type::Int: return A.Int < B.Int;
    case Type::UInt: return A.UInt < B.UInt;
    case Type::Boolean: return A.Bool < B.Bool;
    case Type::Float: return A.Float < B.Float;
    case Type::String:
    case Type::Binary: return A.Raw < B.Raw;
    default: return false; // Nil: all equal
    }
  }
};

/// The keys of the maps being read, innermost last. LLVM writes keys in
/// ascending order, so a map whose keys ascend strictly is checked on the fly
/// by one comparison per key; any other map is sorted when it ends.
class MapKeys {
public:
  struct Scope {
    size_t Begin = 0;
    bool Ascending = true;
  };

  Scope open() const { return {Keys.size(), true}; }

  /// Records the key \p O of the map \p S. False if it cannot be a key.
  bool add(Scope &S, const msgpack::Object &O) {
    // Fast path: a string key after a smaller string key.
    if (LLVM_LIKELY(O.Kind == Type::String) && Keys.size() != S.Begin &&
        Keys.back().Kind == Type::String) {
      if (S.Ascending && !(Keys.back().Raw < O.Raw))
        S.Ascending = false;
      KeyRec &K = Keys.emplace_back();
      K.Kind = Type::String;
      K.Raw = O.Raw;
      return true;
    }
    KeyRec K;
    K.Kind = O.Kind;
    switch (O.Kind) {
    case Type::Int: K.Int = O.Int; break;
    case Type::UInt: K.UInt = O.UInt; break;
    case Type::Boolean: K.Bool = O.Bool; break;
    case Type::Float: K.Float = O.Float; break;
    case Type::String:
    case Type::Binary: K.Raw = O.Raw; break;
    case Type::Nil: break;
    default: return false; // a container or an extension
    }
    if (S.Ascending && Keys.size() != S.Begin && !(Keys.back() < K))
      S.Ascending = false;
    Keys.push_back(K);
    return true;
  }

  /// Ends the map \p S. False if two of its keys are equal.
  bool close(const Scope &S) {
    bool Unique = S.Ascending || unique(S.Begin);
    Keys.resize(S.Begin);
    return Unique;
  }

private:
  bool unique(size_t Begin) {
    auto First = Keys.begin() + Begin;
    // DocNode orders floats with '<', under which NaN equals every float:
    // a NaN key and any other float key collide. Without NaN (or with a
    // single float key) '<' is a strict weak order and sorting works.
    unsigned Floats = 0;
    bool NaN = false;
    for (auto I = First; I != Keys.end(); ++I)
      if (I->Kind == Type::Float) {
        ++Floats;
        NaN |= std::isnan(I->Float);
      }
    if (NaN && Floats > 1)
      return false;
    std::sort(First, Keys.end());
    return std::adjacent_find(First, Keys.end(),
                              [](const KeyRec &A, const KeyRec &B) {
                                return !(A < B);
                              }) == Keys.end();
  }

  std::vector<KeyRec> Keys;
};

/// Two tokens are the same msgpack object head: same type and value, or for
/// a container the same type and element count.
bool sameToken(const msgpack::Object &A, const msgpack::Object &B) {
  if (A.Kind != B.Kind)
    return false;
  switch (A.Kind) {
  case Type::Int: return A.Int == B.Int;
  case Type::UInt: return A.UInt == B.UInt;
  case Type::Boolean: return A.Bool == B.Bool;
  case Type::Float:
    return bit_cast<uint64_t>(A.Float) == bit_cast<uint64_t>(B.Float);
  case Type::String:
  case Type::Binary: return A.Raw == B.Raw;
  case Type::Array:
  case Type::Map: return A.Length == B.Length;
  case Type::Extension:
    return A.Extension.Type == B.Extension.Type &&
           A.Extension.Bytes == B.Extension.Bytes;
  default: return true; // Nil
  }
}

/// Per kernel index, the mask of fields with a pending change.
using PendingMasks = ArrayRef<uint16_t>;

/// How a token of the blob being read relates to the reference blob read in
/// lockstep (see TokenStream).
enum class Ref : uint8_t {
  Same,    // the reference has the same token
  Changed, // the reference has a scalar here, possibly another one
  Header,  // the reference has a container of the same type here
  Absent,  // the reference has no token here
};

/// A msgpack::Reader that tracks map keys. Every read failure (a malformed
/// token, the end of the data, an extension object, a duplicate or
/// container key) makes it fail for good.
///
/// With a reference blob, every token read is matched with the next token of
/// the reference (unless it is Absent there). The first mismatch is recorded
/// and ends the matching, since the two streams may be out of step after it;
/// reading goes on and still validates.
class TokenStream {
public:
  explicit TokenStream(StringRef Blob, std::optional<StringRef> Reference)
      : R(Blob) {
    if (Reference)
      RefR.emplace(*Reference);
  }

  /// Reads the next token. False on failure.
  bool next(msgpack::Object &O, Ref How = Ref::Same) {
    if (LLVM_UNLIKELY(!read(R, O) || O.Kind == Type::Extension))
      return false;
    if (LLVM_UNLIKELY(RefR.has_value()) && How != Ref::Absent)
      match(O, How);
    return true;
  }

  /// Reads a key of the map \p S.
  bool nextKey(MapKeys::Scope &S, msgpack::Object &O, Ref How = Ref::Same) {
    if (!next(O, How))
      return false;
    // While a key matches the reference's key, it is unique if that one is:
    // the reference is a validated blob, and an Absent key is checked by the
    // caller to be one the reference's map lacks. (If matching stops, the
    // result is a mismatch anyway.)
    if (LLVM_UNLIKELY(isContainer(O))) {
      ContainerKey = true;
      return false;
    }
    if (RefR && How == Ref::Same)
      return true;
    return Keys.add(S, O);
  }

  /// Whether reading failed on a map key that is an array or a map.
  bool sawContainerKey() const { return ContainerKey; }

  MapKeys::Scope openMap() const { return Keys.open(); }
  bool closeMap(const MapKeys::Scope &S) { return Keys.close(S); }

  /// Reads the elements of \p O (just read) when it is a container. With
  /// \p How Absent, the reference is not read.
  bool skip(const msgpack::Object &O, Ref How = Ref::Same) {
    return !isContainer(O) || skipElements(O, How);
  }

  /// Whether tokens are still being matched with the reference.
  bool matching() const { return RefR.has_value(); }
  /// The element count of the reference's last container (Ref::Header).
  size_t refLength() const { return RefLength; }
  /// Records a mismatch found by the caller.
  void mismatch(const Twine &Msg) {
    if (Mismatch.empty())
      Mismatch = ("msgpack object " + Twine(Token) + ": " + Msg).str();
    RefR.reset();
  }
  /// The first mismatch, empty if none.
  StringRef firstMismatch() const { return Mismatch; }

private:
  bool ContainerKey = false;
  LLVM_ATTRIBUTE_NOINLINE bool skipElements(const msgpack::Object &O,
                                            Ref How) {
    if (How != Ref::Absent)
      How = Ref::Same;
    struct Level {
      uint64_t Left; // tokens left, keys included
      bool IsMap;
      MapKeys::Scope Keys;
    };
    SmallVector<Level, 8> Stack;
    auto Push = [&](const msgpack::Object &C) {
      if (C.Kind == Type::Map)
        Stack.push_back({2 * uint64_t(C.Length), true, Keys.open()});
      else
        Stack.push_back({uint64_t(C.Length), false, {}});
    };
    Push(O);
    while (!Stack.empty()) {
      Level &L = Stack.back();
      if (L.Left == 0) {
        if (L.IsMap && !Keys.close(L.Keys))
          return false;
        Stack.pop_back();
        continue;
      }
      msgpack::Object E;
      if (L.IsMap && L.Left % 2 == 0) {
        if (!nextKey(L.Keys, E, How))
          return false;
        --L.Left;
        continue;
      }
      if (!next(E, How))
        return false;
      --L.Left;
      if (isContainer(E))
        Push(E); // invalidates L
    }
    return true;
  }

  static bool read(msgpack::Reader &Rd, msgpack::Object &O) {
    Expected<bool> Got = Rd.read(O);
    if (LLVM_UNLIKELY(!Got)) {
      consumeError(Got.takeError());
      return false;
    }
    return *Got;
  }

  LLVM_ATTRIBUTE_NOINLINE void match(const msgpack::Object &O, Ref How) {
    ++Token;
    msgpack::Object A;
    if (!read(*RefR, A))
      return mismatch("the reference ends or is malformed");
    switch (How) {
    case Ref::Same:
      if (!sameToken(A, O))
        mismatch("differs from the reference");
      return;
    case Ref::Changed:
      if (isContainer(A) || A.Kind == Type::Extension)
        mismatch("the reference has no scalar here");
      return;
    case Ref::Header:
      if (A.Kind != O.Kind || (O.Kind != Type::Map && !sameToken(A, O)))
        mismatch("differs from the reference");
      RefLength = A.Length;
      return;
    case Ref::Absent:
      return;
    }
  }

  msgpack::Reader R;
  std::optional<msgpack::Reader> RefR;
  MapKeys Keys;
  uint64_t Token = 0;
  size_t RefLength = 0;
  std::string Mismatch;
};

/// A scalar value captured while reading; Kind is Empty when absent.
struct Captured {
  Type Kind = Type::Empty;
  uint64_t UInt = 0; // UInt, or Int as two's complement
  bool Bool = false;
  StringRef Raw;

  void set(const msgpack::Object &O) {
    Kind = O.Kind;
    if (O.Kind == Type::UInt)
      UInt = O.UInt;
    else if (O.Kind == Type::Int)
      UInt = uint64_t(O.Int);
    else if (O.Kind == Type::Boolean)
      Bool = O.Bool;
    else if (O.Kind == Type::String)
      Raw = O.Raw;
  }
  std::optional<uint64_t> asUnsigned() const {
    if (Kind == Type::UInt || (Kind == Type::Int && int64_t(UInt) >= 0))
      return UInt;
    return std::nullopt;
  }
};

/// The validated fields of one kernel; strings point into the blob.
struct KernelView {
  StringRef Name, Symbol;
  std::array<std::optional<uint64_t>, NumKernelFields> Fields;
};

/// Where the keys of a kernel map that this layer reads are captured.
enum : unsigned { NameSlot = NumKernelFields, SymbolSlot, NumSlots };

std::optional<unsigned> slotForKey(StringRef Key) {
  if (Key.size() < 5 || Key[0] != '.')
    return std::nullopt;
  if (Key == ".name")
    return NameSlot;
  if (Key == ".symbol")
    return SymbolSlot;
  return fieldForKey(Key);
}

/// Validates a kernel's captured keys, in the order (and with the messages)
/// of the original Document-based reader.
Expected<KernelView> validateKernel(size_t I,
                                    const std::array<Captured, NumSlots> &C) {
  KernelView K;
  for (unsigned S : {unsigned(NameSlot), unsigned(SymbolSlot)}) {
    StringRef Key = S == NameSlot ? ".name" : ".symbol";
    if (C[S].Kind == Type::Empty)
      return mdError("kernel " + Twine(I) + ": missing '" + Key + "'");
    if (C[S].Kind != Type::String)
      return mdError("kernel " + Twine(I) + ": '" + Key +
                     "' is not a string");
    (S == NameSlot ? K.Name : K.Symbol) = C[S].Raw;
  }
  for (unsigned F = 0; F != NumKernelFields; ++F) {
    const Captured &V = C[F];
    if (V.Kind == Type::Empty)
      continue;
    if (isBoolField(F)) {
      if (V.Kind != Type::Boolean)
        return mdError("kernel " + Twine(I) + ": '" + FieldKeys[F] +
                       "' is not a boolean");
      K.Fields[F] = V.Bool;
      continue;
    }
    K.Fields[F] = V.asUnsigned();
    if (!K.Fields[F])
      return mdError("kernel " + Twine(I) + ": '" + FieldKeys[F] +
                     "' is not an unsigned integer");
  }
  return K;
}

/// What one pass over a metadata blob yields.
struct BlobSummary {
  std::optional<MetadataVersion> Version;
  StringRef Target;
  /// Lockstep only: the first difference from the original, empty if none.
  std::string Mismatch;
};

/// For reading a rewritten blob in lockstep with the blob it was made from:
/// the token streams must be identical but for the values of the Pending
/// fields (any scalar before, any value after) and the Pending fields a
/// kernel map did not have, which follow its original pairs. Integer
/// encoding widths are not compared (Compacted re-encodes integers).
struct Lockstep {
  StringRef Original;
  PendingMasks Pending;
};

/// Reads a metadata blob in one pass and validates it. Each valid kernel is
/// handed to \p OnKernel in amdhsa.kernels order. The first validation
/// error (in the order version, target, kernels, then kernel by kernel) or
/// the first error returned by OnKernel is reported, but only after the
/// whole blob was read: a malformed payload takes precedence.
Expected<BlobSummary>
readBlob(StringRef Blob, uint64_t NoteOffset,
         function_ref<Error(size_t, const KernelView &)> OnKernel,
         const Lockstep *Against = nullptr) {
  TokenStream TS(Blob, Against ? std::optional<StringRef>(Against->Original)
                               : std::nullopt);
  auto Malformed = [&] {
    return mdError("note at offset " + hex(NoteOffset) +
                   ": malformed msgpack payload" +
                   (TS.sawContainerKey() ? ": a map key is an array or a map"
                                         : ""));
  };
  msgpack::Object Root;
  if (Blob.empty() || !TS.next(Root))
    return Malformed();
  if (Root.Kind != Type::Map) {
    if (!TS.skip(Root))
      return Malformed();
    return mdError("root is not a map");
  }

  BlobSummary Sum;
  bool SeenVersion = false, VersionOK = false;
  Type TargetKind = Type::Empty;
  Type KernelsKind = Type::Empty;
  uint64_t NumKernels = 0;
  Error KernelErr = Error::success(); // the first error of a kernel
  bool KernelFailed = false;
  auto FailKernel = [&](Error E) {
    consumeError(std::move(KernelErr));
    KernelErr = std::move(E);
    KernelFailed = true;
  };
  auto Abort = [&] {
    consumeError(std::move(KernelErr));
    return Malformed();
  };

  MapKeys::Scope RootKeys = TS.openMap();
  for (size_t P = 0; P != Root.Length; ++P) {
    msgpack::Object Key, V;
    if (!TS.nextKey(RootKeys, Key) || !TS.next(V))
      return Abort();
    StringRef K = Key.Kind == Type::String ? Key.Raw : StringRef();
    if (Key.Kind == Type::String && K == "amdhsa.version") {
      SeenVersion = true;
      if (V.Kind != Type::Array || V.Length < 2) {
        if (!TS.skip(V))
          return Abort();
        continue;
      }
      std::optional<uint64_t> Parts[2];
      for (size_t E = 0; E != V.Length; ++E) {
        msgpack::Object Elt;
        if (!TS.next(Elt))
          return Abort();
        if (E < 2) {
          Captured C;
          C.set(Elt);
          Parts[E] = C.asUnsigned();
        }
        if (!TS.skip(Elt))
          return Abort();
      }
      VersionOK = Parts[0] && Parts[1];
      if (VersionOK)
        Sum.Version = MetadataVersion{*Parts[0], *Parts[1]};
      continue;
    }
    if (Key.Kind == Type::String && K == "amdhsa.target") {
      TargetKind = V.Kind;
      if (V.Kind == Type::String)
        Sum.Target = V.Raw;
      if (!TS.skip(V))
        return Abort();
      continue;
    }
    if (Key.Kind != Type::String || K != "amdhsa.kernels" ||
        V.Kind != Type::Array) {
      if (Key.Kind == Type::String && K == "amdhsa.kernels")
        KernelsKind = V.Kind;
      if (!TS.skip(V))
        return Abort();
      continue;
    }
    KernelsKind = Type::Array;
    NumKernels = V.Length;
    for (size_t I = 0; I != V.Length; ++I) {
      msgpack::Object KN;
      if (!TS.next(KN, Ref::Header))
        return Abort();
      if (KN.Kind != Type::Map) {
        if (!TS.skip(KN))
          return Abort();
        if (!KernelFailed)
          FailKernel(mdError("kernel " + Twine(I) + " is not a map"));
        continue;
      }
      // Lockstep: the reference's pairs come first; the changed fields it
      // lacks follow (as rewrite() appends them).
      size_t RefPairs = KN.Length;
      unsigned Changed = 0, Present = 0, Added = 0;
      if (TS.matching()) {
        RefPairs = TS.refLength();
        if (RefPairs > KN.Length)
          TS.mismatch("kernel " + Twine(I) + " lost keys");
        if (I < Against->Pending.size())
          Changed = Against->Pending[I];
      }
      std::array<Captured, NumSlots> Slots;
      MapKeys::Scope KKeys = TS.openMap();
      for (size_t E = 0; E != KN.Length; ++E) {
        const Ref KeyRef = E < RefPairs ? Ref::Same : Ref::Absent;
        msgpack::Object KK, KV;
        if (!TS.nextKey(KKeys, KK, KeyRef))
          return Abort();
        std::optional<unsigned> S;
        if (KK.Kind == Type::String && (!KernelFailed || Changed))
          S = slotForKey(KK.Raw);
        Ref ValueRef = KeyRef;
        if (S && *S < NumKernelFields && (Changed & (1u << *S))) {
          if (KeyRef == Ref::Same) {
            Present |= 1u << *S;
            ValueRef = Ref::Changed;
          } else {
            Added |= 1u << *S;
          }
        } else if (KeyRef == Ref::Absent && TS.matching()) {
          TS.mismatch("kernel " + Twine(I) + " has an unexpected added key");
        }
        if (!TS.next(KV, ValueRef))
          return Abort();
        if (S && !KernelFailed)
          Slots[*S].set(KV);
        if (!TS.skip(KV, ValueRef))
          return Abort();
      }
      if (TS.matching() && Added != (Changed & ~Present))
        TS.mismatch("kernel " + Twine(I) + " lacks an added key");
      if (!TS.closeMap(KKeys))
        return Abort();
      if (KernelFailed)
        continue;
      Expected<KernelView> View = validateKernel(I, Slots);
      if (!View) {
        FailKernel(View.takeError());
        continue;
      }
      if (Error E = OnKernel(I, *View))
        FailKernel(std::move(E));
    }
  }
  if (!TS.closeMap(RootKeys))
    return Abort();

  // Validation errors, in the order of the original reader.
  auto Fail = [&](Error E) -> Expected<BlobSummary> {
    consumeError(std::move(KernelErr));
    return std::move(E);
  };
  if (SeenVersion && !VersionOK)
    return Fail(mdError("'amdhsa.version' is not an array of two unsigned "
                        "integers"));
  if (TargetKind != Type::Empty && TargetKind != Type::String)
    return Fail(mdError("'amdhsa.target' is not a string"));
  if (KernelsKind != Type::Empty && KernelsKind != Type::Array)
    return Fail(mdError("'amdhsa.kernels' is not an array"));
  if (NumKernels > std::numeric_limits<unsigned>::max())
    return Fail(mdError("too many kernels"));
  if (KernelFailed)
    return std::move(KernelErr);
  consumeError(std::move(KernelErr));
  Sum.Mismatch = TS.firstMismatch().str();
  return Sum;
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

  StringRef Blob(reinterpret_cast<const char *>(Found->Desc.data()),
                 Found->Desc.size());
  Expected<BlobSummary> Sum =
      readBlob(Blob, NoteOffset, [&](size_t I, const KernelView &V) -> Error {
        auto [It, Inserted] = BySymbol.try_emplace(V.Symbol, unsigned(I));
        if (!Inserted)
          return mdError("kernels " + Twine(It->second) + " and " + Twine(I) +
                         " have the same symbol '" + V.Symbol + "'");
        KernelMD &K = Kernels.emplace_back();
        K.Index = unsigned(I);
        K.Name = V.Name.str();
        K.Symbol = V.Symbol.str();
        for (unsigned F = 0; F != NumKernelFields; ++F) {
          if (!V.Fields[F])
            continue;
          if (isBoolField(F))
            K.UsesDynamicStack = *V.Fields[F] != 0;
          else
            K.*IntMembers[F] = *V.Fields[F];
        }
        return Error::success();
      });
  if (!Sum)
    return Sum.takeError();
  Version = Sum->Version;
  Target = Sum->Target.str();
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
  if (Pending.empty())
    Pending.resize(Kernels.size());
  uint16_t &Mask = Pending[K.Index];
  if (!(Mask & (1u << unsigned(F)))) {
    Mask |= 1u << unsigned(F);
    ++NumPending;
  }
  return Error::success();
}

namespace {
/// Replace Old bytes at Offset (in the original blob) by New.
struct Splice {
  uint64_t Offset = 0;
  uint64_t OldLen = 0;
  SmallVector<uint8_t, 16> New;
};

void encodeFixStr(StringRef S, SmallVectorImpl<uint8_t> &Out) {
  assert(S.size() <= 31 && "keys are short");
  Out.push_back(uint8_t(0xa0 | S.size()));
  Out.insert(Out.end(), S.bytes_begin(), S.bytes_end());
}

/// The smallest map header at least \p MinSize bytes long that holds \p N.
void encodeMapHeader(uint64_t N, unsigned MinSize,
                     SmallVectorImpl<uint8_t> &Out) {
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
  if (!NumPending) {
    R.Bytes = Section;
    return std::move(R);
  }
  assert(HasNote && "pending changes without a note");

  ArrayRef<uint8_t> Blob(Section.data() + DescOffset, DescSize);
  Scanner S(Blob, Pending);
  if (Error E = S.scan())
    return std::move(E);

  // 1. One splice per changed value (or inserted key), growing only where a
  //    value does not fit its current width.
  std::vector<Splice> Splices;
  DenseSet<uint64_t> Changed; // offsets of rewritten integers
  uint64_t Growth = 0;
  for (unsigned KI = 0, NK = unsigned(Pending.size()); KI != NK; ++KI) {
    if (!Pending[KI])
      continue;
    if (!S.Kernels[KI].Found)
      return mdError("internal error: kernel " + Twine(KI) +
                     " not found by the scanner");
    const KernelScan &KS = S.Kernels[KI];
    SmallVector<uint8_t, 32> Inserted;
    uint64_t NumInserted = 0;
    for (unsigned F = 0; F != NumKernelFields; ++F) {
      if (!(Pending[KI] & (1u << F)))
        continue;
      const uint64_t V = *Kernels[KI].get(KernelField(F));
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
  if (Error E = verifyRewrite(Out))
    return std::move(E);
  return std::move(R);
}

Error CodeObjectMetadata::verifyRewrite(ArrayRef<uint8_t> NewSection) const {
  auto CheckFailed = [](const Twine &Msg) {
    return mdError("internal error: rewritten note fails self-check: " + Msg);
  };
  if (!HasNote)
    return NewSection == ArrayRef<uint8_t>(Section)
               ? Error::success()
               : CheckFailed("the section changed but has no metadata note");

  // The note framing: the same notes, only this note's descriptor (and its
  // size field and padding) may differ.
  Expected<std::vector<NoteRef>> Notes = parseNotes(NewSection);
  if (!Notes)
    return CheckFailed(toString(Notes.takeError()));
  const NoteRef *Found = nullptr;
  for (const NoteRef &N : *Notes) {
    if (N.Name != AMDGPUNoteOwner || N.Type != NT_AMDGPU_METADATA)
      continue;
    if (Found)
      return CheckFailed("more than one NT_AMDGPU_METADATA note");
    Found = &N;
  }
  if (!Found || Found->Offset != NoteOffset || Found->DescOffset != DescOffset)
    return CheckFailed("the metadata note moved");
  const uint64_t OldEnd = DescOffset + alignTo(uint64_t(DescSize), NoteAlign);
  const uint64_t NewEnd =
      DescOffset + alignTo(uint64_t(Found->Desc.size()), NoteAlign);
  const uint64_t SizeField = NoteOffset + 4;
  if (OldEnd > Section.size() || NewEnd > NewSection.size() ||
      NewSection.size() - NewEnd != Section.size() - OldEnd ||
      !std::equal(Section.begin(), Section.begin() + SizeField,
                  NewSection.begin()) ||
      !std::equal(Section.begin() + SizeField + 4,
                  Section.begin() + DescOffset,
                  NewSection.begin() + SizeField + 4) ||
      !std::equal(Section.begin() + OldEnd, Section.end(),
                  NewSection.begin() + NewEnd))
    return CheckFailed("bytes outside the metadata descriptor changed");

  // One pass over the new descriptor validates it, checks the values this
  // layer reads (the new values where changed, the old ones elsewhere:
  // Kernels holds both), and compares its token stream with the original's.
  StringRef NewBlob(reinterpret_cast<const char *>(Found->Desc.data()),
                    Found->Desc.size());
  StringRef OldBlob(reinterpret_cast<const char *>(Section.data()) + DescOffset,
                    DescSize);
  size_t Seen = 0;
  Lockstep Against{OldBlob, Pending};
  Expected<BlobSummary> Sum = readBlob(
      NewBlob, NoteOffset,
      [&](size_t I, const KernelView &V) -> Error {
        ++Seen;
        if (I >= Kernels.size())
          return CheckFailed("kernel list differs");
        const KernelMD &K = Kernels[I];
        if (V.Name != K.Name || V.Symbol != K.Symbol)
          return CheckFailed("kernel " + Twine(I) + " changed its name");
        for (unsigned F = 0; F != NumKernelFields; ++F)
          if (V.Fields[F] != K.get(KernelField(F)))
            return CheckFailed("kernel " + Twine(I) + ": '" + FieldKeys[F] +
                               "' does not have the expected value");
        return Error::success();
      },
      &Against);
  if (!Sum) {
    std::string Msg = toString(Sum.takeError());
    if (StringRef(Msg).contains("fails self-check"))
      return createStringError(Msg);
    return CheckFailed(Msg);
  }
  if (Seen != Kernels.size())
    return CheckFailed("kernel list differs");
  if (Sum->Target != Target || Sum->Version.has_value() != Version.has_value() ||
      (Version && (Sum->Version->Major != Version->Major ||
                   Sum->Version->Minor != Version->Minor)))
    return CheckFailed("'amdhsa.version' or 'amdhsa.target' differs");
  if (!Sum->Mismatch.empty())
    return CheckFailed(Sum->Mismatch);
  return Error::success();
}

Expected<std::string> CodeObjectMetadata::toYAML() const {
  if (!HasNote)
    return mdError("no AMDGPU metadata note");
  // Only this needs a Document; it is built on demand from the bytes read.
  msgpack::Document Doc;
  StringRef Blob(reinterpret_cast<const char *>(Section.data()) + DescOffset,
                 DescSize);
  if (!Doc.readFromBlob(Blob, /*Multi=*/false))
    return mdError("note at offset " + hex(NoteOffset) +
                   ": malformed msgpack payload");
  std::string S;
  raw_string_ostream OS(S);
  Doc.toYAML(OS);
  return S;
}

} // namespace amdgpu
} // namespace hotswap
