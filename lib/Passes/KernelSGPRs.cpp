//===- lib/Passes/KernelSGPRs.cpp - Exact SGPR usage from the code --------===//
//
// KernelsAnalysis::Result::refineSGPRs: the SGPRs a gfx8-9 kernel names,
// from a scan of its function with the MC disassembler (of all executable
// code when the function calls, or when it has no function symbol). Scans
// are cached per run (sgpr-scans), so each code range is disassembled once
// whoever asks; ranges not yet scanned are split among the analysis
// manager's workers, each with an MC state of its own.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/Kernels.h"

#include "hotswap/AMDGPU/SGPRScan.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Passes/TargetAnalysis.h"

#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <atomic>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace {
using Range = std::pair<uint64_t, uint64_t>; // address, size

/// Scans \p Ranges of \p Obj's code. With a thread pool, contiguous groups
/// of ranges of about equal size are taken in turn by the workers, each with
/// its own TargetMC and SGPRScanner (whose memo of decoded encodings lasts
/// for all the groups it scans); results are stored by index, so they do
/// not depend on how the work was split.
Expected<std::vector<SGPRScan>> scanRanges(const Object &Obj,
                                           const TargetInfo &TI, TargetMC &MC,
                                           ArrayRef<Range> Ranges,
                                           ThreadPoolInterface *Pool) {
  std::vector<std::optional<Expected<SGPRScan>>> Out(Ranges.size());
  auto scanOne = [&](SGPRScanner &Sc, size_t I) {
    Expected<ArrayRef<uint8_t>> Code =
        Obj.bytesAt(Ranges[I].first, Ranges[I].second);
    if (!Code) {
      Out[I].emplace(Code.takeError());
      return;
    }
    Out[I].emplace(Sc.scan(*Code, Ranges[I].first));
  };

  unsigned Workers = Pool ? Pool->getMaxConcurrency() : 1;
  uint64_t Total = 0;
  for (const Range &R : Ranges)
    Total += R.second;
  // Below ~64 KiB of code per worker, setting up MC states costs more
  // than it saves.
  if (Workers <= 1 || Ranges.size() < 2 || Total < 64 * 1024 * 2) {
    SGPRScanner Sc(TI, MC);
    for (size_t I = 0; I < Ranges.size(); ++I)
      scanOne(Sc, I);
  } else {
    // Groups of consecutive ranges, about Total / (4 * Workers) bytes each.
    uint64_t Target = std::max<uint64_t>(Total / (4 * Workers), 1);
    std::vector<std::pair<size_t, size_t>> Groups; // [begin, end)
    size_t Begin = 0;
    uint64_t Bytes = 0;
    for (size_t I = 0; I < Ranges.size(); ++I) {
      Bytes += Ranges[I].second;
      if (Bytes >= Target || I + 1 == Ranges.size()) {
        Groups.push_back({Begin, I + 1});
        Begin = I + 1;
        Bytes = 0;
      }
    }
    unsigned Tasks = std::min<size_t>(Workers, Groups.size());
    std::vector<Error> TaskErrors;
    TaskErrors.reserve(Tasks);
    for (unsigned T = 0; T < Tasks; ++T)
      TaskErrors.push_back(Error::success());
    std::atomic<size_t> NextGroup{0};
    ThreadPoolTaskGroup TG(*Pool);
    for (unsigned T = 0; T < Tasks; ++T)
      TG.async([&, T] {
        Expected<std::unique_ptr<TargetMC>> M =
            TargetMC::create(TI.MCPU, TI.Features);
        if (!M) {
          TaskErrors[T] = M.takeError();
          return;
        }
        SGPRScanner Sc(TI, **M);
        for (size_t G; (G = NextGroup.fetch_add(1)) < Groups.size();)
          for (size_t I = Groups[G].first; I < Groups[G].second; ++I)
            scanOne(Sc, I);
      });
    TG.wait();
    Error First = Error::success();
    for (Error &E : TaskErrors)
      First = joinErrors(std::move(First), std::move(E));
    if (First)
      return std::move(First);
  }

  std::vector<SGPRScan> Result;
  Result.reserve(Ranges.size());
  for (std::optional<Expected<SGPRScan>> &R : Out) {
    if (!*R)
      return R->takeError();
    Result.push_back(**R);
  }
  return Result;
}

