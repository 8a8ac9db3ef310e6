//===- lib/Pipeline/BundleStream.cpp - A library's bundles written early --===//

#include "BundleStream.h"

#include "hotswap/Bundle/HostBinary.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;

BundleStream::BundleStream(std::vector<BundlePlan> &Plans, uint64_t SectionAt,
                           WriteAheadFn Write,
                           std::function<void(ArrayRef<uint8_t>)> Release)
    : Plans(Plans), SectionAt(SectionAt), Write(std::move(Write)),
      Release(std::move(Release)), Left(Plans.size(), 0), Sizes(Plans.size()),
      Offsets(Plans.size()), NotRestorable(Plans.size()) {
  for (size_t B = 0; B < Plans.size(); ++B)
    for (const auto &R : Plans[B].Runs) {
      BundleOf[R.get()] = B;
      Left[B] += !R->Err;
    }
}

void BundleStream::ended(const CodeObjectRun &Run) {
  std::unique_lock<std::mutex> G(Lock);
  --Left[BundleOf.lookup(&Run)];
  if (Writing)
    return; // the thread writing sees it when it looks again
  Writing = true;
  while (!Stopped && Settled < Plans.size() && Left[Settled] == 0) {
    const size_t B = Settled;
    G.unlock();
    const bool Done = settle(B);
    G.lock();
    if (Done)
      ++Settled;
    else
      Stopped = true;
  }
  Writing = false;
}

bool BundleStream::settle(size_t B) {
  BundlePlan &Plan = Plans[B];
  // (Each run ended: its fields are final.)
  if (llvm::any_of(Plan.Runs, [](const auto &R) { return bool(R->Err); }))
    return false; // decided with the others' reports, at the end
  Expected<std::optional<NewBundle>> N = buildBundle(Plan);
  if (!N) {
    Err = N.takeError();
    return false;
  }
  if (!*N)
    return true; // unchanged: nothing in the new section
  const uint64_t Off = bundle::HostBinary::nextBundleOffset(Placed);
  const uint64_t Size = (*N)->Size;
  if (Off < Placed || Off > UINT64_MAX - SectionAt ||
      Size > UINT64_MAX - SectionAt - Off)
    return false; // placeBundles says what is wrong
  OutputPieces Out;
  Out.append(std::move((*N)->Pieces), SectionAt + Off, uint64_t(0));
  if (!Write(std::move(Out)))
    return false; // (the output's commit fails, saying why)
  Sizes[B] = Size;
  Offsets[B] = Off;
  NotRestorable[B] = std::move((*N)->NotRestorable);
  Placed = Off + Size;
  // Written: what its pieces pointed into is no longer needed.
  for (auto &R : Plan.Runs) {
    R->Model.reset();
    R->ModelLayout.reset();
    R->Record.reset();
    if (Release && R->InputOffset)
      Release(R->Payload);
  }
  return true;
}
