//===- lib/AMDGPU/KernelInterface.cpp - How a kernel is launched ----------===//
//
// CodeObjectMetadata::interfaceOf: the argument layout and the launch keys
// of one kernel, read from its note on demand with the tokenizer (the
// reader of the whole section does not keep them: most runs never ask).
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/MsgPackTokenizer.h"

#include "hotswap/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using msgpack::Type;

namespace hotswap {
namespace amdgpu {

namespace {

/// The keys of a kernel map that constrain how it may be launched, besides
/// its arguments (and .kernarg_segment_size and .wavefront_size, which
/// KernelMD has).
constexpr StringLiteral LaunchKeyNames[] = {
    ".kernarg_segment_align", ".reqd_workgroup_size", ".workgroup_size_hint",
    ".uniform_work_group_size", ".vec_type_hint"};

/// Containers deeper than this inside a launch key's value are written as
/// "..." (a value is a scalar or an array of three in practice).
constexpr unsigned MaxRenderDepth = 4;

/// Writes the value \p T (just read from \p TS) out canonically, consuming
/// its elements. False when the payload is malformed.
bool render(MsgPackTokenizer &TS, const MsgPackToken &T, raw_ostream &OS,
            unsigned Depth) {
  switch (T.Obj.Kind) {
  case Type::Int:
    OS << T.Obj.Int;
    return true;
  case Type::UInt:
    OS << T.Obj.UInt;
    return true;
  case Type::Boolean:
    OS << (T.Obj.Bool ? "true" : "false");
    return true;
  case Type::Nil:
    OS << "nil";
    return true;
  case Type::Float:
    OS << T.Obj.Float;
    return true;
  case Type::String:
  case Type::Binary:
    OS << "'";
    printEscapedString(T.Obj.Raw.take_front(64), OS);
    OS << (T.Obj.Raw.size() > 64 ? "...'" : "'");
    return true;
  case Type::Array:
  case Type::Map: {
    if (Depth >= MaxRenderDepth) {
      OS << "...";
      return TS.skip(T);
    }
    const bool IsMap = T.Obj.Kind == Type::Map;
    OS << (IsMap ? "{" : "[");
    const uint64_t N = uint64_t(T.Obj.Length) * (IsMap ? 2 : 1);
    for (uint64_t I = 0; I != N; ++I) {
      MsgPackToken E;
      if (!TS.next(E))
        return false;
      if (I)
        OS << (IsMap && I % 2 ? ": " : ", ");
      if (!render(TS, E, OS, Depth + 1))
        return false;
    }
    OS << (IsMap ? "}" : "]");
    return true;
  }
  default:
    return TS.skip(T);
  }
}

/// Reads one .args entry (the map \p Map, just read).
Expected<KernelArg> readArg(MsgPackTokenizer &TS, const MsgPackToken &Map,
                            size_t Index) {
  const std::string Where = ".args[" + std::to_string(Index) + "]";
  if (Map.Obj.Kind != Type::Map) {
    if (!TS.skip(Map))
      return TS.error();
    return makeError(Where + " is not a map");
  }
  KernelArg A;
  std::optional<std::string> Problem;
  for (size_t E = 0; E != Map.Obj.Length; ++E) {
    MsgPackToken Key, V;
    if (!TS.next(Key) || !TS.next(V))
      return TS.error();
    StringRef K = Key.Obj.Kind == Type::String ? Key.Obj.Raw : StringRef();
    if (K == ".offset" || K == ".size") {
      std::optional<uint64_t> N = V.asUnsigned();
      if (!N && !Problem)
        Problem = Where + " '" + K.str() + "' is not an unsigned integer";
      (K == ".offset" ? A.Offset : A.Size) = N;
    } else if (K == ".value_kind") {
      if (V.Obj.Kind == Type::String)
        A.ValueKind = V.Obj.Raw.str();
      else if (!Problem)
        Problem = Where + " '.value_kind' is not a string";
    }
    if (!TS.skip(V))
      return TS.error();
  }
  if (Problem)
    return makeError(*Problem);
  return A;
}

/// Reads the kernel map \p Map (just read) into \p Out.
Error readKernel(MsgPackTokenizer &TS, const MsgPackToken &Map,
                 KernelInterface &Out) {
  for (size_t E = 0; E != Map.Obj.Length; ++E) {
    MsgPackToken Key, V;
    if (!TS.next(Key) || !TS.next(V))
      return TS.error();
    StringRef K = Key.Obj.Kind == Type::String ? Key.Obj.Raw : StringRef();
    if (K == ".args") {
      if (V.Obj.Kind != Type::Array) {
        if (!TS.skip(V))
          return TS.error();
        return makeError("'.args' is not an array");
      }
      std::vector<KernelArg> Args;
      for (size_t I = 0; I != V.Obj.Length; ++I) {
        MsgPackToken A;
        if (!TS.next(A))
          return TS.error();
        Expected<KernelArg> Arg = readArg(TS, A, I);
        if (!Arg)
          return Arg.takeError();
        Args.push_back(std::move(*Arg));
      }
      Out.Args = std::move(Args);
      continue;
    }
    if (llvm::is_contained(LaunchKeyNames, K)) {
      std::string Text;
      raw_string_ostream OS(Text);
      if (!render(TS, V, OS, 0))
        return TS.error();
      Out.LaunchKeys[K.str()] = std::move(Text);
      continue;
    }
    if (!TS.skip(V))
      return TS.error();
  }
  return Error::success();
}

} // namespace

Expected<KernelInterface>
CodeObjectMetadata::interfaceOf(StringRef Symbol) const {
  auto It = BySymbol.find(Symbol);
  if (It == BySymbol.end())
    return makeError("metadata: no kernel with symbol '" + Symbol + "'");
  const KernelMD &K = Kernels[It->second];
  auto Fail = [&](Error E) {
    return prefixError("metadata: kernel '" + Symbol + "'", std::move(E));
  };
  // The note was read whole before: it is well-formed msgpack, its root a
  // map whose amdhsa.kernels array holds the kernel at K.Index.
  MsgPackTokenizer TS(toStringRef(NoteRefs[K.Note].Desc));
  MsgPackToken Root;
  if (!TS.next(Root) || Root.Obj.Kind != Type::Map)
    return Fail(makeError("the note's root is not a map"));
  for (size_t P = 0; P != Root.Obj.Length; ++P) {
    MsgPackToken Key, V;
    if (!TS.next(Key) || !TS.next(V))
      return Fail(TS.error());
    if (Key.Obj.Kind != Type::String || Key.Obj.Raw != "amdhsa.kernels" ||
        V.Obj.Kind != Type::Array) {
      if (!TS.skip(V))
        return Fail(TS.error());
      continue;
    }
    for (size_t I = 0; I != V.Obj.Length; ++I) {
      MsgPackToken Map;
      if (!TS.next(Map))
        return Fail(TS.error());
      if (I != K.Index || Map.Obj.Kind != Type::Map) {
        if (!TS.skip(Map))
          return Fail(TS.error());
        continue;
      }
      KernelInterface Out;
      if (Error E = readKernel(TS, Map, Out))
        return Fail(std::move(E));
      return Out;
    }
  }
  return Fail(makeError("not found in its note"));
}

} // namespace amdgpu
} // namespace hotswap
