//===- unittests/ConcurrencyTest.cpp - Runs at once write the same bytes --===//
//
// The threading contract of hotswap/Hotswap.h and hotswap-c.h: any number of
// runs at once, on any threads, of one target or of several, with or without
// a shared PipelineOptions::ThreadPool, each write exactly the bytes of the
// same run made alone.
//
// Inputs are real code objects (Inputs/concurrency-*.yaml: clang-built from
// Inputs/concurrency.hip by Inputs/gen-concurrency-inputs.sh, kept as
// obj2yaml text and compiled in), built in memory with yaml2obj. Every input
// is first run serially; that output is the reference for every concurrent
// run. utils/check.sh --tsan runs these tests under ThreadSanitizer.
//
//===----------------------------------------------------------------------===//

#include "hotswap-c.h"

#include "hotswap/Hotswap.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include "TestUtil.h"

#include <atomic>
#include <condition_variable>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>

using namespace llvm;
using namespace hotswap;

namespace {

using unittest::embeddedInput;
using unittest::yamlToBytes;

/// Long-form stubs: every kernel gets a scratch pair (from its descriptor),
/// and verify decodes and emulates every stub with the run's MC state.
constexpr const char *LongForm =
    "synth-trampolines<form=long>,patch-descriptors,stub-syms,verify";

struct Case {
  const char *Input;
  const char *Pipeline;
};

const Case Cases[] = {
    {"concurrency-gfx803.yaml", LongForm},
    {"concurrency-gfx900.yaml", LongForm},
    {"concurrency-gfx1030.yaml", "trampoline,stub-syms,verify"},
    {"concurrency-gfx1100.yaml", LongForm},
    {"concurrency-gfx1201.yaml", "trampoline,stub-syms,verify"},
    {"concurrency-gfx1250.yaml",
     "synth-trampolines<prologue=gfx1250-vmem>,patch-descriptors,stub-syms,"
     "verify"},
};
constexpr size_t NumCases = std::size(Cases);
/// gfx900: long-form stubs on the largest input (~144 KiB of code).
constexpr size_t LongFormCase = 1;

/// Threads that run pipelines at once (more than this machine's cores, so
/// that runs interleave everywhere).
constexpr unsigned NumThreads = 8;

/// An input and the output of its pipeline run alone.
struct Prepared {
  std::string Name;
  std::string Pipeline;
  std::vector<char> Object;
  std::string Expected;
};

std::vector<Prepared> prepare() {
  std::vector<Prepared> All;
  for (const Case &C : Cases) {
    Prepared P;
    P.Name = C.Input;
    P.Pipeline = C.Pipeline;
    std::vector<uint8_t> Object = yamlToBytes(embeddedInput(C.Input));
    if (Object.empty())
      return {};
    P.Object.assign(Object.begin(), Object.end());
    auto Out = runPipeline(
        MemoryBufferRef(StringRef(P.Object.data(), P.Object.size()), C.Input),
        C.Pipeline);
    if (!Out) {
      ADD_FAILURE() << C.Input << ": " << toString(Out.takeError());
      return {};
    }
    P.Expected = (*Out)->getBuffer().str();
    All.push_back(std::move(P));
  }
  return All;
}

/// The objects of Cases and their serial outputs, made once per process;
/// empty (and a test failure) when anything went wrong.
const std::vector<Prepared> &prepared() {
  static const std::vector<Prepared> All = prepare();
  return All;
}

MemoryBufferRef bufferOf(const Prepared &P) {
  return MemoryBufferRef(StringRef(P.Object.data(), P.Object.size()), P.Name);
}

/// Where \p Got differs from \p Want, or "" when they are equal.
std::string difference(StringRef Want, StringRef Got) {
  if (Want == Got)
    return "";
  size_t At = 0;
  while (At < Want.size() && At < Got.size() && Want[At] == Got[At])
    ++At;
  return "output differs from the serial run's at offset " +
         std::to_string(At) + " (size " + std::to_string(Got.size()) +
         ", expected " + std::to_string(Want.size()) + ")";
}

/// One run through hotswap::runPipeline; "" when it wrote the expected bytes.
std::string runCxx(const Prepared &P, ThreadPoolInterface *Pool) {
  PipelineOptions Opts;
  Opts.ThreadPool = Pool;
  auto Out = runPipeline(bufferOf(P), P.Pipeline, Opts);
  if (!Out)
    return toString(Out.takeError());
  return difference(P.Expected, (*Out)->getBuffer());
}

/// One run through the C API; "" when it wrote the expected bytes.
std::string runC(const Prepared &P) {
  hotswap_options_t Opts = hotswap_options_create();
  hotswap_result_t R = hotswap_run_pipeline(
      Opts, P.Object.data(), P.Object.size(), P.Pipeline.c_str());
  std::string Problem;
  if (!R) {
    Problem = "hotswap_run_pipeline returned NULL";
  } else if (!hotswap_result_succeeded(R)) {
    Problem = hotswap_result_get_error(R);
  } else {
    size_t Size = 0;
    const void *Data = hotswap_result_get_output(R, &Size);
    Problem = difference(P.Expected,
                         StringRef(static_cast<const char *>(Data), Size));
  }
  hotswap_result_destroy(R);
  hotswap_options_destroy(Opts);
  return Problem;
}

/// Runs \p Body(Thread, Iteration) for \p Iterations iterations on each of
/// \p Threads threads, released together; returns what the calls reported.
std::vector<std::string>
runOnThreads(unsigned Threads, unsigned Iterations,
             function_ref<std::string(unsigned, unsigned)> Body) {
  std::mutex Lock;
  std::condition_variable Go;
  bool Started = false;
  std::vector<std::string> Problems;
  std::vector<std::thread> Workers;
  for (unsigned T = 0; T < Threads; ++T)
    Workers.emplace_back([&, T] {
      {
        std::unique_lock<std::mutex> G(Lock);
        Go.wait(G, [&] { return Started; });
      }
      for (unsigned I = 0; I < Iterations; ++I) {
        std::string Problem = Body(T, I);
        if (!Problem.empty()) {
          std::lock_guard<std::mutex> G(Lock);
          Problems.push_back("thread " + std::to_string(T) + ", run " +
                             std::to_string(I) + ": " + Problem);
        }
      }
    });
  {
    std::lock_guard<std::mutex> G(Lock);
    Started = true;
  }
  Go.notify_all();
  for (std::thread &W : Workers)
    W.join();
  return Problems;
}

std::string joined(const std::vector<std::string> &Lines) {
  std::string S;
  for (const std::string &L : Lines)
    S += L + "\n";
  return S;
}

/// A DefaultThreadPool that counts the tasks it is given, to show that a run
/// used it.
class CountingThreadPool final : public ThreadPoolInterface {
public:
  explicit CountingThreadPool(unsigned Workers)
      : Inner(hardware_concurrency(Workers)) {}
  ~CountingThreadPool() override { Inner.wait(); }

