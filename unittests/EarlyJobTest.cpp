//===- unittests/EarlyJobTest.cpp - Work started ahead --------------------===//
//
// EarlyJob runs its job exactly once: on the caller without a pool or when
// no pool thread took it yet, on a pool thread otherwise (then get() waits
// for it); errors come back from get(); a job left without get() is waited
// for and its error dropped; a pool whose only thread is the caller's never
// deadlocks.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Support/EarlyJob.h"
#include "hotswap/Support/Error.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

#include <atomic>
#include <future>
#include <thread>

using namespace llvm;
using namespace hotswap;

namespace {

TEST(EarlyJob, WithoutAPoolTheCallerRunsIt) {
  int Runs = 0;
  std::thread::id Where;
  EarlyJob J(nullptr, [&] {
    ++Runs;
    Where = std::this_thread::get_id();
    return Error::success();
  });
  EXPECT_EQ(Runs, 0); // (nothing before get())
  EXPECT_FALSE(bool(J.get()));
  EXPECT_EQ(Runs, 1);
  EXPECT_EQ(Where, std::this_thread::get_id());
}

TEST(EarlyJob, APoolThreadRunsItAndGetWaits) {
  DefaultThreadPool Pool(hardware_concurrency(2));
  std::promise<void> Entered, Release;
  std::shared_future<void> Go = Release.get_future().share();
  std::atomic<int> Runs{0};
  std::thread::id Where;
  EarlyJob J(&Pool, [&] {
    Where = std::this_thread::get_id();
    Entered.set_value();
    Go.wait();
    ++Runs;
    return makeError("from the pool");
  });
  Entered.get_future().wait(); // a pool thread took it
  std::thread Later([&] { Release.set_value(); });
  Error E = J.get(); // waits for the pool thread, does not run it again
  Later.join();
  EXPECT_EQ(toString(std::move(E)), "from the pool");
  EXPECT_EQ(Runs.load(), 1);
  EXPECT_NE(Where, std::this_thread::get_id());
}

TEST(EarlyJob, ABusyPoolDoesNotDelayTheCaller) {
  // The pool's one thread is held until after get(): the caller runs the
  // job itself, and the pool's later turn does nothing.
  DefaultThreadPool Pool(hardware_concurrency(1));
  std::promise<void> Release;
  std::shared_future<void> Go = Release.get_future().share();
  Pool.async([Go] { Go.wait(); });
  std::atomic<int> Runs{0};
  {
    EarlyJob J(&Pool, [&] {
      ++Runs;
      return Error::success();
    });
    EXPECT_FALSE(bool(J.get()));
    EXPECT_EQ(Runs.load(), 1);
    Release.set_value();
  } // (waits for the pool's turn)
  Pool.wait();
  EXPECT_EQ(Runs.load(), 1);
}

TEST(EarlyJob, WithoutGetTheJobIsWaitedForAndItsErrorDropped) {
  DefaultThreadPool Pool(hardware_concurrency(1));
  std::promise<void> Entered;
  std::atomic<bool> Ended{false};
  {
    EarlyJob J(&Pool, [&] {
      Entered.set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      Ended = true;
      return makeError("never asked for");
    });
    Entered.get_future().wait(); // running on the pool
  } // (an unchecked Error here would abort in a debug build of LLVM)
  EXPECT_TRUE(Ended.load()); // the destructor waited for it
}

TEST(EarlyJob, ACallerOnThePoolsOnlyThreadFinishes) {
  DefaultThreadPool Pool(hardware_concurrency(1));
  std::atomic<int> Runs{0};
  std::shared_future<void> Outer = Pool.async([&] {
    EarlyJob J(&Pool, [&] {
      ++Runs;
      return Error::success();
    });
    EXPECT_FALSE(bool(J.get())); // the queued copy cannot run before this
  });
  Outer.wait();
  Pool.wait();
  EXPECT_EQ(Runs.load(), 1);
}

} // namespace
