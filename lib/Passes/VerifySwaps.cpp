//===- lib/Passes/VerifySwaps.cpp - verify, for swapped kernels -----------===//
//
// The checks verify adds for kernels swap-kernels swapped (SwapRecord.h):
// the images intact, each swapped kernel's descriptor the replacement's,
// its metadata in agreement with that descriptor, and the `.swap` symbols
// naming swapped code.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/CloneRecord.h"
#include "hotswap/Passes/SwapRecord.h"

#include "hotswap/AMDGPU/KernelDescriptor.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringMap.h"

#include <optional>
#include <set>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace {

/// The name of the first field in which \p A and \p B differ, or "".
std::string firstDifferentField(const KernelDescriptor &A,
                                const KernelDescriptor &B) {
  if (A.GroupSegmentFixedSize != B.GroupSegmentFixedSize)
    return "group_segment_fixed_size";
  if (A.PrivateSegmentFixedSize != B.PrivateSegmentFixedSize)
    return "private_segment_fixed_size";
  if (A.KernargSize != B.KernargSize)
    return "kernarg_size";
  if (A.KernelCodeEntryByteOffset != B.KernelCodeEntryByteOffset)
    return "kernel_code_entry_byte_offset";
  if (A.ComputePgmRsrc3 != B.ComputePgmRsrc3)
    return "compute_pgm_rsrc3";
  if (A.ComputePgmRsrc1 != B.ComputePgmRsrc1)
    return "compute_pgm_rsrc1";
  if (A.ComputePgmRsrc2 != B.ComputePgmRsrc2)
    return "compute_pgm_rsrc2";
  if (A.KernelCodeProperties != B.KernelCodeProperties)
    return "kernel_code_properties";
  if (A.KernargPreload != B.KernargPreload)
    return "kernarg_preload";
  if (A != B)
    return "a reserved field";
  return "";
}

/// Checks the image of \p Rec: its segments hold the bytes they held.
void checkImage(const Object &Obj, const SwapRecord &Rec, VerifyProblems &P) {
  for (const SwapSegment &S : Rec.Image) {
    std::string Where = "image of the replacement '" + Rec.From +
                        "': segment at " + hex(S.Addr);
    if (S.MemSize < S.FileSize || !Obj.loadSegmentFor(S.Addr, S.MemSize)) {
      P.push_back(Where + " (memory size " + hex(S.MemSize) +
                  ") is not inside a loaded segment");
      continue;
    }
    if (!S.FileSize)
      continue;
    Expected<ArrayRef<uint8_t>> B = Obj.bytesAt(S.Addr, S.FileSize);
    if (!B) {
      P.push_back(Where + ": " + toString(B.takeError()));
      continue;
    }
    std::string Now = swapDigestHex(Rec.Algorithm, *B);
    if (Now != S.Digest)
      P.push_back(Where + ": its " + hex(S.FileSize) +
                  " bytes changed since the swap (" +
                  swapDigestName(Rec.Algorithm).str() + " " + Now +
                  ", recorded " + S.Digest + ")");
  }
}

/// Whether \p Addr lies in the file part of a segment of \p Rec's image.
bool inImage(const SwapRecord &Rec, uint64_t Addr) {
  for (const SwapSegment &S : Rec.Image)
    if (Addr >= S.Addr && Addr - S.Addr < S.FileSize)
      return true;
  return false;
}

/// Checks the descriptor and metadata of the swapped kernel \p K against
/// the replacement's descriptor in the image.
void checkKernel(const Object &Obj, const TargetInfo &T, const KernelInfo &K,
                 const SwapRecord &Rec, VerifyProblems &P) {
  const std::string Who = "swapped kernel '" + K.Name + "'";
  Expected<ArrayRef<uint8_t>> B = Obj.bytesAt(Rec.Descriptor, kd::Size);
  if (!B) {
    P.push_back(Who + ": the replacement's descriptor at " +
                hex(Rec.Descriptor) + ": " + toString(B.takeError()));
    return;
  }
  KernelDescriptor Repl = KernelDescriptor::read(*B);
  std::optional<uint64_t> ReplEntry = Repl.entryAddress(Rec.Descriptor);
  if (!ReplEntry || (*ReplEntry != Rec.Code && !inImage(Rec, *ReplEntry)))
    P.push_back(Who + ": the replacement's descriptor at " +
                hex(Rec.Descriptor) + " does not lead into its image");
  std::string Field = firstDifferentField(K.KD, swappedDescriptor(T, Repl, K));
  if (!Field.empty())
    P.push_back(Who + ": its descriptor at " + hex(K.KDAddr) +
                " differs from the replacement's at " + hex(Rec.Descriptor) +
                " in " + Field);
  if (!K.MD)
    return;
  for (const std::string &D : metadataDisagreements(*K.MD, K.KD))
    P.push_back(Who + ": " + D);
}

} // namespace