  void wait() override { Inner.wait(); }
  void wait(ThreadPoolTaskGroup &Group) override { Inner.wait(Group); }
  unsigned getMaxConcurrency() const override {
    return Inner.getMaxConcurrency();
  }
  unsigned tasks() const { return Tasks.load(); }

private:
  void asyncEnqueue(unique_function<void()> Task,
                    ThreadPoolTaskGroup *Group) override {
    ++Tasks;
    // The inner pool only uses the group as a tag for wait(Group).
    if (Group)
      Inner.async(*Group, std::move(Task));
    else
      Inner.async(std::move(Task));
  }

  DefaultThreadPool Inner;
  std::atomic<unsigned> Tasks{0};
};

/// How the concurrent tests run a pipeline.
enum class Api { Cxx, C, CxxSharedPool };

std::string apiName(const testing::TestParamInfo<Api> &Info) {
  switch (Info.param) {
  case Api::Cxx:
    return "RunPipeline";
  case Api::C:
    return "CAPI";
  case Api::CxxSharedPool:
    return "RunPipelineSharedPool";
  }
  return "Unknown";
}

class ConcurrentRuns : public testing::TestWithParam<Api> {
protected:
  void SetUp() override {
    ASSERT_EQ(prepared().size(), NumCases);
    // One pool shared by every run of the test (a bare code object's run
    // gives it no work: ThreadPoolDoesNotChangeOutput).
    if (GetParam() == Api::CxxSharedPool)
      Pool = std::make_unique<DefaultThreadPool>(hardware_concurrency(4));
  }

