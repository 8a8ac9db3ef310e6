//===- tools/hotswap-opt/Instrument.cpp - Debugging flags -----------------===//

#include "Instrument.h"

#include "hotswap/Object/Object.h"
#include "hotswap/Pass/Pass.h"

using namespace llvm;
using namespace hotswap;

//===----------------------------------------------------------------------===//
// -time-passes
//===----------------------------------------------------------------------===//

void PassTimes::charge(const Open &O, const TimeRecord &Now) {
  TimeRecord Spent = Now;
  Spent -= O.Start;
  auto [It, New] = Rows.try_emplace(O.Row);
  if (New)
    Order.push_back(O.Row);
  It->second += Spent;
}

void PassTimes::start(StringRef Row) {
  TimeRecord Now = TimeRecord::getCurrentTime(/*Start=*/true);
  // The row that was running pauses: times are exclusive.
  if (!Stack.empty()) {
    charge(Stack.back(), Now);
  }
  Stack.push_back({Row.str(), Now});
}

void PassTimes::stop() {
  if (Stack.empty())
    return;
  TimeRecord Now = TimeRecord::getCurrentTime(/*Start=*/false);
  charge(Stack.back(), Now);
  Stack.pop_back();
  if (!Stack.empty())
    Stack.back().Start = TimeRecord::getCurrentTime(/*Start=*/true);
}

void PassTimes::attach(PassInstrumentation &PI) {
  PI.BeforePass.push_back(
      [this](const Pass &P, const Object &) { start(P.name()); });
  PI.AfterPass.insert(PI.AfterPass.begin(),
                      [this](const Pass &, Object &, bool) {
                        stop();
                        return Error::success();
                      });
  PI.BeforeAnalysis.push_back(
      [this](StringRef Name) { start((Name + " analysis").str()); });
  PI.AfterAnalysis.push_back([this](StringRef) { stop(); });
}

void PassTimes::addOther(StringRef Row, const TimeRecord &T) {
  auto [It, New] = Rows.try_emplace(Row);
  if (New)
    Order.push_back(Row.str());
  It->second += T;
}

void PassTimes::print(raw_ostream &OS, unsigned CodeObjects) {
  std::string Title = "Pass execution timing report";
  if (CodeObjects > 1)
    Title += " (" + std::to_string(CodeObjects) + " code objects)";
  TimerGroup TG("pass", Title, Rows,
                /*PrintOnExit=*/false);
  TG.print(OS);
}

//===----------------------------------------------------------------------===//
// -debug-pass-manager, -print-after(-all)
//===----------------------------------------------------------------------===//

DebugPrinter::DebugPrinter(raw_ostream &Debug, raw_ostream &Text, bool DebugPM,
                           bool PrintAfterAll,
                           std::vector<std::string> PrintAfterNames)
    : Debug(Debug), Text(Text), DebugPM(DebugPM), PrintAfterAll(PrintAfterAll) {
  for (const std::string &N : PrintAfterNames)
    PrintAfter.insert(N);
}

bool DebugPrinter::enabled() const {
  return DebugPM || PrintAfterAll || !PrintAfter.empty();
}

bool DebugPrinter::printsAfter(StringRef Pass) const {
  return PrintAfterAll || PrintAfter.count(Pass);
}

void DebugPrinter::beginCodeObject(StringRef Entry) {
  if (DebugPM)
    Debug << "Running pipeline on " << Entry << "\n";
  if (PrintAfterAll || !PrintAfter.empty())
    Text << "*** " << Entry << " ***\n";
}

void DebugPrinter::attach(PassInstrumentation &PI) {
  if (DebugPM) {
    PI.BeforePass.push_back([this](const Pass &P, const Object &) {
      Debug << "Running pass: " << P.name() << "\n";
    });
    PI.SkippedPass.push_back([this](const Pass &P, StringRef Why) {
      Debug << "Skipping pass: " << P.name() << " (" << Why << ")\n";
    });
    PI.AfterPass.push_back([this](const Pass &P, Object &, bool Changed) {
      if (P.isTransform())
        Debug << "  " << P.name() << ": "
              << (Changed ? "changed the object" : "no change") << "\n";
      return Error::success();
    });
    PI.BeforeAnalysis.push_back([this](StringRef Name) {
      Debug << "Running analysis: " << Name << "\n";
    });
  }
  if (PrintAfterAll || !PrintAfter.empty()) {
    // Snapshot before each pass to print, diff after it.
    PI.BeforePass.push_back([this](const Pass &P, const Object &O) {
      if (printsAfter(P.name()))
        Snap = ObjectSnapshot::take(O);
    });
    PI.AfterPass.push_back([this](const Pass &P, Object &O, bool) {
      if (!printsAfter(P.name()) || !Snap)
        return Error::success();
      Text << "*** After " << P.name() << " ***\n";
      Snap->printDiff(O, Text);
      Snap.reset();
      return Error::success();
    });
  }
}
