//===- tools/hotswap-opt/Tree.h - Finding GPU files in a tree --*- C++ -*-===//
//
// hotswap-opt -r: the files of a directory tree that hold GPU code, told by
// their content (bundle::identifyFile reads a file's first bytes and, for a
// host ELF, its section names; nothing more), in a stable order. Symbolic
// links are not followed (a link's target is reached, if at all, through
// its own place in a tree that is walked); a file reached twice -- two hard
// links, or overlapping trees -- is taken once. The temporaries outputs are
// written to (isTemporaryName) are never taken. Directories are walked
// through descriptors (openat), so a tree deeper than PATH_MAX is walked
// whole.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_TOOLS_HOTSWAPOPT_TREE_H
#define HOTSWAP_TOOLS_HOTSWAPOPT_TREE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem/UniqueID.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hotswap {

struct TreeWalk {
  /// A file that holds GPU code: its path, and its path under the root.
  struct File {
    std::string Path, Relative;
    /// When Path is too long to open (PATH_MAX and more, in a deep tree):
    /// a short name of the same file, through a descriptor of its directory
    /// kept open for the run ("/proc/self/fd/N/NAME").
    std::string OpenPath;
    /// Other names of the same file (hard links) in this tree: paths, and
    /// paths under the root.
    std::vector<std::string> AliasPaths, AliasRelatives;
  };
  std::vector<File> Files;
  /// Regular files (and FIFOs, sockets, devices) that hold no GPU code.
  size_t NotGPU = 0;
  /// Symbolic links, not followed.
  size_t Links = 0;
  /// Files taken already (another name of the same file) in another tree
  /// or among the named inputs; another name in this tree is an alias.
  size_t Duplicates = 0;
  /// Which of Files each file taken in this tree is.
  std::map<llvm::sys::fs::UniqueID, size_t> Taken;
  /// Temporaries of this tool's runs (NAME.tmpXXXXXXX: another run's
  /// output being written, or one a killed run left): never inputs.
  size_t Temporaries = 0;
  /// What could not be read: a path and why.
  std::vector<std::pair<std::string, std::string>> Errors;
};

/// Adds what \p Root (a directory) holds to \p W; \p Seen holds the
/// identities of the files already taken.
void walkTree(llvm::StringRef Root, TreeWalk &W,
              std::set<llvm::sys::fs::UniqueID> &Seen);

} // namespace hotswap

#endif // HOTSWAP_TOOLS_HOTSWAPOPT_TREE_H
