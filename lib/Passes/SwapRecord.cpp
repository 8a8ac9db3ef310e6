//===- lib/Passes/SwapRecord.cpp - The .hotswap.swaps section -------------===//
//
// One JSON object per line; addresses and sizes as "0x..." strings (exact
// for any 64-bit value, readable in llvm-readelf -p).
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/SwapRecord.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

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

std::string hotswap::md5Hex(ArrayRef<uint8_t> Bytes) {
  MD5 H;
  H.update(Bytes);
  MD5::MD5Result R;
  H.final(R);
  return std::string(R.digest().str());
}

namespace {

/// The value of "0x..." member \p Key of \p O.
Expected<uint64_t> hexMember(const json::Object &O, StringRef Key) {
  std::optional<StringRef> S = O.getString(Key);
  uint64_t V = 0;
  if (!S || !S->starts_with("0x") || S->drop_front(2).getAsInteger(16, V))
    return makeError("'" + Key + "' is not a hexadecimal string (\"0x...\")");
  return V;
}

Expected<std::string> stringMember(const json::Object &O, StringRef Key) {
  std::optional<StringRef> S = O.getString(Key);
  if (!S)
    return makeError("'" + Key + "' is not a string");
  return S->str();
}

Expected<SwapRecord> parseRecord(StringRef Line) {
  Expected<json::Value> V = json::parse(Line);
  if (!V)
    return V.takeError();
  const json::Object *O = V->getAsObject();
  if (!O)
    return makeError("not a JSON object");
  SwapRecord R;
  for (auto [Key, Out] :
       {std::pair<StringRef, std::string *>{"kernel", &R.Kernel},
        {"from", &R.From},
        {"from_md5", &R.FromMD5}}) {
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
    Expected<std::string> M = stringMember(*S, "md5");
    if (!M)
      return prefixError("image", M.takeError());
    Seg.MD5 = std::move(*M);
    R.Image.push_back(std::move(Seg));
  }
  return R;
}

std::string hexString(uint64_t V) {
  return "0x" + utohexstr(V, /*Lower=*/true);
}

std::string formatRecord(const SwapRecord &R) {
  json::Array Image;
  for (const SwapSegment &S : R.Image)
    Image.push_back(json::Object{{"addr", hexString(S.Addr)},
                                 {"file_size", hexString(S.FileSize)},
                                 {"mem_size", hexString(S.MemSize)},
                                 {"md5", S.MD5}});
  json::Object O{
      {"kernel", R.Kernel},        {"from", R.From},
      {"from_md5", R.FromMD5},     {"descriptor", hexString(R.Descriptor)},
      {"code", hexString(R.Code)}, {"image", std::move(Image)}};
  std::string Line;
  raw_string_ostream OS(Line);
  OS << json::Value(std::move(O));
  return Line;
}

} // namespace

Expected<std::vector<SwapRecord>> hotswap::readSwapRecords(const Object &Obj) {
  std::vector<SwapRecord> Out;
  const Section *S = Obj.findSection(SwapRecordSectionName);
  if (!S || S->isNoBits())
    return Out;
  SmallVector<StringRef, 8> Lines;
  toStringRef(S->contents()).split(Lines, '\n', -1, /*KeepEmpty=*/false);
  for (size_t I = 0; I != Lines.size(); ++I) {
    Expected<SwapRecord> R = parseRecord(Lines[I]);
    if (!R)
      return prefixError("section '" + SwapRecordSectionName + "': line " +
                             Twine(I + 1),
                         R.takeError());
    Out.push_back(std::move(*R));
  }
  return Out;
}

Error hotswap::appendSwapRecords(Object &Obj, ArrayRef<SwapRecord> Records) {
  if (Records.empty())
    return Error::success();
  Section *S = Obj.findSection(SwapRecordSectionName);
  if (S && (S->isAlloc() || S->isNoBits()))
    return makeError("section '" + SwapRecordSectionName +
                     "' is loaded or has no contents: it cannot hold the "
                     "records of swapped kernels");
  if (!S) {
    auto New = std::make_unique<Section>();
    New->Name = SwapRecordSectionName.str();
    New->Type = ELF::SHT_PROGBITS;
    New->AddrAlign = 1;
    S = &Obj.addSection(std::move(New));
  }
  std::vector<uint8_t> Bytes(S->contents().begin(), S->contents().end());
  if (!Bytes.empty() && Bytes.back() != '\n')
    Bytes.push_back('\n');
  for (const SwapRecord &R : Records) {
    std::string Line = formatRecord(R);
    Bytes.insert(Bytes.end(), Line.begin(), Line.end());
    Bytes.push_back('\n');
  }
  S->setContents(std::move(Bytes));
  return Error::success();
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
