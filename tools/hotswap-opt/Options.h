//===- tools/hotswap-opt/Options.h - Command line to configuration -*- C++
//-*-===//
//
// Every flag of the driver, read once into a DriverConfig: the rest of the
// driver never looks at a cl::opt.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_TOOLS_HOTSWAPOPT_OPTIONS_H
#define HOTSWAP_TOOLS_HOTSWAPOPT_OPTIONS_H

#include <optional>
#include <string>
#include <vector>

namespace hotswap {

struct DriverConfig {
  /// Inputs as given ("-" is standard input; none given: "-").
  std::vector<std::string> Inputs;
  /// -o (set even when empty), --output-dir, --in-place.
  std::optional<std::string> OutputFile;
  std::string OutputDir;
  bool InPlace = false;
  /// -r: directories among the inputs are walked for GPU files.
  bool Recursive = false;
  /// --dry-run: everything but writing; says what would change.
  bool DryRun = false;
  /// -disable-output.
  bool DisableOutput = false;

  std::string Passes;
  bool PrintPasses = false;
  /// -load-pass-plugin, in order.
  std::vector<std::string> PassPlugins;
  bool PrintPipelinePasses = false;

  bool DebugPassManager = false;
  bool PrintAfterAll = false;
  std::vector<std::string> PrintAfter;
  bool TimePasses = false;
  bool VerifyEach = false;
  bool VerifyAnalysisPreservation = false;
  bool Strict = false;
  /// --kernels-format=json.
  bool JSON = false;

  /// --threads (0: all cores).
  unsigned Threads = 0;
  /// --progress-after (ms).
  unsigned ProgressAfterMs = 500;
  bool KeepGoing = false;
  bool ZeroOldBundles = false;
};

/// Parses the command line (and HOTSWAP_OPT_OPTIONS) into a configuration;
/// --help and --version print and exit, as cl::ParseCommandLineOptions does.
DriverConfig parseCommandLine(int Argc, char **Argv);

} // namespace hotswap

#endif // HOTSWAP_TOOLS_HOTSWAPOPT_OPTIONS_H
