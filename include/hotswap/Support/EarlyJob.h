//===- hotswap/Support/EarlyJob.h - Work started ahead ----------*- C++ -*-===//
//
// A part of a computation that does not depend on the rest, offered to a
// thread pool when it is known and taken back when its result is needed:
// whoever starts it first runs it, a pool thread or the one that waits for
// it. A busy pool never delays the caller, and a caller that is itself a
// pool thread never waits for a job nobody started (no deadlock when every
// thread of the pool is such a caller).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_SUPPORT_EARLYJOB_H
#define HOTSWAP_SUPPORT_EARLYJOB_H

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ThreadPool.h"

#include <atomic>
#include <future>
#include <optional>

namespace hotswap {

class EarlyJob {
public:
  /// Offers \p Job to \p Pool (when not null). \p Job must not touch what
  /// the caller changes until get() returns.
  EarlyJob(llvm::ThreadPoolInterface *Pool,
           llvm::unique_function<llvm::Error()> Job)
      : Job(std::move(Job)) {
    if (Pool)
      Started = Pool->async([this] {
        if (!Taken.exchange(true))
          Result.emplace(this->Job());
      });
  }
  EarlyJob(const EarlyJob &) = delete;
  EarlyJob &operator=(const EarlyJob &) = delete;
  /// Waits for a job a pool thread runs (get() may not have been called on
  /// an early return); its result is dropped.
  ~EarlyJob() {
    if (Started.valid())
      Started.wait();
    if (Result)
      llvm::consumeError(std::move(*Result));
  }

  /// The job's result: it runs here unless a pool thread started it (then
  /// this waits for it to end). Once only.
  llvm::Error get() {
    if (!Taken.exchange(true))
      return Job();
    Started.wait();
    llvm::Error E = std::move(*Result);
    Result.reset();
    return E;
  }

private:
  llvm::unique_function<llvm::Error()> Job;
  std::atomic<bool> Taken{false};
  std::optional<llvm::Error> Result;
  std::shared_future<void> Started;
};

} // namespace hotswap

#endif // HOTSWAP_SUPPORT_EARLYJOB_H
