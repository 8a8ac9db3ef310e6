//===- tools/hotswap-opt/Runner.h - Planning and running inputs -*- C++ -*-===//
//
// What the driver does with a configuration: decides where each input's
// output goes (planJobs), runs the pipeline on every input -- several in
// turn on each thread of a pool (FileRewrite), their printed text and
// diagnostics buffered and flushed in input order -- and says what happened
// to each (the closing line, -stats, -time-passes).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_TOOLS_HOTSWAPOPT_RUNNER_H
#define HOTSWAP_TOOLS_HOTSWAPOPT_RUNNER_H

#include "Instrument.h"
#include "Options.h"
#include "Progress.h"
#include "Tree.h"

#include "hotswap/Hotswap.h"

#include "llvm/Support/ThreadPool.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {

/// One input and everything its run produced.
struct Job {
  std::string In, Out; // Out empty: nothing is written
  /// -r: a shorter name of In to open it by, when In is too long a path
  /// (TreeWalk::File::OpenPath); messages still name In.
  std::string OpenIn;
  /// --dry-run: where the output would go (checked to be replaceable).
  std::string DryOut;
  /// -r: the other names (hard links) of In found in the tree, as found and
  /// then where their outputs go: each becomes a hard link to Out once it
  /// is written (Runner::linkAliases).
  std::vector<std::string> AliasIns, AliasRelatives, AliasOuts;
  /// Set when the input cannot even be tried (a tree's unreadable part).
  std::string PresetError;
  RunSummary Summary;
  bool Failed = false;
  /// Buffered output (several inputs at once), flushed in input order.
  std::string Text, Diag;
  Statistics Stats;
  /// The input's size, and how much of it the progress line counted as its
  /// code objects were done.
  uint64_t Bytes = 0, CountedBytes = 0;
};

/// The inputs, directories walked (-r), and where each output goes.
struct Plan {
  std::vector<Job> Jobs;
  /// -r: what the walk skipped.
  size_t NotGPU = 0, Links = 0, Duplicates = 0, Temporaries = 0;
};

/// Where each input's output goes: -o, --output-dir (with -r, at the
/// input's path under its root), --in-place, standard output, or nowhere
/// (-disable-output, --dry-run, or a pipeline that only reads). Errors are
/// about the command line (two inputs for one -o, ...).
llvm::Expected<Plan> planJobs(const DriverConfig &C, bool Writes);

class Runner {
public:
  /// Text of print<...> and -print-after goes to \p TextOut.
  Runner(const DriverConfig &C, const PassBuilder &PB,
         llvm::raw_ostream &TextOut);
  /// Runs every job (in parallel when there are several and no debugging
  /// output needs them in order).
  void run(std::vector<Job> &Jobs);
  /// The closing line (several inputs, or a container), -time-passes and
  /// -stats, on standard error.
  void printSummary(const Plan &P);

private:
  struct Started;
  /// Runs a job up to what waits for its input's digest (FileRewrite).
  /// \p Buffered: its text and diagnostics go to the job's buffers.
  std::unique_ptr<Started> start(Job &J, bool Buffered);
  /// Finishes what start() began, and reports how it went.
  void end(Started &S);
  /// Runs the jobs that \p Next hands out, in turn, a few in flight: each
  /// job is started before those before it end, so that ending them hashes
  /// its input along with theirs (FileRewrite).
  void runInTurn(std::vector<Job> &Jobs, std::atomic<size_t> &Next,
                 const std::function<void(size_t)> &Finish);
  PipelineOptions optionsFor(Job &J, llvm::raw_ostream &Text,
                             llvm::raw_ostream &Diag, bool Buffered);
  void flushInOrder(std::vector<Job> &Jobs);

  const DriverConfig &C;
  const PassBuilder &PB;
  llvm::raw_ostream &TextOut;
  PassTimes Times;
  DebugPrinter Debug;
  PassInstrumentation PI;
  bool Instrumented;
  std::optional<llvm::DefaultThreadPool> Pool;

  std::mutex Lock; // guards what jobs report while others run
  std::optional<Progress> Prog;
  size_t NextToFlush = 0;
  std::vector<bool> Done;
  Statistics AllStats;
};

/// "hotswap-opt: error: 'FILE': message" (without FILE when empty).
void reportError(llvm::raw_ostream &OS, llvm::StringRef File,
                 const llvm::Twine &Msg);

/// "<stdin>" for "-".
std::string displayName(llvm::StringRef File);

/// \p Text fit for a terminal: control characters (C0, DEL and C1) and
/// bytes that are not UTF-8 become \xNN, so a name or a string read from a
/// file and quoted in a message cannot reach the terminal as escape
/// sequences; newlines too unless \p KeepNewlines (a message of several
/// lines, e.g. verify's problems, keeps them: the strings it quotes are
/// escaped where it is made).
std::string printable(llvm::StringRef Text, bool KeepNewlines = false);

} // namespace hotswap

#endif // HOTSWAP_TOOLS_HOTSWAPOPT_RUNNER_H
