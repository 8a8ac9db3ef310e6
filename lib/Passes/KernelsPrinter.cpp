//===- lib/Passes/KernelsPrinter.cpp - print<kernels> ---------------------===//
//
// The kernels analysis as text for people and as JSON for tools
// (--kernels-format=json).
//
//===----------------------------------------------------------------------===//

#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Passes/CloneRecord.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/PatchRecord.h"
#include "hotswap/Passes/SwapRecord.h"

#include "hotswap/Support/Format.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace {
/// What the passes that move a kernel's code recorded.
struct Records {
  std::vector<SwapRecord> Swaps;
  std::vector<CloneRecord> Clones;
  /// Why the clone records could not be read (none: they could).
  std::optional<std::string> ClonesUnreadable;
  /// Sites patched in place, per kernel (an unreadable record: none; verify
  /// says why).
  StringMap<std::vector<PatchRecord>> Patches;
};
} // namespace

static StringRef stubFormName(const DecodedStub &D) {
  switch (D.Form) {
  case StubSpec::Short:
    return "s_branch";
  case StubSpec::SGPRPair:
    return "long";
  case StubSpec::VCC:
    return "long/vcc";
  }
  return "?";
}

static json::Object stubJSON(const PoolStub &P) {
  json::Object S{{"address", static_cast<int64_t>(P.Addr)},
                 {"target", static_cast<int64_t>(P.Decoded.Target)},
                 {"form", stubFormName(P.Decoded)},
                 {"dual", P.Dual}};
  if (P.Decoded.Form == StubSpec::SGPRPair)
    S["sgpr"] = P.Decoded.SGPR;
  if (P.Decoded.PrologueSize)
    S["prologue_size"] = static_cast<int64_t>(P.Decoded.PrologueSize);
  return S;
}

/// print<kernels> in JSON: one kernel.
static json::Object kernelJSON(const KernelInfo &K, const TargetInfo &T,
                               const Records &Recs) {
  json::Object O{{"name", K.Name},
                 {"descriptor", K.KDSymbol},
                 {"descriptor_address", static_cast<int64_t>(K.KDAddr)},
                 {"entry", static_cast<int64_t>(K.Entry)},
                 {"code_entry", static_cast<int64_t>(K.CodeEntry)},
                 {"live_in_sgprs", K.LiveInSGPRs},
                 {"addressable_sgprs", T.AddressableSGPRs},
                 {"kernarg_preload_length", K.KD.kernargPreloadLength()},
                 {"wave32", K.KD.isWave32()}};
  // gfx6-9: the allocation a scratch pair must fit, and the special
  // registers at its top.
  if (K.AllocatedSGPRs) {
    O["allocated_sgprs"] = *K.AllocatedSGPRs;
    O["special_sgprs"] = K.SpecialSGPRs;
  }
  if (K.EntryStub)
    O["stub"] = stubJSON(*K.EntryStub);
  if (K.PendingStub)
    O["pending_stub"] = stubJSON(*K.PendingStub);
  if (const SwapRecord *Swap = currentSwap(Recs.Swaps, K))
    O["swapped"] = json::Object{
        {"from", Swap->From},
        {Swap->Algorithm == SwapDigest::MD5 ? "from_md5" : "from_sha256",
         Swap->FromDigest},
        {"code", static_cast<int64_t>(Swap->Code)},
        {"descriptor", static_cast<int64_t>(Swap->Descriptor)},
        {"image", static_cast<int64_t>(
                      Swap->Image.empty() ? 0 : Swap->Image.front().Addr)}};
  if (const CloneRecord *C = currentClone(Recs.Clones, K))
    O["clone"] = json::Object{
        {"code", static_cast<int64_t>(C->Code)},
        {"size", static_cast<int64_t>(C->Size)},
        {"copy", static_cast<int64_t>(C->Clone)},
        {"copy_size", static_cast<int64_t>(C->CloneSize)},
        {"inserted", static_cast<int64_t>(C->Inserted.size())},
        {"replaced", static_cast<int64_t>(C->Replaced.size())},
        {"relaxed", static_cast<int64_t>(C->Relaxed.size())},
        {"fallthrough", static_cast<int64_t>(C->FallThrough.size())}};
  if (auto P = Recs.Patches.find(K.Name); P != Recs.Patches.end())
    O["patched_in_place"] = json::Object{
        {"sites", static_cast<int64_t>(P->second.size())},
        {"gateways",
         static_cast<int64_t>(llvm::count_if(
             P->second, [](const PatchRecord &R) { return R.Gateway != 0; }))}};
  if (K.MD) {
    json::Object M;
    if (K.MD->SGPRCount)
      M["sgpr_count"] = static_cast<int64_t>(*K.MD->SGPRCount);
    if (K.MD->VGPRCount)
      M["vgpr_count"] = static_cast<int64_t>(*K.MD->VGPRCount);
    if (K.MD->KernargSegmentSize)
      M["kernarg_segment_size"] =
          static_cast<int64_t>(*K.MD->KernargSegmentSize);
    if (K.MD->WavefrontSize)
      M["wavefront_size"] = static_cast<int64_t>(*K.MD->WavefrontSize);
    O["metadata"] = std::move(M);
  }
  return O;
}

