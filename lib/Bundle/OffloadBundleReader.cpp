//===- lib/Bundle/OffloadBundleReader.cpp - Parse uncompressed bundles ----===//
//
// Reads the header table field by field, each field only after checking that
// it is inside the bytes; every position is a sum checked for overflow. The
// entry count is bounded by what can fit before the entry vector is sized.
// Checks that relate entries to each other (payloads against the header,
// against each other, repeated ids) run once the whole table is read.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/OffloadBundle.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"

#include <algorithm>

using namespace llvm;

namespace hotswap {
namespace bundle {

namespace {

uint64_t read64(ArrayRef<uint8_t> B, uint64_t Off) {
  return support::endian::read64le(B.data() + Off);
}

std::string range(uint64_t Begin, uint64_t End) {
  return "[" + hex(Begin) + ", " + hex(End) + ")";
}

class Reader {
public:
  explicit Reader(ArrayRef<uint8_t> Bytes) : B(Bytes), Size(Bytes.size()) {}
  Expected<OffloadBundle> read();

private:
  Error readPrologue(uint64_t &Count);
  Error readEntry(size_t Index, uint64_t &Pos, OffloadBundleEntry &E);
  Error checkEntry(size_t Index, const OffloadBundleEntry &E);
  Error checkIds(ArrayRef<OffloadBundleEntry> Entries);
  Error checkPayloads(ArrayRef<OffloadBundleEntry> Entries, uint64_t HeaderEnd);
  std::string end() const { return "end of bundle (size " + hex(Size) + ")"; }