  std::string run(const Prepared &P) {
    switch (GetParam()) {
    case Api::Cxx:
      return runCxx(P, nullptr);
    case Api::C:
      return runC(P);
    case Api::CxxSharedPool:
      return runCxx(P, Pool.get());
    }
    return "unknown API";
  }

  std::unique_ptr<DefaultThreadPool> Pool;
};

} // namespace

// The inputs do what the tests rely on: ten kernels each, and every pipeline
// changes its input (each run writes stubs, which a wrong byte anywhere in a
// stub or descriptor would change).
TEST(ConcurrencyInputs, EveryPipelineRewritesTenKernels) {
  const std::vector<Prepared> &All = prepared();
  ASSERT_EQ(All.size(), NumCases);
  for (const Prepared &P : All) {
    SCOPED_TRACE(P.Name);
    EXPECT_NE(StringRef(P.Object.data(), P.Object.size()), P.Expected);
    Expected<AnalyzedObject> A = analyzeKernels(bufferOf(P));
    ASSERT_TRUE(static_cast<bool>(A)) << toString(A.takeError());
    EXPECT_EQ(A->Kernels.Kernels.size(), 10u);
    Expected<AnalyzedObject> Out =
        analyzeKernels(MemoryBufferRef(P.Expected, P.Name));
    ASSERT_TRUE(static_cast<bool>(Out)) << toString(Out.takeError());
    for (const KernelInfo &K : Out->Kernels.Kernels)
      EXPECT_TRUE(K.hasStub()) << K.Name;
  }
}

// Runs alone are repeatable: the reference itself is deterministic.
TEST(ConcurrencyInputs, SerialRunsRepeat) {
  const std::vector<Prepared> &All = prepared();
  ASSERT_EQ(All.size(), NumCases);
  for (const Prepared &P : All)
    EXPECT_EQ(runCxx(P, nullptr), "") << P.Name;
}

// A thread pool never changes the bytes: pools of 1 (everything on the
// calling thread), 2, 3 and 8 workers all give the output of a run without
// one. (A bare code object's rewrite gives the pool no work: nothing in it
// is split among workers since scratch pairs come from the descriptors.)
TEST(ConcurrencyInputs, ThreadPoolDoesNotChangeOutput) {
  const std::vector<Prepared> &All = prepared();
  ASSERT_EQ(All.size(), NumCases);
  for (unsigned Workers : {1u, 2u, 3u, 8u}) {
    for (size_t I = 0; I < NumCases; ++I) {
      CountingThreadPool Pool(Workers);
      EXPECT_EQ(runCxx(All[I], &Pool), "")
          << All[I].Name << " with " << Workers << " workers";
      EXPECT_EQ(Pool.tasks(), 0u) << All[I].Name;
    }
  }
}

// verify-code spreads a code object's functions over the pool's workers,
// each with its own LLVM MC state: what it prints is what a run without a
// pool prints (under ThreadSanitizer too: check.sh --tsan).
TEST(ConcurrencyInputs, VerifyCodeSpreadsFunctionsOverThePool) {
  const std::vector<Prepared> &All = prepared();
  ASSERT_EQ(All.size(), NumCases);
  for (const Prepared &P : All) {
    auto Printed = [&](ThreadPoolInterface *Pool) {
      std::string S;
      raw_string_ostream OS(S);
      PipelineOptions Opts;
      Opts.ThreadPool = Pool;
      Opts.PrintOut = &OS;
      auto Out = runPipeline(bufferOf(P), "verify-code", Opts);
      if (!Out)
        return toString(Out.takeError());
      return S;
    };
    std::string Serial = Printed(nullptr);
    EXPECT_NE(Serial.find("verify-code: "), std::string::npos) << Serial;
    for (unsigned Workers : {2u, 3u}) {
      CountingThreadPool Pool(Workers);
      EXPECT_EQ(Printed(&Pool), Serial) << P.Name << ", " << Workers;
      EXPECT_GT(Pool.tasks(), 0u) << P.Name;
    }
  }
}