/// print<kernels> as text: one kernel.
static void printKernel(raw_ostream &OS, const KernelInfo &K,
                        const TargetInfo &T, const Records &Recs) {
  OS << "kernel '" << K.Name << "'\n";
  OS << "  descriptor:  " << K.KDSymbol << " at " << hex(K.KDAddr) << "\n";
  OS << "  entry:       " << hex(K.Entry);
  if (K.EntryStub)
    OS << " (stub: " << stubFormName(K.EntryStub->Decoded)
       << (K.EntryStub->Dual ? ", dual" : "") << " -> "
       << hex(K.EntryStub->Decoded.Target) << ")";
  OS << "\n";
  if (K.PendingStub)
    OS << "  pool stub:   " << hex(K.PendingStub->Addr)
       << " (descriptor not yet patched)\n";
  if (const SwapRecord *Swap = currentSwap(Recs.Swaps, K)) {
    OS << "  swapped:     code at " << hex(Swap->Code) << " from '"
       << Swap->From << "' (" << swapDigestName(Swap->Algorithm) << " "
       << Swap->FromDigest;
    if (!Swap->Image.empty())
      OS << ", image at " << hex(Swap->Image.front().Addr);
    OS << ")\n";
  }
  if (auto P = Recs.Patches.find(K.Name); P != Recs.Patches.end()) {
    const size_t Gateways = llvm::count_if(
        P->second, [](const PatchRecord &R) { return R.Gateway != 0; });
    OS << "  patched:     " << P->second.size() << " sites in place, bodies in "
       << code::SiteBodySectionName;
    if (Gateways)
      OS << " (" << Gateways << " through gateways)";
    OS << "\n";
  }
  if (const CloneRecord *C = currentClone(Recs.Clones, K)) {
    OS << "  copy:        runs a copy of its code at " << hex(C->Code) << " ("
       << C->Size << " bytes) at " << hex(C->Clone) << " (" << C->CloneSize
       << " bytes";
    auto Count = [&](size_t N, StringRef What) {
      if (N)
        OS << ", " << N << " " << What;
    };
    Count(C->Inserted.size() + C->FallThrough.size(), "inserted ranges");
    Count(C->Replaced.size(), "instructions replaced");
    Count(C->Relaxed.size(), "branches relaxed");
    OS << ")\n";
  }
  OS << "  sgprs:       live-in " << K.LiveInSGPRs;
  if (K.AllocatedSGPRs)
    OS << ", allocated " << *K.AllocatedSGPRs << " (granule "
       << K.KD.sgprGranule() << ", top " << K.SpecialSGPRs << " special)";
  else
    OS << ", addressable " << T.AddressableSGPRs;
  OS << "\n";
  OS << "  rsrc1/2/3:   " << format_hex(K.KD.ComputePgmRsrc1, 10) << " "
     << format_hex(K.KD.ComputePgmRsrc2, 10) << " "
     << format_hex(K.KD.ComputePgmRsrc3, 10) << "\n";
  OS << "  properties:  " << format_hex(K.KD.KernelCodeProperties, 6)
     << (K.KD.isWave32() ? " wave32" : " wave64");
  if (unsigned L = K.KD.kernargPreloadLength())
    OS << ", kernarg preload " << L << " dwords";
  if (T.InstPrefWidth)
    OS << ", inst_pref_size " << K.KD.instPrefSize(T);
  OS << "\n";
  if (!K.MD)
    return;
  OS << "  metadata:    ";
  bool First = true;
  auto Field = [&](StringRef N, const std::optional<uint64_t> &V) {
    if (!V)
      return;
    OS << (First ? "" : ", ") << N << " " << *V;
    First = false;
  };
  Field(".sgpr_count", K.MD->SGPRCount);
  Field(".vgpr_count", K.MD->VGPRCount);
  Field(".kernarg_segment_size", K.MD->KernargSegmentSize);
  Field(".wavefront_size", K.MD->WavefrontSize);
  OS << "\n";
}

