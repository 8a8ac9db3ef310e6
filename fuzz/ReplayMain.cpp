//===- fuzz/ReplayMain.cpp - Runs a fuzz target on files, without libFuzzer -//
//
// The main() of the <target>-replay executables every normal build makes
// (HOTSWAP_FUZZ off), in the manner of libFuzzer's
// StandaloneFuzzTargetMain.c: each argument is a file, or a directory whose
// regular files (not recursively, in name order) are each one input, given
// to LLVMFuzzerTestOneInput. A broken promise aborts, as under libFuzzer;
// otherwise the last line says how many inputs ran. test/Fuzz replays every
// target's seed corpus with these, so the targets keep compiling and their
// seeds keep passing in CI.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

using namespace llvm;

static bool runOne(const std::string &Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> B =
      MemoryBuffer::getFile(Path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!B) {
    errs() << "replay: error: '" << Path << "': " << B.getError().message()
           << "\n";
    return false;
  }
  // A copy of its own, as libFuzzer gives: reads past the end are reported
  // by ASan in sanitized builds.
  std::vector<uint8_t> Data((*B)->getBufferStart(), (*B)->getBufferEnd());
  LLVMFuzzerTestOneInput(Data.data(), Data.size());
  return true;
}

int main(int argc, char **argv) {
  unsigned Inputs = 0;
  bool OK = true;
  for (int I = 1; I < argc; ++I) {
    std::string Arg = argv[I];
    if (!sys::fs::is_directory(Arg)) {
      OK &= runOne(Arg);
      ++Inputs;
      continue;
    }
    std::vector<std::string> Files;
    std::error_code EC;
    for (sys::fs::directory_iterator It(Arg, EC), End; It != End && !EC;
         It.increment(EC))
      if (sys::fs::is_regular_file(It->path()))
        Files.push_back(It->path());
    if (EC) {
      errs() << "replay: error: '" << Arg << "': " << EC.message() << "\n";
      OK = false;
    }
    sort(Files);
    for (const std::string &F : Files) {
      OK &= runOne(F);
      ++Inputs;
    }
  }
  outs() << "replay: " << Inputs << " inputs ran\n";
  return OK ? 0 : 1;
}