/// Whether a scan bounds the SGPRs of the code it covers.
bool exact(const SGPRScan &S) { return !S.IndexesSGPRs && !S.UndecodedWords; }
} // namespace

Error KernelsAnalysis::Result::refineAllSGPRs(Object &Obj, AnalysisManager &AM,
                                              size_t *Scanned) {
  std::vector<size_t> All(Kernels.size());
  for (size_t I = 0; I < All.size(); ++I)
    All[I] = I;
  return refineSGPRs(Obj, AM, All, Scanned);
}

Error KernelsAnalysis::Result::refineSGPRs(Object &Obj, AnalysisManager &AM,
                                           ArrayRef<size_t> Indices,
                                           size_t *Scanned) {
  std::vector<size_t> Todo;
  for (size_t I : Indices)
    if (Kernels[I].canRefineSGPRs(Target))
      Todo.push_back(I);
  if (Scanned)
    *Scanned = Todo.size();
  if (Todo.empty())
    return Error::success();
  auto TA = AM.getResult<TargetAnalysis>(Obj);
  if (!TA)
    return TA.takeError();
  Expected<TargetMC &> MC = TA->mc();
  if (!MC)
    return MC.takeError();
  auto Cache = AM.getResult<SGPRScanAnalysis>(Obj);
  if (!Cache)
    return Cache.takeError();

  // The kernels' own functions first (once each, in address order). A
  // function symbol whose range is not readable code counts as absent.
  auto ownRange = [&](const KernelInfo &K) -> std::optional<Range> {
    if (!K.Function)
      return std::nullopt;
    Expected<ArrayRef<uint8_t>> Code =
        Obj.bytesAt(K.Function->first, K.Function->second);
    if (!Code) {
      consumeError(Code.takeError());
      return std::nullopt;
    }
    return *K.Function;
  };
  std::vector<Range> Need;
  for (size_t I : Todo)
    if (std::optional<Range> F = ownRange(Kernels[I]))
      if (!Cache->Ranges.count(*F))
        Need.push_back(*F);
  llvm::sort(Need);
  Need.erase(std::unique(Need.begin(), Need.end()), Need.end());
  Expected<std::vector<SGPRScan>> Scans =
      scanRanges(Obj, Target, *MC, Need, AM.ThreadPool);
  if (!Scans)
    return Scans.takeError();
  for (size_t I = 0; I < Need.size(); ++I)
    Cache->Ranges[Need[I]] = (*Scans)[I];

  // A kernel without a function symbol, or one that calls, runs code
  // elsewhere with the same SGPRs: bound it by all the code.
  auto wholeCode = [&]() -> Expected<std::optional<unsigned>> {
    if (Cache->WholeCode)
      return *Cache->WholeCode;
    std::vector<Range> Code;
    for (const auto &S : Obj.sections())
      if (S->isExec() && !S->isNoBits() && S->Name != PoolSectionName &&
          S->size())
        Code.push_back({S->Addr, S->size()});
    Expected<std::vector<SGPRScan>> All =
        scanRanges(Obj, Target, *MC, Code, AM.ThreadPool);
    if (!All)
      return All.takeError();
    std::optional<unsigned> Max(0u);
    for (const SGPRScan &S : *All) {
      // Words that are not instructions (or s_movrel's M0 indexing) leave
      // the count unknown: the metadata stays the bound.
      if (!exact(S)) {
        Max.reset();
        break;
      }
      *Max = std::max(*Max, S.NumSGPRs);
    }
    Cache->WholeCode = Max;
    return Max;
  };

  for (size_t I : Todo) {
    KernelInfo &K = Kernels[I];
    std::optional<unsigned> Count;
    std::optional<Range> F = ownRange(K);
    const SGPRScan *Own = F ? &Cache->Ranges.find(*F)->second : nullptr;
    if (Own && !exact(*Own)) {
      Count.reset();
    } else if (Own && !Own->HasCalls) {
      Count = Own->NumSGPRs;
    } else {
      Expected<std::optional<unsigned>> W = wholeCode();
      if (!W)
        return W.takeError();
      Count = *W;
    }
    K.ScannedSGPRs = Count;
    K.deriveSGPRUse(Target);
  }
  return Error::success();
}
