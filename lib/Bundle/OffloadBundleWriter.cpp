//===- lib/Bundle/OffloadBundleWriter.cpp - Write uncompressed bundles ----===//
//
// Two phases, like the ELF writer: the layout (header size, every offset,
// the total size) is computed with checked arithmetic and refused when
// impossible, then one zero-filled buffer of that size is written once.
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

Expected<BundleLayout> computeLayout(ArrayRef<OffloadBundleInput> Entries,
                                     uint64_t Alignment) {
  if (!isPowerOf2_64(Alignment))
    return makeError("payload alignment " + hex(Alignment) +
                     " is not a power of two");
  StringSet<> Seen;
  BundleLayout L;
  std::optional<uint64_t> Header = OffloadBundlePrologueSize;
  for (auto [I, E] : enumerate(Entries)) {
    if (E.ID.empty())
      return makeError("entry " + Twine(I) + ": empty id");
    if (!Seen.insert(E.ID).second)
      return makeError(describeEntry(I, E.ID) + ": id repeated");
    if (Header)
      Header =
          checkedAddUnsigned<uint64_t>(*Header, OffloadBundleEntryFieldsSize);
    if (Header)
      Header = checkedAddUnsigned<uint64_t>(*Header, E.ID.size());
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
  for (const OffloadBundleInput &E : Entries) {
    if (Pos > UINT64_MAX - (Alignment - 1))
      return overflow();
    const uint64_t Offset = alignTo(Pos, Alignment);
    std::optional<uint64_t> End =
        checkedAddUnsigned<uint64_t>(Offset, E.payloadSize());
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

Expected<std::vector<uint8_t>>
buildOffloadBundle(ArrayRef<OffloadBundleInput> Entries, uint64_t Alignment) {
  Expected<BundleLayout> L = computeLayout(Entries, Alignment);
  if (!L)
    return L.takeError();
  std::vector<uint8_t> Out = largeBuffer(L->Size);
  Out.resize(L->Size, 0);
  uint8_t *P = Out.data();
  auto Put64 = [&](uint64_t V) {
    support::endian::write64le(P, V);
    P += 8;
  };
  std::memcpy(P, OffloadBundleMagic.data(), OffloadBundleMagic.size());
  P += OffloadBundleMagic.size();
  Put64(Entries.size());
  for (auto [I, E] : enumerate(Entries)) {
    Put64(L->Offsets[I]);
    Put64(E.payloadSize());
    Put64(E.ID.size());
    std::memcpy(P, E.ID.data(), E.ID.size());
    P += E.ID.size();
  }
  for (auto [I, E] : enumerate(Entries)) {
    if (E.Rendered)
      E.Rendered->Render(
          MutableArrayRef<uint8_t>(Out).slice(L->Offsets[I], E.Rendered->Size));
    else if (!E.Payload.empty())
      std::memcpy(Out.data() + L->Offsets[I], E.Payload.data(),
                  E.Payload.size());
  }
  return Out;
}

bool replacesPayload(const OffloadBundle &Bundle,
                     PayloadReplacements Replacements) {
  for (auto [Slot, E] : zip(Replacements, Bundle.Entries))
    if (Slot && *Slot != E.Payload)
      return true;
  return false;
}

/// The bundle rebuilt with the payloads \p Rendered gives (one slot per
/// entry); the caller has checked at least one is replaced.
static Expected<std::vector<uint8_t>>
rebuild(const OffloadBundle &Bundle,
        ArrayRef<std::optional<RenderedPayload>> Rendered) {
  ArrayRef<uint8_t> Trailing = Bundle.trailingBytes();
  const auto *NonZero =
      find_if(Trailing, [](uint8_t Byte) { return Byte != 0; });
  if (NonZero != Trailing.end())
    return makeError("cannot rewrite the bundle: " + hex(Trailing.size()) +
                     " bytes follow its end at " + hex(Bundle.Size) +
                     " and the one at " +
                     hex(Bundle.Size + (NonZero - Trailing.begin())) +
                     " is not zero padding");

  std::vector<OffloadBundleInput> Inputs;
  for (auto [I, E] : enumerate(Bundle.Entries)) {
    OffloadBundleInput In{E.ID, E.Payload};
    if (Rendered[I])
      In.Rendered = &*Rendered[I];
    Inputs.push_back(In);
  }
  return buildOffloadBundle(Inputs, Bundle.payloadAlignment());
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
  std::vector<std::optional<RenderedPayload>> Rendered(Bundle.Entries.size());
  for (auto [Slot, Bytes] : zip(Rendered, Replacements)) {
    if (!Bytes)
      continue;
    ArrayRef<uint8_t> B = *Bytes;
    Slot = RenderedPayload{B.size(), [B](MutableArrayRef<uint8_t> Out) {
                             if (!B.empty())
                               std::memcpy(Out.data(), B.data(), B.size());
                           }};
  }
  return rebuild(Bundle, Rendered);
}

Expected<std::vector<uint8_t>>
rewriteOffloadBundle(const OffloadBundle &Bundle,
                     ArrayRef<std::optional<RenderedPayload>> Rendered) {
  if (Rendered.size() != Bundle.Entries.size())
    return slotCount(Rendered.size(), Bundle);
  if (llvm::none_of(Rendered, [](const auto &R) { return R.has_value(); }))
    return std::vector<uint8_t>(Bundle.Bytes.begin(), Bundle.Bytes.end());
  return rebuild(Bundle, Rendered);
}

} // namespace bundle
} // namespace hotswap
