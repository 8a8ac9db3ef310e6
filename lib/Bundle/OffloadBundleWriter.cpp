//===- lib/Bundle/OffloadBundleWriter.cpp - Write uncompressed bundles ----===//
//
// Two phases, like the ELF writer: the layout (header size, every offset,
// the total size) is computed with checked arithmetic and refused when
// impossible, then the header is rendered; the payloads are copied after
// it (buildOffloadBundle, rewriteOffloadBundle) or placed by the caller
// (layoutRewrittenBundle).
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/OffloadBundle.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/LargeBuffer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace llvm;

namespace hotswap {
namespace bundle {

namespace {

struct BundleLayout {
  uint64_t HeaderSize = 0;
  std::vector<uint64_t> Offsets;
  uint64_t Size = 0;
};

Error overflow() {
  return makeError("offload bundle layout overflows 64 bits");
}

/// \p IDs with payloads of \p Sizes bytes.
Expected<BundleLayout> computeLayout(ArrayRef<StringRef> IDs,
                                     ArrayRef<uint64_t> Sizes,
                                     uint64_t Alignment) {
  if (!isPowerOf2_64(Alignment))
    return makeError("payload alignment " + hex(Alignment) +
                     " is not a power of two");
  StringSet<> Seen;
  BundleLayout L;
  std::optional<uint64_t> Header = OffloadBundlePrologueSize;
  for (auto [I, ID] : enumerate(IDs)) {
    if (ID.empty())
      return makeError("entry " + Twine(I) + ": empty id");
    if (!Seen.insert(ID).second)
      return makeError(describeEntry(I, ID) + ": id repeated");
    if (Header)
      Header =
          checkedAddUnsigned<uint64_t>(*Header, OffloadBundleEntryFieldsSize);
    if (Header)
      Header = checkedAddUnsigned<uint64_t>(*Header, ID.size());
  }
  if (!Header)
    return overflow();
  L.HeaderSize = *Header;
  if (L.HeaderSize > MaxOffloadBundleHeaderSize)
    return makeError("offload bundle header of " + hex(L.HeaderSize) +
                     " bytes does not fit in the first " +
                     hex(MaxOffloadBundleHeaderSize) +
                     " bytes, all that HIP reads to find the entries");
  uint64_t Pos = L.HeaderSize;
  for (uint64_t Size : Sizes) {
    if (Pos > UINT64_MAX - (Alignment - 1))
      return overflow();
    const uint64_t Offset = alignTo(Pos, Alignment);
    std::optional<uint64_t> End = checkedAddUnsigned<uint64_t>(Offset, Size);
    if (!End)
      return overflow();
    L.Offsets.push_back(Offset);
    Pos = *End;
  }
  L.Size = Pos;
  if (L.Size > SIZE_MAX)
    return overflow();
  return L;
}

} // namespace

/// The header of \p IDs laid out as \p L, rendered.
static std::vector<uint8_t> renderHeader(ArrayRef<StringRef> IDs,
                                         ArrayRef<uint64_t> Sizes,
                                         const BundleLayout &L) {
  std::vector<uint8_t> Out(L.HeaderSize, 0);
  uint8_t *P = Out.data();
  auto Put64 = [&](uint64_t V) {
    support::endian::write64le(P, V);
    P += 8;
  };
  std::memcpy(P, OffloadBundleMagic.data(), OffloadBundleMagic.size());
  P += OffloadBundleMagic.size();
  Put64(IDs.size());
  for (auto [I, ID] : enumerate(IDs)) {
    Put64(L.Offsets[I]);
    Put64(Sizes[I]);
    Put64(ID.size());
    std::memcpy(P, ID.data(), ID.size());
    P += ID.size();
  }
  return Out;
}

Expected<std::vector<uint8_t>>
buildOffloadBundle(ArrayRef<OffloadBundleInput> Entries, uint64_t Alignment) {
  std::vector<StringRef> IDs;
  std::vector<uint64_t> Sizes;
  for (const OffloadBundleInput &E : Entries) {
    IDs.push_back(E.ID);
    Sizes.push_back(E.Payload.size());
  }
  Expected<BundleLayout> L = computeLayout(IDs, Sizes, Alignment);
  if (!L)
    return L.takeError();
  std::vector<uint8_t> Out = largeBuffer(L->Size);
  std::vector<uint8_t> Header = renderHeader(IDs, Sizes, *L);
  Out.assign(Header.begin(), Header.end()); // keeps the reservation
  Out.resize(L->Size, 0);
  for (auto [I, E] : enumerate(Entries))
    if (!E.Payload.empty())
      std::memcpy(Out.data() + L->Offsets[I], E.Payload.data(),
                  E.Payload.size());
  return Out;
}

bool replacesPayload(const OffloadBundle &Bundle,
                     PayloadReplacements Replacements) {
  for (auto [Slot, E] : zip(Replacements, Bundle.Entries))
    if (Slot && *Slot != E.Payload)
      return true;
  return false;
}

/// Trailing bytes after a bundle that is rewritten must be zero padding.
static Error checkTrailing(const OffloadBundle &Bundle) {
  ArrayRef<uint8_t> Trailing = Bundle.trailingBytes();
  const auto *NonZero =
      find_if(Trailing, [](uint8_t Byte) { return Byte != 0; });
  if (NonZero == Trailing.end())
    return Error::success();
  return makeError(
      "cannot rewrite the bundle: " + hex(Trailing.size()) +
      " bytes follow its end at " + hex(Bundle.Size) + " and the one at " +
      hex(Bundle.Size + (NonZero - Trailing.begin())) + " is not zero padding");
}

static Error slotCount(size_t Slots, const OffloadBundle &Bundle) {
  return makeError(Twine(Slots) + " replacement slots for " +
                   Twine(Bundle.Entries.size()) + " entries");
}

Expected<std::vector<uint8_t>>
rewriteOffloadBundle(const OffloadBundle &Bundle,
                     PayloadReplacements Replacements) {
  if (!Replacements.empty() && Replacements.size() != Bundle.Entries.size())
    return slotCount(Replacements.size(), Bundle);
  if (!replacesPayload(Bundle, Replacements))
    return std::vector<uint8_t>(Bundle.Bytes.begin(), Bundle.Bytes.end());
  if (Error E = checkTrailing(Bundle))
    return std::move(E);
  std::vector<OffloadBundleInput> Inputs;
  for (auto [I, E] : enumerate(Bundle.Entries))
    Inputs.push_back({E.ID, Replacements[I] ? *Replacements[I] : E.Payload});
  return buildOffloadBundle(Inputs, Bundle.payloadAlignment());
}

Expected<OffloadBundleLayout>
layoutRewrittenBundle(const OffloadBundle &Bundle,
                      ArrayRef<std::optional<uint64_t>> NewSizes) {
  if (NewSizes.size() != Bundle.Entries.size())
    return slotCount(NewSizes.size(), Bundle);
  if (Error E = checkTrailing(Bundle))
    return std::move(E);
  std::vector<StringRef> IDs;
  std::vector<uint64_t> Sizes;
  for (auto [I, E] : enumerate(Bundle.Entries)) {
    IDs.push_back(E.ID);
    Sizes.push_back(NewSizes[I] ? *NewSizes[I] : E.Payload.size());
  }
  Expected<BundleLayout> L =
      computeLayout(IDs, Sizes, Bundle.payloadAlignment());
  if (!L)
    return L.takeError();
  OffloadBundleLayout Out;
  Out.Header = renderHeader(IDs, Sizes, *L);
  Out.Offsets = std::move(L->Offsets);
  Out.Size = L->Size;
  return std::move(Out);
}

} // namespace bundle
} // namespace hotswap