/// What swap-kernels and the cloning passes recorded. An unreadable record
/// is verify's to fail on: the kernels are printed without it, after \p Why
/// says what is wrong.
static Records recordsOf(const Object &Obj, std::optional<std::string> &Why) {
  Records R;
  Expected<std::vector<SwapRecord>> Swaps = readSwapRecords(Obj);
  if (!Swaps)
    Why = toString(Swaps.takeError());
  else
    R.Swaps = std::move(*Swaps);
  Expected<std::vector<CloneRecord>> Clones = readCloneRecords(Obj);
  if (!Clones)
    R.ClonesUnreadable = toString(Clones.takeError());
  else
    R.Clones = std::move(*Clones);
  if (Obj.findSection(PatchRecordSectionName)) {
    Expected<std::vector<PatchRecord>> Patches = readPatchRecords(Obj);
    if (!Patches)
      consumeError(Patches.takeError());
    else
      for (PatchRecord &P : *Patches)
        R.Patches[P.Kernel].push_back(std::move(P));
  }
  return R;
}

json::Value KernelsAnalysis::toJSON(Result &R, Object &Obj, AnalysisManager &) {
  const TargetInfo &T = R.Target;
  std::optional<std::string> Unreadable;
  const Records Recs = recordsOf(Obj, Unreadable);
  json::Array Ks;
  for (const KernelInfo &K : R.Kernels)
    Ks.push_back(kernelJSON(K, T, Recs));
  json::Object O{{"target", T.targetID()},
                 {"processor", T.Name},
                 {"code_object_version", T.CodeObjectVersion},
                 {"pool_stub_slots", static_cast<int64_t>(R.PoolStubs.size())},
                 {"kernels", std::move(Ks)}};
  if (Unreadable)
    O["swap_record_unreadable"] = std::move(*Unreadable);
  if (Recs.ClonesUnreadable)
    O["clone_record_unreadable"] = *Recs.ClonesUnreadable;
  return O;
}

Error KernelsAnalysis::print(Result &R, Object &Obj, AnalysisManager &,
                             raw_ostream &OS) {
  const TargetInfo &T = R.Target;
  std::optional<std::string> Unreadable;
  const Records Recs = recordsOf(Obj, Unreadable);
  size_t Stubbed = 0;
  for (const KernelInfo &K : R.Kernels)
    Stubbed += K.hasStub();
  OS << "target: " << T.targetID() << " (" << generationName(T.Gen)
     << ", code object v" << T.CodeObjectVersion << ")\n";
  if (Unreadable)
    OS << "swap record: unreadable: " << *Unreadable << "\n";
  if (Recs.ClonesUnreadable)
    OS << "clone record: unreadable: " << *Recs.ClonesUnreadable << "\n";
  OS << "kernels: " << R.Kernels.size() << " (" << Stubbed
     << " entered through a stub)\n";
  for (const KernelInfo &K : R.Kernels)
    printKernel(OS, K, T, Recs);
  return Error::success();
}