// instrument (and patch-insns) plan a code object's functions on the
// pool's workers, each with its own LLVM MC state: the output is the bytes
// of a run without a pool (under ThreadSanitizer too: check.sh --tsan).
TEST(ConcurrencyInputs, SitePlanningSpreadsFunctionsOverThePool) {
  const std::vector<Prepared> &All = prepared();
  ASSERT_EQ(All.size(), NumCases);
  for (const Prepared &P : All) {
    for (const char *Pipeline :
         {"instrument,verify", "instrument<counters=edge;base=none>"}) {
      auto Output = [&](ThreadPoolInterface *Pool) -> std::string {
        std::string S;
        raw_string_ostream OS(S);
        PipelineOptions Opts;
        Opts.ThreadPool = Pool;
        Opts.PrintOut = &OS;
        auto Out = runPipeline(bufferOf(P), Pipeline, Opts);
        if (!Out)
          return "error: " + toString(Out.takeError());
        return S + (*Out)->getBuffer().str();
      };
      std::string Serial = Output(nullptr);
      ASSERT_EQ(StringRef(Serial).find("error: "), StringRef::npos)
          << P.Name << ", " << Pipeline << ": " << Serial;
      for (unsigned Workers : {2u, 3u}) {
        CountingThreadPool Pool(Workers);
        EXPECT_TRUE(Output(&Pool) == Serial)
            << P.Name << ", " << Pipeline << ", " << Workers << " workers";
        EXPECT_GT(Pool.tasks(), 0u) << P.Name << ", " << Pipeline;
      }
    }
  }
}

// instrument plans, copies and proves a batch of functions at a time,
// handing each function's graph from its planner to its copy: a batch per
// function gives the bytes of one batch for all, with or without a pool.
TEST(ConcurrencyInputs, InstrumentBatchesGiveTheBytesOfOne) {
  const std::vector<Prepared> &All = prepared();
  ASSERT_EQ(All.size(), NumCases);
  for (const Prepared &P : All) {
    for (const char *Params : {"", "counters=edge;", "base=none;"}) {
      auto Output = [&](StringRef Batch, ThreadPoolInterface *Pool) {
        std::string S;
        raw_string_ostream OS(S);
        PipelineOptions Opts;
        Opts.ThreadPool = Pool;
        Opts.PrintOut = &OS;
        std::string Pipeline =
            ("instrument<" + Twine(Params) + Batch + ">,verify,print<counters>")
                .str();
        auto Out = runPipeline(bufferOf(P), Pipeline, Opts);
        if (!Out)
          return "error: " + toString(Out.takeError());
        return S + (*Out)->getBuffer().str();
      };
      const std::string One = Output("batch=1000000000", nullptr);
      ASSERT_EQ(StringRef(One).find("error: "), StringRef::npos)
          << P.Name << ", " << Params << ": " << One;
      EXPECT_TRUE(Output("batch=1", nullptr) == One)
          << P.Name << ", " << Params;
      CountingThreadPool Pool(2);
      EXPECT_TRUE(Output("batch=1", &Pool) == One) << P.Name << ", " << Params;
      EXPECT_TRUE(Output("batch=300", &Pool) == One)
          << P.Name << ", " << Params;
    }
  }
}

/// concurrency-gfx900 with a 9 MiB non-loaded section: large enough for
/// its SHA-256 (the provenance record's) to be computed on the pool while
/// the passes run, and written after the input's bytes.
std::vector<char> largeObject() {
  std::string YAML = embeddedInput("concurrency-gfx900.yaml").str();
  const size_t At = YAML.find("\nSymbols:");
  if (At == std::string::npos)
    return {};
  YAML.insert(At + 1, "  - Name:            .hotswap.test.pad\n"
                      "    Type:            SHT_PROGBITS\n"
                      "    Size:            0x900000\n");
  std::vector<uint8_t> B = yamlToBytes(YAML);
  return std::vector<char>(B.begin(), B.end());
}

