//===- utils/bench/capi-threads.cpp - C API runs on one and two threads ---===//
//
//   hotswap-capi-threads [-reps=N] [-threads=T] [-passes=P] CODE-OBJECT...
//
// Reads the code objects into memory, then times the same work done two
// ways through the C API (hotswap-c.h), alternating, -reps times:
//
//   serial      one thread rewrites every input T times over, one run after
//               another (T x inputs runs);
//   concurrent  T threads each rewrite every input once, all at once (the
//               same T x inputs runs).
//
// Both do exactly the same runs, so the ratio of the medians is the speed-up
// T threads give (T on a T-core machine that is otherwise idle: ideally T).
// Every output must be the serial run's bytes for that input. Prints the
// medians, the speed-up, the process's CPU time per way, and
// /proc/loadavg before and after (other work on the machine shows there).
//
// A benchmark, not a test: exit status 1 only when a run fails or an output
// differs. See utils/bench/README.md.
//
//===----------------------------------------------------------------------===//

#include "hotswap-c.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <vector>

namespace {

struct Input {
  std::string Path;
  std::string Bytes;
  std::string Expected; // the first serial output
};

double cpuSeconds() {
  struct rusage RU;
  getrusage(RUSAGE_SELF, &RU);
  return RU.ru_utime.tv_sec + RU.ru_utime.tv_usec / 1e6 + RU.ru_stime.tv_sec +
         RU.ru_stime.tv_usec / 1e6;
}

std::string loadavg() {
  std::ifstream F("/proc/loadavg");
  std::string L;
  std::getline(F, L);
  return L;
}

/// One run; false (and a message) when it fails or writes other bytes.
bool runOne(Input &In, const char *Passes, bool Record, std::string &Err) {
  hotswap_result_t R =
      hotswap_run_pipeline(nullptr, In.Bytes.data(), In.Bytes.size(), Passes);
  if (!R) {
    Err = In.Path + ": hotswap_run_pipeline returned NULL";
    return false;
  }
  bool OK = true;
  if (!hotswap_result_succeeded(R)) {
    Err = In.Path + ": " + hotswap_result_get_error(R);
    OK = false;
  } else {
    size_t Size = 0;
    const char *Data =
        static_cast<const char *>(hotswap_result_get_output(R, &Size));
    if (Record) {
      In.Expected.assign(Data, Size);
    } else if (Size != In.Expected.size() ||
               std::memcmp(Data, In.Expected.data(), Size) != 0) {
      Err = In.Path + ": output differs from the first serial run's";
      OK = false;
    }
  }
  hotswap_result_destroy(R);
  return OK;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : (V[N / 2 - 1] + V[N / 2]) / 2;
}

} // namespace

int main(int argc, char **argv) {
  unsigned Reps = 5, Threads = 2;
  std::string Passes = "trampoline,stub-syms";
  std::vector<Input> Inputs;
  for (int I = 1; I < argc; ++I) {
    std::string A = argv[I];
    if (A.rfind("-reps=", 0) == 0)
      Reps = std::max(1, std::atoi(A.c_str() + 6));
    else if (A.rfind("-threads=", 0) == 0)
      Threads = std::max(1, std::atoi(A.c_str() + 9));
    else if (A.rfind("-passes=", 0) == 0)
      Passes = A.substr(8);
    else if (!A.empty() && A[0] == '-') {
      std::fprintf(stderr, "usage: hotswap-capi-threads [-reps=N] "
                           "[-threads=T] [-passes=P] CODE-OBJECT...\n");
      return 2;
    } else {
      std::ifstream F(A, std::ios::binary);
      if (!F) {
        std::fprintf(stderr, "capi-threads: error: cannot read '%s'\n",
                     A.c_str());
        return 1;
      }
      Input In;
      In.Path = A;
      In.Bytes.assign(std::istreambuf_iterator<char>(F),
                      std::istreambuf_iterator<char>());
      Inputs.push_back(std::move(In));
    }
  }
  if (Inputs.empty()) {
    std::fprintf(stderr, "capi-threads: error: no input\n");
    return 2;
  }

  std::printf("hotswap %s, pipeline %s, %zu inputs, %u threads, %u reps\n",
              hotswap_version(), Passes.c_str(), Inputs.size(), Threads, Reps);
  for (const Input &In : Inputs)
    std::printf("  %s (%zu bytes)\n", In.Path.c_str(), In.Bytes.size());
  std::printf("loadavg before: %s\n", loadavg().c_str());
  std::fflush(stdout);

  // Warm-up, which also records each input's expected output.
  std::string Err;
  for (Input &In : Inputs)
    if (!runOne(In, Passes.c_str(), /*Record=*/true, Err)) {
      std::fprintf(stderr, "capi-threads: error: %s\n", Err.c_str());
      return 1;
    }

  using Clock = std::chrono::steady_clock;
  std::vector<double> Serial, Concurrent, SerialCPU, ConcurrentCPU;
  for (unsigned R = 0; R < Reps; ++R) {
    // Serial: Threads x every input, on this thread.
    double C0 = cpuSeconds();
    auto T0 = Clock::now();
    for (unsigned T = 0; T < Threads; ++T)
      for (Input &In : Inputs)
        if (!runOne(In, Passes.c_str(), false, Err)) {
          std::fprintf(stderr, "capi-threads: error: %s\n", Err.c_str());
          return 1;
        }
    Serial.push_back(std::chrono::duration<double>(Clock::now() - T0).count());
    SerialCPU.push_back(cpuSeconds() - C0);

    // Concurrent: Threads threads, each every input once.
    std::vector<std::string> Errs(Threads);
    std::vector<char> Failed(Threads, 0);
    C0 = cpuSeconds();
    T0 = Clock::now();
    std::vector<std::thread> Pool;
    for (unsigned T = 0; T < Threads; ++T)
      Pool.emplace_back([&, T] {
        // Each thread starts at another input.
        for (size_t K = 0; K < Inputs.size(); ++K) {
          Input &In = Inputs[(K + T) % Inputs.size()];
          if (!runOne(In, Passes.c_str(), false, Errs[T])) {
            Failed[T] = 1;
            return;
          }
        }
      });
    for (std::thread &Th : Pool)
      Th.join();
    Concurrent.push_back(
        std::chrono::duration<double>(Clock::now() - T0).count());
    ConcurrentCPU.push_back(cpuSeconds() - C0);
    for (unsigned T = 0; T < Threads; ++T)
      if (Failed[T]) {
        std::fprintf(stderr, "capi-threads: error: %s\n", Errs[T].c_str());
        return 1;
      }
    std::printf("rep %u: serial %.3f s (CPU %.3f s), concurrent %.3f s "
                "(CPU %.3f s)\n",
                R + 1, Serial.back(), SerialCPU.back(), Concurrent.back(),
                ConcurrentCPU.back());
    std::fflush(stdout);
  }
  double S = median(Serial), C = median(Concurrent);
  std::printf("loadavg after: %s\n", loadavg().c_str());
  std::printf("median serial %.3f s (CPU %.3f s), concurrent %.3f s "
              "(CPU %.3f s): speed-up %.2fx on %u threads\n",
              S, median(SerialCPU), C, median(ConcurrentCPU), S / C, Threads);
  std::printf("every output identical to the serial run's: yes\n");
  return 0;
}
