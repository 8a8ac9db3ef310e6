//===- lib/Pipeline/InputDigest.cpp - An input's SHA-256, ahead -----------===//

#include "InputDigest.h"

#include "llvm/Support/ThreadPool.h"

#include <atomic>
#include <condition_variable>
#include <mutex>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;

namespace {
/// Below this a pool task costs more than it saves.
constexpr size_t AheadThreshold = 8u << 20;
/// Hashed, then released, this much at a time.
constexpr size_t Chunk = 4u << 20;
} // namespace

struct InputDigest::State {
  enum Phase { Waiting, Hashing, Done, Cancelled };

  ArrayRef<uint8_t> Input;
  std::function<void(ArrayRef<uint8_t>)> Release;
  std::atomic<bool> Cancel{false};
  std::mutex Lock;
  std::condition_variable Changed;
  Phase P = Waiting;
  Sha256::Digest Result{};

  /// Takes the work if nobody has; then hashes. False if it was taken.
  bool claim() {
    std::lock_guard<std::mutex> G(Lock);
    if (P != Waiting)
      return false;
    P = Hashing;
    return true;
  }

  void hash() {
    Sha256 H;
    bool Stopped = false;
    for (size_t Pos = 0; Pos < Input.size(); Pos += Chunk) {
      if (Cancel.load(std::memory_order_relaxed)) {
        Stopped = true;
        break;
      }
      ArrayRef<uint8_t> Part =
          Input.slice(Pos, std::min(Chunk, Input.size() - Pos));
      H.update(Part);
      if (Release)
        Release(Part);
    }
    std::lock_guard<std::mutex> G(Lock);
    if (Stopped) {
      P = Cancelled;
    } else {
      Result = H.final();
      P = Done;
    }
    Changed.notify_all();
  }
};

InputDigest::InputDigest(ArrayRef<uint8_t> Input, const PipelineOptions &Opts,
                         bool Release, bool Likely)
    : S(std::make_shared<State>()) {
  S->Input = Input;
  if (Release)
    S->Release = Opts.ReleaseInput;
  if (Likely && Opts.ThreadPool && Input.size() >= AheadThreshold)
    Opts.ThreadPool->async([St = S] {
      if (St->claim())
        St->hash();
    });
}

InputDigest::~InputDigest() {
  S->Cancel.store(true, std::memory_order_relaxed);
  std::unique_lock<std::mutex> G(S->Lock);
  if (S->P == State::Waiting)
    S->P = State::Cancelled; // the pool task, when it runs, finds it taken
  S->Changed.wait(G, [&] { return S->P != State::Hashing; });
}

Sha256::Digest InputDigest::get() {
  if (S->claim())
    S->hash();
  std::unique_lock<std::mutex> G(S->Lock);
  S->Changed.wait(G, [&] { return S->P != State::Hashing; });
  // Cancel is only set by the destructor: the hash ran to its end.
  return S->Result;
}