void hotswap::verifySwaps(const Object &Obj, const KernelsAnalysis::Result &R,
                          VerifyProblems &P) {
  Expected<std::vector<SwapRecord>> Recs = readSwapRecords(Obj);
  if (!Recs) {
    P.push_back(toString(Recs.takeError()));
    return;
  }
  StringMap<std::vector<Symbol>> SwapSyms;
  const SymbolTable *ST = Obj.symtab();
  if (ST)
    ST->forEach([&](const Symbol &S) {
      if (S.Type == ELF::STT_FUNC &&
          StringRef(S.Name).ends_with(SwapSymbolSuffix))
        SwapSyms[StringRef(S.Name).drop_back(SwapSymbolSuffix.size())]
            .push_back(S);
    });
  if (Recs->empty() && SwapSyms.empty())
    return;
  // An unreadable clone record is the clone check's to report.
  Expected<std::vector<CloneRecord>> CloneRecs = readCloneRecords(Obj);
  std::optional<std::vector<CloneRecord>> Clones;
  if (CloneRecs)
    Clones = std::move(*CloneRecs);
  else
    consumeError(CloneRecs.takeError());

  StringMap<const KernelInfo *> ByName;
  for (const KernelInfo &K : R.Kernels)
    ByName[K.Name] = &K;
  std::set<uint64_t> Images;
  for (const SwapRecord &Rec : *Recs) {
    if (!ByName.count(Rec.Kernel))
      P.push_back("section '" + SwapRecordSectionName.str() +
                  "' records a swap of kernel '" + Rec.Kernel +
                  "', which the object does not have");
    if (!Rec.Image.empty() && Images.insert(Rec.Image.front().Addr).second)
      checkImage(Obj, Rec, P);
  }
  for (const KernelInfo &K : R.Kernels) {
    const SwapRecord *Last = nullptr;
    for (const SwapRecord &Rec : *Recs)
      if (Rec.Kernel == K.Name)
        Last = &Rec;
    if (!Last)
      continue;
    const SwapRecord *Cur = currentSwap(*Recs, K);
    // A kernel may run a copy of its swapped code (clone-kernels,
    // patch-insns or instrument after swap-kernels): the clone check
    // proves the copy against the swapped code, and the descriptor is the
    // copying pass's (its entry, allocations it raised).
    bool RunsACopy = false;
    if (!Cur && Clones)
      if (const CloneRecord *C = currentClone(*Clones, K);
          C && C->Code == Last->Code) {
        Cur = Last;
        RunsACopy = true;
      }
    if (!Cur) {
      P.push_back("swapped kernel '" + K.Name + "' runs the code at " +
                  hex(K.CodeEntry) + ", not the code of its last swap at " +
                  hex(Last->Code) + " (from '" + Last->From + "')");
      continue;
    }
    if (!RunsACopy)
      checkKernel(Obj, R.Target, K, *Cur, P);
    if (!ST)
      continue;
    auto SI = SwapSyms.find(K.Name);
    if (SI == SwapSyms.end() || llvm::none_of(SI->second, [&](const Symbol &S) {
          return S.Value == Cur->Code;
        }))
      P.push_back("swapped kernel '" + K.Name + "': no symbol '" + K.Name +
                  SwapSymbolSuffix.str() + "' at its code " + hex(Cur->Code));
  }
  for (const auto &E : SwapSyms)
    for (const Symbol &S : E.second)
      if (llvm::none_of(*Recs, [&](const SwapRecord &Rec) {
            return Rec.Kernel == E.getKey() && Rec.Code == S.Value;
          }))
        P.push_back("symbol '" + S.Name.str() + "' at " + hex(S.Value) +
                    " names no swapped code of kernel '" + E.getKey().str() +
                    "'");
}
