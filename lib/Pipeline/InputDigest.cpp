//===- lib/Pipeline/InputDigest.cpp - An input's SHA-256, ahead -----------===//
//
// A digest is a job that can be taken, put back and taken again: its state
// (the hash so far and how far it got) lives with it, and whoever holds it
// (the Hashing phase) hashes. Whoever hashes one digest takes another that
// is waiting along as a second lane (Sha256::updateBoth), so the input of a
// library and its code objects, or two files of one command, are hashed
// side by side; when its own is done it puts the other back for its owner
// or the next one to come, and sooner when the other's owner asks for it
// (get()), so that no owner waits for a thread that merely took its digest
// along.
//
//===----------------------------------------------------------------------===//

#include "InputDigest.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;

namespace {
/// Below this a pool task costs more than it saves.
constexpr size_t AheadThreshold = 8u << 20;
/// Hashed this much at a time: between two steps, a digest taken along is
/// given back to its owner who asks for it (~0.15 ms in two lanes), and
/// one that ended is replaced.
constexpr size_t Step = 256u << 10;
/// Released behind the hash this much at a time.
constexpr size_t Chunk = 4u << 20;
constexpr size_t PageSize = 4096;
} // namespace

struct hotswap::pipeline::DigestJob {
  enum Phase { Waiting, Hashing, Done, Cancelled };

  ArrayRef<uint8_t> Input;
  std::function<void(ArrayRef<uint8_t>)> Release;
  std::atomic<bool> Cancel{false};
  /// Its owner asked for it (get()) while another thread had it along: it
  /// is given back at that thread's next step, and nobody takes it along
  /// again (the owner hashes it, rather than wait).
  std::atomic<bool> Asked{false};
  std::mutex Lock;
  std::condition_variable Changed;
  Phase P = Waiting;
  // Touched only by the thread that holds the digest (P == Hashing); the
  // lock hands them over.
  Sha256 H;
  size_t Pos = 0, Released = 0;
  Sha256::Digest Result{};

  /// Takes the digest if it is waiting. False if someone holds it or it
  /// ended.
  bool claim() {
    std::lock_guard<std::mutex> G(Lock);
    if (P != Waiting)
      return false;
    P = Hashing;
    return true;
  }

  /// The next piece to hash (empty at the end).
  ArrayRef<uint8_t> next() const {
    return Input.slice(Pos, std::min(Step, Input.size() - Pos));
  }

  /// After hashing \p Part (next()): what was hashed goes a Chunk at a
  /// time, the rest at the end.
  void advance(ArrayRef<uint8_t> Part) {
    Pos += Part.size();
    if (!Release)
      return;
    const size_t To = Pos == Input.size() ? Pos : alignDown(Pos, Chunk);
    if (To > Released) {
      Release(Input.slice(Released, To - Released));
      Released = To;
    }
  }

  /// Gives the digest up: finished, stopped or put back for later.
  void leave() {
    std::lock_guard<std::mutex> G(Lock);
    if (Cancel.load(std::memory_order_relaxed)) {
      P = Cancelled;
    } else if (Pos == Input.size()) {
      Result = H.final();
      P = Done;
    } else {
      P = Waiting;
    }
    Changed.notify_all();
  }

  bool ended() const {
    return Cancel.load(std::memory_order_relaxed) || Pos == Input.size();
  }
};

namespace {

/// The digests that may be asked for and are not done: those a hashing
/// thread may take along. Process-wide, like the CPU it shares out.
class WaitingJobs {
public:
  static WaitingJobs &get() {
    static WaitingJobs W;
    return W;
  }

  void add(const std::shared_ptr<DigestJob> &S) {
    std::lock_guard<std::mutex> G(Lock);
    List.push_back(S);
  }

  void remove(const DigestJob *S) {
    std::lock_guard<std::mutex> G(Lock);
    llvm::erase_if(List, [&](const auto &E) { return E.get() == S; });
  }

  /// Takes a digest other than \p Self that waits, if there is one.
  std::shared_ptr<DigestJob> take(const DigestJob *Self) {
    std::lock_guard<std::mutex> G(Lock);
    for (const std::shared_ptr<DigestJob> &S : List)
      if (S.get() != Self && !S->Asked.load(std::memory_order_relaxed) &&
          S->claim())
        return S;
    return nullptr;
  }

private:
  std::mutex Lock;
  std::vector<std::shared_ptr<DigestJob>> List;
};

/// Hashes \p Own, which this thread holds, to its end, with a digest that
/// waits beside it whenever there is one.
void drive(DigestJob &Own) {
  std::shared_ptr<DigestJob> Other;
  while (!Own.ended()) {
    if (Other && Other->ended()) {
      Other->leave();
      WaitingJobs::get().remove(Other.get());
      Other.reset();
    } else if (Other && Other->Asked.load(std::memory_order_relaxed)) {
      Other->leave(); // back to its owner
      Other.reset();
    }
    if (!Other)
      Other = WaitingJobs::get().take(&Own);
    ArrayRef<uint8_t> Mine = Own.next();
    if (Other) {
      // Pieces of one length (in whole pages, which is what is released
      // behind the hash): the shorter one ends its step, and the next step
      // pairs the rest of the longer with another digest.
      ArrayRef<uint8_t> Theirs = Other->next();
      if (Theirs.size() < Mine.size())
        Mine = Mine.take_front(alignTo(Theirs.size(), PageSize));
      else
        Theirs = Theirs.take_front(alignTo(Mine.size(), PageSize));
      Sha256::updateBoth(Own.H, Mine, Other->H, Theirs);
      Other->advance(Theirs);
    } else {
      Own.H.update(Mine);
    }
    Own.advance(Mine);
  }
  if (Other) {
    const bool Ends = Other->ended();
    Other->leave(); // back to waiting, unless it ended too
    if (Ends)
      WaitingJobs::get().remove(Other.get());
  }
  Own.leave();
  WaitingJobs::get().remove(&Own);
}

} // namespace

InputDigest::InputDigest(ArrayRef<uint8_t> Input, const PipelineOptions &Opts,
                         bool Release, Ahead When)
    : S(std::make_shared<DigestJob>()) {
  S->Input = Input;
  if (Release)
    S->Release = Opts.ReleaseInput;
  if (When == Ahead::No)
    return; // hashed by get() alone, if ever
  WaitingJobs::get().add(S);
  if (When == Ahead::Pool && Opts.ThreadPool && Input.size() >= AheadThreshold)
    Opts.ThreadPool->async([St = S] {
      if (St->claim())
        drive(*St);
    });
}

InputDigest::~InputDigest() {
  S->Cancel.store(true, std::memory_order_relaxed);
  WaitingJobs::get().remove(S.get());
  std::unique_lock<std::mutex> G(S->Lock);
  if (S->P == DigestJob::Waiting)
    S->P = DigestJob::Cancelled; // nobody takes it now
  S->Changed.wait(G, [&] { return S->P != DigestJob::Hashing; });
}

Sha256::Digest InputDigest::get() {
  for (;;) {
    if (S->claim())
      drive(*S);
    std::unique_lock<std::mutex> G(S->Lock);
    if (S->P == DigestJob::Hashing)
      S->Asked.store(true, std::memory_order_relaxed);
    S->Changed.wait(G, [&] { return S->P != DigestJob::Hashing; });
    // Cancel is only set by the destructor: it ran to its end, or whoever
    // took it along gave it back (then this thread goes on with it).
    if (S->P == DigestJob::Done)
      return S->Result;
  }
}