// With a pool, the digest of a large input is a pool task; the output is
// the same bytes, and restore gives back the input (the digest is right).
// Several runs at once share the pool (ThreadSanitizer sees the hand-off).
TEST(ConcurrencyInputs, LargeInputsAreHashedOnThePool) {
  const std::vector<char> Object = largeObject();
  ASSERT_GT(Object.size(), 9u << 20);
  const MemoryBufferRef In(StringRef(Object.data(), Object.size()), "large");
  auto Serial = runPipeline(In, "trampoline,stub-syms");
  ASSERT_TRUE(bool(Serial)) << toString(Serial.takeError());
  const std::string Want = (*Serial)->getBuffer().str();
  auto Back = runPipeline((*Serial)->getMemBufferRef(), "restore");
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_TRUE((*Back)->getBuffer() == In.getBuffer());

  CountingThreadPool Pool(2);
  std::vector<std::string> Problems =
      runOnThreads(4, 2, [&](unsigned, unsigned) -> std::string {
        PipelineOptions Opts;
        Opts.ThreadPool = &Pool;
        auto Out = runPipeline(In, "trampoline,stub-syms", Opts);
        if (!Out)
          return toString(Out.takeError());
        return difference(Want, (*Out)->getBuffer());
      });
  EXPECT_TRUE(Problems.empty()) << joined(Problems);
  EXPECT_EQ(Pool.tasks(), 8u); // one digest per run
}

// Digests hashed side by side: whoever hashes one takes a waiting one along
// and, when its own is done, hands the other back part-way to be finished
// by its owner or taken along again. Runs of the large object (its digest
// on the pool, three 4 MiB steps) and of the small ones (hashed when their
// record asks), all at once: every output is the serial run's bytes, its
// record's digest included, and restore gives back each input (restore
// checks the digest).
TEST(ConcurrencyInputs, DigestsTakenAlongAreHandedBackWhole) {
  const std::vector<Prepared> &All = prepared();
  ASSERT_EQ(All.size(), NumCases);
  const std::vector<char> Large = largeObject();
  ASSERT_GT(Large.size(), 9u << 20);
  const MemoryBufferRef LargeIn(StringRef(Large.data(), Large.size()), "large");
  auto Serial = runPipeline(LargeIn, "trampoline,stub-syms");
  ASSERT_TRUE(bool(Serial)) << toString(Serial.takeError());
  const std::string LargeWant = (*Serial)->getBuffer().str();

  CountingThreadPool Pool(2);
  std::vector<std::string> Problems =
      runOnThreads(4, NumCases, [&](unsigned T, unsigned I) -> std::string {
        PipelineOptions Opts;
        Opts.ThreadPool = &Pool;
        const bool IsLarge = T == 0;
        const Prepared &P = All[(T + I) % NumCases];
        const MemoryBufferRef In =
            IsLarge ? LargeIn
                    : MemoryBufferRef(
                          StringRef(P.Object.data(), P.Object.size()), P.Name);
        auto Out = runPipeline(
            In, IsLarge ? "trampoline,stub-syms" : P.Pipeline, Opts);
        if (!Out)
          return toString(Out.takeError());
        std::string Problem =
            difference(IsLarge ? LargeWant : P.Expected, (*Out)->getBuffer());
        if (!Problem.empty())
          return In.getBufferIdentifier().str() + ": " + Problem;
        auto Back = runPipeline((*Out)->getMemBufferRef(), "restore", Opts);
        if (!Back)
          return In.getBufferIdentifier().str() +
                 ": restore: " + toString(Back.takeError());
        if ((*Back)->getBuffer() != In.getBuffer())
          return In.getBufferIdentifier().str() + ": restore differs";
        return "";
      });
  EXPECT_TRUE(Problems.empty()) << joined(Problems);
}

