//===- tools/hotswap-opt/Progress.cpp - One updating line on a terminal ---===//

#include "Progress.h"

#include "llvm/Support/Format.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;

Progress::Progress(size_t Total, uint64_t TotalBytes, unsigned AfterMs,
                   raw_ostream &OS, bool Enabled)
    : Total(Total), TotalBytes(TotalBytes), AfterMs(AfterMs), OS(OS),
      Enabled(Enabled), Start(std::chrono::steady_clock::now()) {}

void Progress::codeObjectsFound(unsigned Count) { CodeObjectsFound += Count; }

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
    OS << CodeObjects << "/" << std::max(CodeObjects, CodeObjectsFound)
       << " code objects, ";
  OS << format("%.1f/%.1f MB, %.1f MB/s", Bytes / 1e6,
               std::max(Bytes, TotalBytes) / 1e6,
               S > 0 ? Bytes / S / 1e6 : 0.0);
  // The time left at the rate so far, once the work has taken long enough
  // for a line to be shown at all.
  if (!Final && Bytes > 0 && TotalBytes > Bytes) {
    uint64_t Left = static_cast<uint64_t>(S * (TotalBytes - Bytes) / Bytes);
    OS << format(", %llu:%02llu left", (unsigned long long)(Left / 60),
                 (unsigned long long)(Left % 60));
  }
  // What a longer line drew before stays erased.
  OS << "\x1b[K";
  Shown = true;
}
