//===- tools/hotswap-opt/Progress.cpp - One updating line on a terminal ---===//

#include "Progress.h"

#include "llvm/Support/Format.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;

Progress::Progress(size_t Total, unsigned AfterMs, raw_ostream &OS,
                   bool Enabled)
    : Total(Total), AfterMs(AfterMs), OS(OS), Enabled(Enabled),
      Start(std::chrono::steady_clock::now()) {}

void Progress::inputDone(uint64_t Bytes, uint64_t InFlight) {
  ++Done;
  this->Bytes += Bytes - std::min(Bytes, InFlight);
  // A single bare code object has nothing to show.
  if (Total > 1 || CodeObjects)
    show(/*Final=*/Done == Total && Total > 1);
}

void Progress::codeObjectDone(uint64_t Bytes) {
  ++CodeObjects;
  this->Bytes += Bytes;
  show(/*Final=*/false);
}

void Progress::clear() {
  if (Shown)
    OS << "\r\x1b[K";
  Shown = false;
}

void Progress::show(bool Final) {
  if (!Enabled)
    return;
  double S =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  if (S * 1000 < AfterMs && !Final)
    return; // only when the work takes more than a moment
  OS << "\r";
  if (Total > 1)
    OS << format("%zu/%zu inputs, ", Done, Total);
  if (CodeObjects)
    OS << CodeObjects
       << (CodeObjects == 1 ? " code object, " : " code objects, ");
  OS << format("%.1f MB/s", S > 0 ? Bytes / S / 1e6 : 0.0);
  Shown = true;
}
