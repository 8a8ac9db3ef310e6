//===- tools/hotswap-opt/Tree.cpp - Finding GPU files in a tree -----------===//

#include "Tree.h"

#include "hotswap/Bundle/Bundle.h"
#include "hotswap/Object/OutputFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using namespace hotswap;

/// Looks at the regular file \p Path (opened without following a link that
/// may have replaced it meanwhile).
static void visitFile(const std::string &Path, const std::string &Relative,
                      TreeWalk &W, std::set<sys::fs::UniqueID> &Seen) {
  int FD = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (FD < 0) {
    if (errno == ELOOP) { // it became a link
      ++W.Links;
      return;
    }
    W.Errors.push_back(
        {Path, std::error_code(errno, std::generic_category()).message()});
    return;
  }
  struct stat St;
  if (::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode)) {
    ::close(FD);
    ++W.NotGPU;
    return;
  }
  const sys::fs::UniqueID ID(St.st_dev, St.st_ino);
  if (!Seen.insert(ID).second) {
    ::close(FD);
    auto It = W.Taken.find(ID);
    if (It == W.Taken.end()) {
      ++W.Duplicates;
      return;
    }
    // Another name of a GPU file of this tree: it gets the same output.
    W.Files[It->second].AliasPaths.push_back(Path);
    W.Files[It->second].AliasRelatives.push_back(Relative);
    return;
  }
  Expected<bundle::FileKind> K = bundle::identifyFile(FD);
  ::close(FD);
  if (!K) {
    W.Errors.push_back({Path, toString(K.takeError())});
    return;
  }
  if (K->GPU) {
    W.Taken[ID] = W.Files.size();
    W.Files.push_back({Path, Relative, {}, {}});
  } else
    ++W.NotGPU;
}

static void walkDirectory(const std::string &Dir, const std::string &Relative,
                          TreeWalk &W, std::set<sys::fs::UniqueID> &Seen) {
  // A directory is walked once (a bind mount can put one inside itself).
  // The root is the one name followed if it is a link, as find -H does.
  sys::fs::file_status St;
  if (std::error_code EC = sys::fs::status(Dir, St, Relative.empty())) {
    W.Errors.push_back({Dir, EC.message()});
    return;
  }
  if (!Seen.insert(St.getUniqueID()).second)
    return;
  std::vector<std::pair<std::string, sys::fs::file_type>> Entries;
  std::error_code EC;
  for (sys::fs::directory_iterator I(Dir, EC, /*follow_symlinks=*/false), E;
       I != E && !EC; I.increment(EC))
    Entries.push_back({I->path(), I->type()});
  if (EC)
    W.Errors.push_back({Dir, EC.message()});
  llvm::sort(Entries);
  for (const auto &[Path, Type] : Entries) {
    StringRef Name = sys::path::filename(Path);
    std::string Rel =
        Relative.empty() ? Name.str() : Relative + "/" + Name.str();
    switch (Type) {
    case sys::fs::file_type::directory_file:
      walkDirectory(Path, Rel, W, Seen);
      break;
    case sys::fs::file_type::symlink_file:
      ++W.Links;
      break;
    case sys::fs::file_type::regular_file:
      if (isTemporaryName(Name))
        ++W.Temporaries; // another run's output, not yet in place
      else
        visitFile(Path, Rel, W, Seen);
      break;
    default:
      ++W.NotGPU; // FIFOs, sockets, devices: never read
      break;
    }
  }
}

void hotswap::walkTree(StringRef Root, TreeWalk &W,
                       std::set<sys::fs::UniqueID> &Seen) {
  walkDirectory(Root.str(), "", W, Seen);
}
