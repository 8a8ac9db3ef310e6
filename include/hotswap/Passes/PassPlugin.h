//===- hotswap/Passes/PassPlugin.h - Out-of-tree passes ---------*- C++ -*-===//
//
// Pass plugins: shared objects that add passes (and analysis printers) to a
// PassBuilder, as LLVM's `opt -load-pass-plugin` does. A plugin exports one
// entry point,
//
//   extern "C" HOTSWAP_PLUGIN_EXPORT hotswap::PassPluginLibraryInfo
//   hotswapGetPassPluginInfo() {
//     return {HOTSWAP_PLUGIN_API_VERSION, "my-plugin", "1.0",
//             [](hotswap::PassBuilder &PB) -> llvm::Error {
//               return PB.registerPass("my-pass", "what it does",
//                                      &MyPass::create);
//             }};
//   }
//
// (or HOTSWAP_PASS_PLUGIN(...) below), and is loaded with PassPlugin::load
// (hotswap-opt -load-pass-plugin=PATH, hotswap_options_load_pass_plugin in
// the C API). Its passes are hotswap::Pass objects like the built-in ones:
// they take parameters, declare invariants, are skipped when those hold and
// are checked by -verify-each. What a plugin may do (threads, global state,
// outputs) is in docs/ARCHITECTURE.md, "Pass plugins".
//
// Every error loading, registering or running a plugin's pass is an
// llvm::FileError naming the plugin's path: a plugin that is missing, not a
// shared object, without the entry point, of another API version, whose
// registration fails, throws or takes a name that is taken; a pass of it
// whose factory or methods return an error or throw a C++ exception.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_PASSPLUGIN_H
#define HOTSWAP_PASSES_PASSPLUGIN_H

#include "hotswap/Passes/PassBuilder.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

/// The version of the plugin interface: the entry point's struct and the
/// C++ classes a plugin derives from or calls (hotswap::Pass, PassBuilder,
/// AnalysisManager, the Object model, the Code layer). Plugins are built
/// against the headers of the package they are loaded into; this number
/// changes whenever one of those changes in a way a built plugin would not
/// survive, and a plugin of another version is refused.
#define HOTSWAP_PLUGIN_API_VERSION 1

/// The entry point's name (dlsym).
#define HOTSWAP_PLUGIN_ENTRY_POINT "hotswapGetPassPluginInfo"

#define HOTSWAP_PLUGIN_EXPORT __attribute__((visibility("default")))

namespace hotswap {

/// What the entry point returns.
struct PassPluginLibraryInfo {
  /// HOTSWAP_PLUGIN_API_VERSION of the headers the plugin was built with.
  uint32_t APIVersion;
  /// The plugin's name and version (--print-passes shows them).
  const char *PluginName;
  const char *PluginVersion;
  /// Registers the plugin's passes, aliases and analysis printers with
  /// \p PB (registerPass, registerAlias, registerAnalysisPrinter). Return
  /// the first error; a name registered twice fails the load even when the
  /// Error is dropped.
  llvm::Error (*RegisterPassBuilderCallbacks)(PassBuilder &PB);
};

/// A loaded plugin. The shared object stays loaded until the process ends.
class PassPlugin {
public:
  /// Loads \p Path (dlopen, every symbol bound now: a plugin built against
  /// another library fails here, not halfway through a run) and calls its
  /// entry point. Errors are FileErrors naming \p Path.
  static llvm::Expected<PassPlugin> load(const std::string &Path);

  llvm::StringRef getFilename() const { return Filename; }
  llvm::StringRef getPluginName() const { return Info.PluginName; }
  llvm::StringRef getPluginVersion() const { return Info.PluginVersion; }
  uint32_t getAPIVersion() const { return Info.APIVersion; }

  /// Runs the plugin's registration on \p PB. Each factory it registers
  /// is wrapped so that errors and C++ exceptions of its passes become
  /// FileErrors naming the plugin. Nothing is registered when it fails
  /// (FileError naming the plugin). Call once per PassBuilder.
  llvm::Error registerPassBuilderCallbacks(PassBuilder &PB) const;

private:
  PassPlugin(std::string Filename, PassPluginLibraryInfo Info)
      : Filename(std::move(Filename)), Info(Info) {}
  std::string Filename;
  PassPluginLibraryInfo Info;
};

/// Loads each of \p Paths and registers it with \p PB, in order; the first
/// failure is returned (hotswap-opt -load-pass-plugin, repeatable).
llvm::Error loadPassPlugins(PassBuilder &PB, llvm::ArrayRef<std::string> Paths);

/// The plugin pass running on the calling thread, if any: what a crash
/// handler names (hotswap-opt turns a crash inside a plugin's pass into
/// "'PLUGIN': pass 'NAME' crashed"). Null outside plugin code. The strings
/// live as long as the process.
struct PluginPassInFlight {
  const char *Plugin;
  const char *Pass;
};
const PluginPassInFlight *pluginPassOnThisThread();

} // namespace hotswap

/// Defines the entry point of a plugin named \p NAME, version \p VERSION,
/// whose registration is the function \p REGISTER (Error(PassBuilder &)).
#define HOTSWAP_PASS_PLUGIN(NAME, VERSION, REGISTER)                           \
  extern "C" HOTSWAP_PLUGIN_EXPORT ::hotswap::PassPluginLibraryInfo            \
  hotswapGetPassPluginInfo() {                                                 \
    return {HOTSWAP_PLUGIN_API_VERSION, NAME, VERSION, REGISTER};              \
  }

#endif // HOTSWAP_PASSES_PASSPLUGIN_H
