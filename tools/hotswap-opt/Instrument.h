//===- tools/hotswap-opt/Instrument.h - Debugging flags ---------*- C++ -*-===//
//
// The driver's observers of a run, on the library's PassInstrumentation:
// -debug-pass-manager (passes run or skipped and why, analyses computed),
// -print-after / -print-after-all (what a pass changed in the model) and
// -time-passes (one row per pass and per analysis, exclusive times, summed
// over every code object; printed by LLVM's TimerGroup).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_TOOLS_HOTSWAPOPT_INSTRUMENT_H
#define HOTSWAP_TOOLS_HOTSWAPOPT_INSTRUMENT_H

#include "hotswap/Object/Summary.h"
#include "hotswap/Pass/PassInstrumentation.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace hotswap {

/// -time-passes: exclusive times (a pass's row leaves out the analyses it
/// asked for, which have rows of their own).
class PassTimes {
public:
  void attach(PassInstrumentation &PI);
  /// Adds time spent outside passes and analyses (reading, layout, write).
  void addOther(llvm::StringRef Row, const llvm::TimeRecord &T);
  /// Starts / stops a row by hand (nests like passes and analyses).
  void start(llvm::StringRef Row);
  void stop();
  /// LLVM's pass execution timing report; its title counts the code objects
  /// the rows add up when there are several.
  void print(llvm::raw_ostream &OS, unsigned CodeObjects);

private:
  struct Open {
    std::string Row;
    llvm::TimeRecord Start;
  };
  std::vector<Open> Stack;
  llvm::StringMap<llvm::TimeRecord> Rows;
  std::vector<std::string> Order;
  void charge(const Open &O, const llvm::TimeRecord &Now);
};

/// -debug-pass-manager and -print-after(-all).
class DebugPrinter {
public:
  DebugPrinter(llvm::raw_ostream &Debug, llvm::raw_ostream &Text, bool DebugPM,
               bool PrintAfterAll, std::vector<std::string> PrintAfter);
  void attach(PassInstrumentation &PI);
  bool enabled() const;
  /// Before a container's code object runs.
  void beginCodeObject(llvm::StringRef Entry);

private:
  llvm::raw_ostream &Debug, &Text;
  bool DebugPM, PrintAfterAll;
  llvm::StringSet<> PrintAfter;
  std::optional<ObjectSnapshot> Snap;
  bool printsAfter(llvm::StringRef Pass) const;
};

} // namespace hotswap

#endif // HOTSWAP_TOOLS_HOTSWAPOPT_INSTRUMENT_H