// A file of 65 MiB with a pool: the output file is made while the passes
// run and the kernel copies the input into it meanwhile (a pool task beside
// the digest's); the bytes are those of a run in memory. A second run in
// place finds the record and changes nothing: no copy starts. A run that
// fails after the copy started leaves no file behind.
TEST(ConcurrencyInputs, LargeFilesAreCopiedAheadOnThePool) {
  std::string YAML = embeddedInput("concurrency-gfx900.yaml").str();
  const size_t At = YAML.find("\nSymbols:");
  ASSERT_NE(At, std::string::npos);
  YAML.insert(At + 1, "  - Name:            .hotswap.test.pad\n"
                      "    Type:            SHT_PROGBITS\n"
                      "    Size:            0x4100000\n");
  const std::vector<uint8_t> Object = yamlToBytes(YAML);
  ASSERT_GT(Object.size(), 65u << 20);
  const MemoryBufferRef In(
      StringRef(reinterpret_cast<const char *>(Object.data()), Object.size()),
      "large");
  auto Serial = runPipeline(In, "trampoline,stub-syms");
  ASSERT_TRUE(bool(Serial)) << toString(Serial.takeError());

  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("hotswap-ahead", Dir));
  auto Cleanup = make_scope_exit([&] { sys::fs::remove_directories(Dir); });
  const std::string InPath = (Dir + "/in.co").str(),
                    OutPath = (Dir + "/out.co").str();
  {
    std::error_code EC;
    raw_fd_ostream OS(InPath, EC);
    ASSERT_FALSE(EC);
    OS << In.getBuffer();
  }
  CountingThreadPool Pool(2);
  PipelineOptions Opts;
  Opts.ThreadPool = &Pool;
  ASSERT_FALSE(
      bool(runPipelineOnFile(InPath, OutPath, "trampoline,stub-syms", Opts)));
  EXPECT_EQ(Pool.tasks(), 2u); // the digest and the copy
  auto Out = MemoryBuffer::getFile(OutPath);
  ASSERT_TRUE(bool(Out));
  EXPECT_TRUE((*Out)->getBuffer() == (*Serial)->getBuffer());

  RunSummary S;
  ASSERT_FALSE(bool(
      runPipelineOnFile(OutPath, OutPath, "trampoline,stub-syms", Opts, &S)));
  EXPECT_FALSE(S.OutputChanged);
  EXPECT_EQ(Pool.tasks(), 2u); // (nothing to hash, nothing to copy)

  const std::string Failing =
      ("trampoline,swap-kernels<with=" + Dir + "/missing.co>").str();
  Error E =
      runPipelineOnFile(InPath, (Dir + "/failed.co").str(), Failing, Opts);
  EXPECT_TRUE(bool(E));
  consumeError(std::move(E));
  std::error_code EC;
  std::vector<std::string> Names;
  for (sys::fs::directory_iterator I(Dir, EC), End; I != End && !EC;
       I.increment(EC))
    Names.push_back(sys::path::filename(I->path()).str());
  llvm::sort(Names);
  EXPECT_EQ(Names, (std::vector<std::string>{"in.co", "out.co"}));
}