  ArrayRef<uint8_t> B;
  uint64_t Size;
};

Error Reader::readPrologue(uint64_t &Count) {
  const uint64_t MagicSize = OffloadBundleMagic.size();
  if (Size < MagicSize) {
    if (std::equal(B.begin(), B.end(), OffloadBundleMagic.bytes_begin()))
      return makeError("offload bundle truncated in its magic: " + hex(Size) +
                       " of " + hex(MagicSize) + " bytes");
    return makeError("not an offload bundle: it does not start with '" +
                     OffloadBundleMagic + "'");
  }
  if (!std::equal(OffloadBundleMagic.bytes_begin(),
                  OffloadBundleMagic.bytes_end(), B.begin()))
    return makeError("not an offload bundle: it does not start with '" +
                     OffloadBundleMagic + "'");
  if (Size < OffloadBundlePrologueSize)
    return makeError("offload bundle truncated in its entry count at offset " +
                     hex(MagicSize) + " (size " + hex(Size) + ")");
  Count = read64(B, MagicSize);
  // Every entry takes its three fields at least; compare by division so
  // that no product can overflow.
  const uint64_t MaxCount =
      (Size - OffloadBundlePrologueSize) / OffloadBundleEntryFieldsSize;
  if (Count > MaxCount)
    return makeError("entry count " + hex(Count) + " is more than the " +
                     hex(MaxCount) + " entries that fit in the bundle (size " +
                     hex(Size) + ", " + hex(OffloadBundleEntryFieldsSize) +
                     " bytes at least per entry)");
  return Error::success();
}

Error Reader::readEntry(size_t Index, uint64_t &Pos, OffloadBundleEntry &E) {
  // Pos <= Size on entry: it is the end of what was read so far.
  if (Size - Pos < OffloadBundleEntryFieldsSize)
    return makeError("entry " + Twine(Index) + ": fields at offset " +
                     hex(Pos) + " extend past " + end());
  E.Offset = read64(B, Pos);
  E.Size = read64(B, Pos + 8);
  const uint64_t IdSize = read64(B, Pos + 16);
  Pos += OffloadBundleEntryFieldsSize;
  if (IdSize > Size - Pos)
    return makeError("entry " + Twine(Index) + ": id of " + hex(IdSize) +
                     " bytes at offset " + hex(Pos) + " extends past " + end());
  E.ID = StringRef(reinterpret_cast<const char *>(B.data() + Pos), IdSize);
  Pos += IdSize;
  if (E.ID.empty())
    return makeError("entry " + Twine(Index) + ": empty id");
  return checkEntry(Index, E);
}

Error Reader::checkEntry(size_t Index, const OffloadBundleEntry &E) {
  const std::string Name = describeEntry(Index, E.ID);
  if (E.Offset == 0)
    return makeError(Name + ": offset is 0 (clang's reader stops at such an "
                            "entry and drops the ones after it)");
  std::optional<uint64_t> EntryEnd = checkedAddUnsigned(E.Offset, E.Size);
  if (!EntryEnd || *EntryEnd > Size) {
    if (E.empty())
      return makeError(Name + ": offset " + hex(E.Offset) + " is past " +
                       end());
    return makeError(Name + ": payload at offset " + hex(E.Offset) +
                     " of size " + hex(E.Size) + " extends past " + end());
  }
  return Error::success();
}

Error Reader::checkIds(ArrayRef<OffloadBundleEntry> Entries) {
  DenseMap<StringRef, size_t> First;
  for (auto [I, E] : enumerate(Entries)) {
    auto [It, New] = First.try_emplace(E.ID, I);
    if (!New)
      return makeError(describeEntry(I, E.ID) + ": same id as entry " +
                       Twine(It->second));
  }
  return Error::success();
}

Error Reader::checkPayloads(ArrayRef<OffloadBundleEntry> Entries,
                            uint64_t HeaderEnd) {
  std::vector<size_t> Order;
  for (auto [I, E] : enumerate(Entries)) {
    if (E.empty())
      continue;
    if (E.Offset < HeaderEnd)
      return makeError(
          describeEntry(I, E.ID) + ": payload at offset " + hex(E.Offset) +
          " lies inside the header table, which ends at " + hex(HeaderEnd));
    Order.push_back(I);
  }
  // In offset order (table order among equal offsets), each payload must
  // start at or after the end of the one before it; as long as that holds,
  // the one before ends furthest.
  llvm::stable_sort(Order, [&](size_t L, size_t R) {
    return Entries[L].Offset < Entries[R].Offset;
  });
  for (size_t K = 1; K < Order.size(); ++K) {
    const OffloadBundleEntry &P = Entries[Order[K - 1]];
    const OffloadBundleEntry &E = Entries[Order[K]];
    if (E.Offset < P.Offset + P.Size)
      return makeError(describeEntry(Order[K], E.ID) + ": payload " +
                       range(E.Offset, E.Offset + E.Size) + " overlaps " +
                       describeEntry(Order[K - 1], P.ID) + " payload " +
                       range(P.Offset, P.Offset + P.Size));
  }
  return Error::success();
}

Expected<OffloadBundle> Reader::read() {
  uint64_t Count = 0;
  if (Error Err = readPrologue(Count))
    return std::move(Err);
  OffloadBundle Bundle;
  Bundle.Bytes = B;
  Bundle.Entries.resize(Count);
  uint64_t Pos = OffloadBundlePrologueSize;
  for (auto [I, E] : enumerate(Bundle.Entries))
    if (Error Err = readEntry(I, Pos, E))
      return std::move(Err);
  Bundle.HeaderSize = Pos;
  if (Error Err = checkIds(Bundle.Entries))
    return std::move(Err);
  if (Error Err = checkPayloads(Bundle.Entries, Bundle.HeaderSize))
    return std::move(Err);
  Bundle.Size = Bundle.HeaderSize;
  for (OffloadBundleEntry &E : Bundle.Entries) {
    E.Payload = B.slice(E.Offset, E.Size);
    Bundle.Size = std::max(Bundle.Size, E.Offset + E.Size);
  }
  return Bundle;
}

} // namespace

Expected<OffloadBundle> parseOffloadBundle(ArrayRef<uint8_t> Bytes) {
  return Reader(Bytes).read();
}

} // namespace bundle
} // namespace hotswap
