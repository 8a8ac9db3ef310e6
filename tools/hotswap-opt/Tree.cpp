//===- tools/hotswap-opt/Tree.cpp - Finding GPU files in a tree -----------===//

#include "Tree.h"

#include "hotswap/Bundle/Bundle.h"
#include "hotswap/Object/OutputFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <climits>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using namespace hotswap;

namespace {
std::string errnoMessage(int Err) {
  return std::error_code(Err, std::generic_category()).message();
}
} // namespace

/// Looks at the regular file \p Name of the directory \p DirFD, whose path
/// is \p Path (opened without following a link that may have replaced it
/// meanwhile).
static void visitFile(int DirFD, const char *Name, const std::string &Path,
                      const std::string &Relative, TreeWalk &W,
                      std::set<sys::fs::UniqueID> &Seen) {
  int FD =
      ::openat(DirFD, Name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (FD < 0) {
    if (errno == ELOOP) { // it became a link
      ++W.Links;
      return;
    }
    W.Errors.push_back({Path, errnoMessage(errno)});
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
  if (!K->GPU) {
    ++W.NotGPU;
    return;
  }
  TreeWalk::File F{Path, Relative, "", {}, {}};
  if (Path.size() >= PATH_MAX) {
    // Too long a path for open(): a name through a descriptor of its
    // directory, held for the rest of the run.
    const int Held = ::fcntl(DirFD, F_DUPFD_CLOEXEC, 0);
    if (Held < 0) {
      W.Errors.push_back({Path, errnoMessage(errno)});
      return;
    }
    F.OpenPath = "/proc/self/fd/" + std::to_string(Held) + "/" + Name;
  }
  W.Taken[ID] = W.Files.size();
  W.Files.push_back(std::move(F));
}

/// Walks the directory \p DirFD (closed here), whose path is \p Dir.
static void walkDirectory(int DirFD, const std::string &Dir,
                          const std::string &Relative, TreeWalk &W,
                          std::set<sys::fs::UniqueID> &Seen) {
  // A directory is walked once (a bind mount can put one inside itself).
  struct stat St;
  if (::fstat(DirFD, &St) != 0) {
    W.Errors.push_back({Dir, errnoMessage(errno)});
    ::close(DirFD);
    return;
  }
  if (!Seen.insert(sys::fs::UniqueID(St.st_dev, St.st_ino)).second) {
    ::close(DirFD);
    return;
  }
  // The entries, read through a descriptor of their own (closedir closes
  // it); DirFD stays open to open them.
  std::vector<std::pair<std::string, unsigned char>> Entries;
  const int ListFD = ::fcntl(DirFD, F_DUPFD_CLOEXEC, 0);
  DIR *D = ListFD >= 0 ? ::fdopendir(ListFD) : nullptr;
  if (!D) {
    W.Errors.push_back({Dir, errnoMessage(errno)});
    if (ListFD >= 0)
      ::close(ListFD);
    ::close(DirFD);
    return;
  }
  // (Positioned at the start whatever DirFD's offset: a duplicate shares
  // it, and it was never read.)
  errno = 0;
  while (struct dirent *E = ::readdir(D)) {
    StringRef Name(E->d_name);
    if (Name != "." && Name != "..")
      Entries.push_back({Name.str(), E->d_type});
    errno = 0;
  }
  if (errno != 0)
    W.Errors.push_back({Dir, errnoMessage(errno)});
  ::closedir(D);
  llvm::sort(Entries);
  for (auto &[Name, Type] : Entries) {
    std::string Path = Dir == "/" ? "/" + Name : Dir + "/" + Name;
    std::string Rel = Relative.empty() ? Name : Relative + "/" + Name;
    if (Type == DT_UNKNOWN) {
      struct stat ESt;
      if (::fstatat(DirFD, Name.c_str(), &ESt, AT_SYMLINK_NOFOLLOW) != 0) {
        W.Errors.push_back({Path, errnoMessage(errno)});
        continue;
      }
      Type = S_ISDIR(ESt.st_mode)   ? DT_DIR
             : S_ISLNK(ESt.st_mode) ? DT_LNK
             : S_ISREG(ESt.st_mode) ? DT_REG
                                    : DT_FIFO;
    }
    switch (Type) {
    case DT_DIR: {
      const int Sub = ::openat(DirFD, Name.c_str(),
                               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (Sub < 0) {
        if (errno == ELOOP || errno == ENOTDIR)
          ++W.Links; // it became a link
        else
          W.Errors.push_back({Path, errnoMessage(errno)});
        break;
      }
      walkDirectory(Sub, Path, Rel, W, Seen);
      break;
    }
    case DT_LNK:
      ++W.Links;
      break;
    case DT_REG:
      if (isTemporaryName(Name))
        ++W.Temporaries; // another run's output, not yet in place
      else
        visitFile(DirFD, Name.c_str(), Path, Rel, W, Seen);
      break;
    default:
      ++W.NotGPU; // FIFOs, sockets, devices: never read
      break;
    }
  }
  ::close(DirFD);
}

void hotswap::walkTree(StringRef Root, TreeWalk &W,
                       std::set<sys::fs::UniqueID> &Seen) {
  // The root is the one name followed if it is a link, as find -H does.
  std::string R = Root.str();
  const int FD = ::open(R.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (FD < 0) {
    W.Errors.push_back({R, errnoMessage(errno)});
    return;
  }
  // (Paths below it as the old walk made them: "ROOT/NAME", without a
  // doubled separator.)
  while (R.size() > 1 && R.back() == '/')
    R.pop_back();
  walkDirectory(FD, R, "", W, Seen);
}