// FileRewrite in turn, as hotswap-opt runs many files: on each of two
// threads every file is started before the one before it is finished, so
// that finishing one hashes the next one's input along. Until finish() the
// output does not exist; after it, it holds the bytes of the run alone. A
// rewrite dropped without finish() leaves nothing.
TEST(ConcurrencyInputs, FileRewritesInTurnWriteWhatRunsAloneDo) {
  const std::vector<Prepared> &All = prepared();
  ASSERT_EQ(All.size(), NumCases);
  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("hotswap-turn", Dir));
  auto Cleanup = make_scope_exit([&] { sys::fs::remove_directories(Dir); });
  auto InPath = [&](size_t I) { return (Dir + "/in" + Twine(I)).str(); };
  auto OutPath = [&](unsigned T, size_t I) {
    return (Dir + "/out" + Twine(T) + "-" + Twine(I)).str();
  };
  for (size_t I = 0; I < NumCases; ++I) {
    std::error_code EC;
    raw_fd_ostream OS(InPath(I), EC);
    ASSERT_FALSE(EC);
    OS << StringRef(All[I].Object.data(), All[I].Object.size());
  }
  // Started, then dropped; on this thread first: LLVM installs its signal
  // handlers, with an alternate signal stack, on the thread that first has
  // a file removed on a signal (the temporary), and AddressSanitizer fails
  // to unmap that stack when a worker thread ends. (hotswap-opt installs
  // them on its main thread, InitLLVM.)
  {
    Expected<FileRewrite> Dropped = FileRewrite::start(
        InPath(0), (Dir + "/dropped").str(), All[0].Pipeline);
    ASSERT_TRUE(bool(Dropped)) << toString(Dropped.takeError());
    EXPECT_FALSE(sys::fs::exists(Dir + "/dropped"));
  }
  std::vector<std::string> Problems =
      runOnThreads(2, 1, [&](unsigned T, unsigned) -> std::string {
        std::string Problem;
        std::optional<FileRewrite> Before;
        size_t BeforeIndex = 0;
        auto FinishBefore = [&] {
          Error E = Before->finish();
          Before.reset();
          if (E) {
            Problem += toString(std::move(E)) + "; ";
            return;
          }
          auto Out = MemoryBuffer::getFile(OutPath(T, BeforeIndex));
          if (!Out)
            Problem += OutPath(T, BeforeIndex) + " missing; ";
          else if ((*Out)->getBuffer() != All[BeforeIndex].Expected)
            Problem +=
                All[BeforeIndex].Name + ": " +
                difference(All[BeforeIndex].Expected, (*Out)->getBuffer()) +
                "; ";
        };
        for (size_t K = 0; K < NumCases; ++K) {
          const size_t I = (K + T * 3) % NumCases;
          Expected<FileRewrite> F =
              FileRewrite::start(InPath(I), OutPath(T, I), All[I].Pipeline);
          if (!F)
            return toString(F.takeError());
          if (sys::fs::exists(OutPath(T, I)))
            Problem += OutPath(T, I) + " exists before finish(); ";
          if (Before)
            FinishBefore();
          Before.emplace(std::move(*F));
          BeforeIndex = I;
        }
        FinishBefore();
        return Problem;
      });
  EXPECT_TRUE(Problems.empty()) << joined(Problems);
  std::error_code EC;
  size_t Files = 0;
  for (sys::fs::directory_iterator I(Dir, EC), End; I != End && !EC;
       I.increment(EC)) {
    ++Files;
    EXPECT_FALSE(StringRef(sys::path::filename(I->path())).starts_with("d"))
        << I->path();
  }
  EXPECT_EQ(Files, 3 * NumCases); // inputs, and each thread's outputs
}

// Several targets at once: at every moment the threads run different
// objects (thread T's run I is case (T + I) mod NumCases).
TEST_P(ConcurrentRuns, ManyTargetsAtOnce) {
  const std::vector<Prepared> &All = prepared();
  std::vector<std::string> Problems =
      runOnThreads(NumThreads, NumCases, [&](unsigned T, unsigned I) {
        const Prepared &P = All[(T + I) % NumCases];
        std::string Problem = run(P);
        return Problem.empty() ? Problem : P.Name + ": " + Problem;
      });
  EXPECT_TRUE(Problems.empty()) << joined(Problems);
}

// Many copies of one target at once: the largest object, with long-form
// stubs (decoded by verify with each run's MC state), and the one whose
// prologue is assembled per run (gfx1250).
TEST_P(ConcurrentRuns, OneTargetManyCopies) {
  const std::vector<Prepared> &All = prepared();
  for (size_t C : {LongFormCase, NumCases - 1}) {
    const Prepared &P = All[C];
    std::vector<std::string> Problems =
        runOnThreads(NumThreads, 2, [&](unsigned, unsigned) { return run(P); });
    EXPECT_TRUE(Problems.empty()) << P.Name << ":\n" << joined(Problems);
  }
}

INSTANTIATE_TEST_SUITE_P(Concurrency, ConcurrentRuns,
                         testing::Values(Api::Cxx, Api::C, Api::CxxSharedPool),
                         apiName);
