//===- fuzz/FuzzSeed.h - The code object the new targets start from -*- C++
//-*-===//
//
// hotswap-fuzz-restore and hotswap-fuzz-swap mutate or apply things to a
// fixed, valid code object: test/Inputs/gfx90a-two-kernels.yaml (clang-22's
// two-kernels.so for gfx90a, obj2yaml), compiled into the target as text by
// CMake (FuzzSeedYAML.inc) and turned into bytes in-process by yaml2obj, so
// the repository holds no binary and the targets need no file at run time.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_FUZZ_FUZZSEED_H
#define HOTSWAP_FUZZ_FUZZSEED_H

#include "hotswap/Hotswap.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ObjectYAML/yaml2obj.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace hotswap {
namespace fuzz {

#include "FuzzSeedYAML.inc" // const char SeedYAML[]

[[noreturn]] inline void die(const llvm::Twine &What) {
  llvm::errs() << "hotswap-fuzz: " << What << "\n";
  llvm::errs().flush();
  abort();
}

[[noreturn]] inline void die(const llvm::Twine &What, llvm::Error E) {
  die(What + ": " + llvm::toString(std::move(E)));
}

/// The seed code object's bytes (made once per process).
inline const std::string &seedObject() {
  static const std::string Bytes = [] {
    std::string Out;
    llvm::raw_string_ostream OS(Out);
    llvm::yaml::Input YIn(SeedYAML);
    if (!llvm::yaml::convertYAML(YIn, OS, [](const llvm::Twine &Msg) {
          die("yaml2obj on the seed: " + Msg);
        }))
      die("yaml2obj failed on the seed");
    return Out;
  }();
  return Bytes;
}

/// \p Pipeline on \p In, which must succeed (the targets' fixed inputs).
inline std::string mustRun(llvm::StringRef In, llvm::StringRef Pipeline) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> Out =
      runPipeline(llvm::MemoryBufferRef(In, "seed"), Pipeline);
  if (!Out)
    die("'" + Pipeline + "' on the seed", Out.takeError());
  return std::string((*Out)->getBuffer());
}

inline std::array<uint8_t, 32> sha256(llvm::StringRef Bytes) {
  return llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(Bytes.data()), Bytes.size()));
}

/// Outcome counters of a target: with HOTSWAP_FUZZ_STATS set in the
/// environment, printed to stderr at exit ("hotswap-fuzz: NAME: N" each), so
/// that a replay of the seeds can show they reach what they are meant to.
inline void count(const char *Name) {
  struct Counters {
    std::vector<std::pair<std::string, uint64_t>> V;
    ~Counters() {
      if (!std::getenv("HOTSWAP_FUZZ_STATS"))
        return;
      for (const auto &[N, C] : V)
        llvm::errs() << "hotswap-fuzz: " << N << ": " << C << "\n";
    }
  };
  static Counters Cs;
  for (auto &[N, C] : Cs.V)
    if (N == Name) {
      ++C;
      return;
    }
  Cs.V.emplace_back(Name, 1);
}

/// A temporary file of this process (one per \p Tag), removed at exit.
/// Empty when it cannot be made.
template <int Tag> const std::string &tempPath() {
  static const std::string Path = [] {
    llvm::SmallString<128> P;
    int FD = -1;
    if (llvm::sys::fs::createTemporaryFile("hotswap-fuzz", "co", FD, P))
      return std::string();
    llvm::sys::fs::closeFile(FD);
    return std::string(P);
  }();
  static const bool RemovedAtExit = [] {
    return std::atexit([] {
             if (!tempPath<Tag>().empty())
               llvm::sys::fs::remove(tempPath<Tag>());
           }) == 0;
  }();
  (void)RemovedAtExit;
  return Path;
}

} // namespace fuzz
} // namespace hotswap

#endif // HOTSWAP_FUZZ_FUZZSEED_H
