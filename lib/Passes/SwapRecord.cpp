//===- lib/Passes/SwapRecord.cpp - The .hotswap.swaps section -------------===//
//
// One JSON object per line (RecordLines.h); addresses and sizes as "0x..."
// strings (exact for any 64-bit value, readable in llvm-readelf -p).
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/SwapRecord.h"
#include "hotswap/Passes/RecordLines.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/Sha256.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MD5.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace hotswap;

std::vector<std::string>
hotswap::metadataDisagreements(const amdgpu::KernelMD &MD,
                               const amdgpu::KernelDescriptor &KD) {
  std::vector<std::string> D;
  auto Agree = [&](StringRef Key, std::optional<uint64_t> V, uint64_t InKD) {
    if (V && *V != InKD)
      D.push_back("metadata '" + Key.str() + "' is " + std::to_string(*V) +
                  " but its descriptor says " + std::to_string(InKD));
  };
  Agree(".group_segment_fixed_size", MD.GroupSegmentFixedSize,
        KD.GroupSegmentFixedSize);
  Agree(".private_segment_fixed_size", MD.PrivateSegmentFixedSize,
        KD.PrivateSegmentFixedSize);
  Agree(".wavefront_size", MD.WavefrontSize, KD.wavefrontSize());
  Agree(".uses_dynamic_stack", MD.get(amdgpu::KernelField::UsesDynamicStack),
        KD.usesDynamicStack());
  return D;
}

StringRef hotswap::swapDigestName(SwapDigest D) {
  return D == SwapDigest::MD5 ? "MD5" : "SHA-256";
}

std::string hotswap::swapDigestHex(SwapDigest D, ArrayRef<uint8_t> Bytes) {
  if (D == SwapDigest::SHA256) {
    Sha256::Digest Sum = Sha256::hash(Bytes);
    return toHex(ArrayRef<uint8_t>(Sum), /*LowerCase=*/true);
  }
  MD5 H;
  H.update(Bytes);
  MD5::MD5Result R;
  H.final(R);
  return std::string(R.digest().str());
}

namespace {

/// The JSON keys of the file's and a segment's digest.
StringRef fromKey(SwapDigest D) {
  return D == SwapDigest::MD5 ? "from_md5" : "from_sha256";
}
StringRef segmentKey(SwapDigest D) {
  return D == SwapDigest::MD5 ? "md5" : "sha256";
}

Expected<SwapRecord> parseRecord(const json::Object *O) {
  SwapRecord R;
  if (!O->get(fromKey(SwapDigest::SHA256)) && O->get(fromKey(SwapDigest::MD5)))
    R.Algorithm = SwapDigest::MD5;
  for (auto [Key, Out] :
       {std::pair<StringRef, std::string *>{"kernel", &R.Kernel},
        {"from", &R.From},
        {fromKey(R.Algorithm), &R.FromDigest}}) {
    Expected<std::string> S = stringMember(*O, Key);
    if (!S)
      return S.takeError();
    *Out = std::move(*S);
  }
  for (auto [Key, Out] :
       {std::pair<StringRef, uint64_t *>{"descriptor", &R.Descriptor},
        {"code", &R.Code}}) {
    Expected<uint64_t> N = hexMember(*O, Key);
    if (!N)
      return N.takeError();
    *Out = *N;
  }
  const json::Array *Image = O->getArray("image");
  if (!Image)
    return makeError("'image' is not an array");
  for (const json::Value &E : *Image) {
    const json::Object *S = E.getAsObject();
    if (!S)
      return makeError("an element of 'image' is not an object");
    SwapSegment Seg;
    for (auto [Key, Out] : {std::pair<StringRef, uint64_t *>{"addr", &Seg.Addr},
                            {"file_size", &Seg.FileSize},
                            {"mem_size", &Seg.MemSize}}) {
      Expected<uint64_t> N = hexMember(*S, Key);
      if (!N)
        return prefixError("image", N.takeError());
      *Out = *N;
    }
    Expected<std::string> M = stringMember(*S, segmentKey(R.Algorithm));
    if (!M)
      return prefixError("image", M.takeError());
    Seg.Digest = std::move(*M);
    R.Image.push_back(std::move(Seg));
  }
  return R;
}

json::Object formatRecord(const SwapRecord &R) {
  json::Array Image;
  for (const SwapSegment &S : R.Image)
    Image.push_back(json::Object{{"addr", hex(S.Addr)},
                                 {"file_size", hex(S.FileSize)},
                                 {"mem_size", hex(S.MemSize)},
                                 {segmentKey(R.Algorithm), S.Digest}});
  json::Object O{{"kernel", R.Kernel},
                 {"from", R.From},
                 {fromKey(R.Algorithm), R.FromDigest},
                 {"descriptor", hex(R.Descriptor)},
                 {"code", hex(R.Code)},
                 {"image", std::move(Image)}};
  return O;
}

} // namespace

Expected<std::vector<SwapRecord>> hotswap::readSwapRecords(const Object &Obj) {
  return readRecords<SwapRecord>(
      Obj, SwapRecords, [](const json::Object &O) { return parseRecord(&O); });
}

Error hotswap::appendSwapRecords(Object &Obj, ArrayRef<SwapRecord> Records) {
  std::vector<json::Object> Lines;
  for (const SwapRecord &R : Records)
    Lines.push_back(formatRecord(R));
  return appendRecordLines(Obj, SwapRecords, Lines);
}

const SwapRecord *hotswap::currentSwap(ArrayRef<SwapRecord> Records,
                                       const KernelInfo &K) {
  const SwapRecord *Found = nullptr;
  for (const SwapRecord &R : Records)
    if (R.Kernel == K.Name && R.Code == K.CodeEntry)
      Found = &R;
  return Found;
}

amdgpu::KernelDescriptor
hotswap::swappedDescriptor(const amdgpu::TargetInfo &T,
                           const amdgpu::KernelDescriptor &Repl,
                           const KernelInfo &K) {
  amdgpu::KernelDescriptor KD = Repl;
  KD.KernelCodeEntryByteOffset = K.KD.KernelCodeEntryByteOffset;
  if (K.EntryStub) {
    unsigned Max = static_cast<unsigned>(K.EntryStub->size() / 128);
    if (T.InstPrefWidth && KD.instPrefSize(T) > Max)
      KD.setInstPrefSize(T, Max);
    if (T.HasSGPRGranule && K.KD.sgprGranule() > KD.sgprGranule())
      KD.setSGPRGranule(K.KD.sgprGranule());
  }
  return KD;
}
