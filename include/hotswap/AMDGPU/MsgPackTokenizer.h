//===- hotswap/AMDGPU/MsgPackTokenizer.h - Offset-aware msgpack -*- C++ -*-===//
//
// The one msgpack parser of this layer: llvm::msgpack::Reader does the
// decoding; this wrapper adds where each token lies in the blob and enforces
// the rules of llvm::msgpack::Document (single top-level object). Reading
// the metadata, finding the bytes of a value to edit, and checking a rewrite
// token by token all go through it.
//
// A token is one msgpack object as the Reader returns it: a scalar (with
// its payload, for a string or a binary) or the header of a map or an
// array, whose elements follow as the next tokens (a map's as key, value,
// key, value, ...).
//
// The stream accepts exactly the blobs Document::readFromBlob accepts: every
// token must be readable, no container may end early, extension objects are
// rejected, and no map may hold two equal keys (equal as DocNode orders
// them: same type and value). Bytes after the top-level object are ignored.
// One deliberate difference: a map key that is itself a map or an array is
// rejected; Document does not descend into such a key (its elements are read
// as the map's next entries) and crashes comparing two of them.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_MSGPACKTOKENIZER_H
#define HOTSWAP_AMDGPU_MSGPACKTOKENIZER_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/BinaryFormat/MsgPackReader.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace hotswap {
namespace amdgpu {

struct MsgPackToken {
  /// The object as llvm::msgpack::Reader read it (strings point into the
  /// blob; a map or an array carries its element count).
  llvm::msgpack::Object Obj;
  /// Offset of the token's first byte in the blob.
  uint64_t Offset = 0;
  /// Bytes of its encoding: tag, length or value, and payload. For a map or
  /// an array, only the header.
  uint64_t Size = 0;
  /// Number of maps and arrays the token is inside (the root is at 0).
  unsigned Depth = 0;

  bool isContainer() const {
    return Obj.Kind == llvm::msgpack::Type::Map ||
           Obj.Kind == llvm::msgpack::Type::Array;
  }
  /// The value of a non-negative integer (unsigned, or signed and >= 0).
  std::optional<uint64_t> asUnsigned() const;
};

class MsgPackTokenizer {
public:
  explicit MsgPackTokenizer(llvm::StringRef Blob);

  /// Reads the next token in document order. False once the top-level object
  /// is complete, and on failure (see error()); every later call is then
  /// false too.
  bool next(MsgPackToken &T);

  /// Reads the elements of \p T, the token just read, if it is a map or an
  /// array. False on failure.
  bool skip(const MsgPackToken &T);

  /// Offset just past the last token read.
  uint64_t offset() const { return Pos; }

  /// The reason reading failed ("malformed msgpack payload", with the cause
  /// when it is a map key that is a map or an array), or success.
  llvm::Error error() const;

private:
  struct Level {
    uint64_t Left; // tokens still to come, keys included
    bool IsMap;
    bool Ascending;  // the map's keys so far ascend strictly
    size_t FirstKey; // index in Keys of the map's first key
  };

  bool fail(bool ContainerKey = false);
  bool keysUnique(size_t First);

  llvm::StringRef Blob;
  llvm::msgpack::Reader R;
  uint64_t Pos = 0;
  bool Started = false, Failed = false, ContainerKey = false;
  llvm::SmallVector<Level, 8> Stack;
  /// Keys of the open maps, innermost last (scalars only).
  std::vector<llvm::msgpack::Object> Keys;
};

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_MSGPACKTOKENIZER_H
