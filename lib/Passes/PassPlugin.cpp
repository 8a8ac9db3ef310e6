//===- lib/Passes/PassPlugin.cpp - Out-of-tree passes ---------------------===//
//
// Loads pass plugins and puts every call into plugin code behind one guard:
// an error it returns or a C++ exception it throws becomes a FileError
// naming the plugin. This file alone is compiled with -fexceptions (the
// library is not), so that every frame between a plugin's throw and the
// catch here can unwind; a plugin's exception thrown through library code
// it called back (an analysis of its own under AnalysisManager) unwinds
// without running that code's destructors, and the run fails either way.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/PassPlugin.h"

#include "hotswap/Support/Error.h"

#include "llvm/Support/FileSystem.h"

#include <dlfcn.h>
#include <exception>
#include <memory>

using namespace llvm;
using namespace hotswap;

namespace {

thread_local const PluginPassInFlight *InFlight = nullptr;

/// Marks plugin code running on this thread (for a crash handler).
class InFlightScope {
public:
  explicit InFlightScope(const PluginPassInFlight &I) : Saved(InFlight) {
    InFlight = &I;
  }
  ~InFlightScope() { InFlight = Saved; }

private:
  const PluginPassInFlight *Saved;
};

/// Calls \p F, a call into plugin code; a C++ exception becomes an error
/// "WHAT threw an exception: ...".
template <typename T, typename FnT> Expected<T> guarded(StringRef What, FnT F) {
  std::string Thrown;
  try {
    return F();
  } catch (const std::exception &E) {
    Thrown = E.what();
  } catch (...) {
    Thrown = "(not a std::exception)";
  }
  return makeError(What + " threw an exception: " + Thrown);
}

/// Everything a wrapped pass needs to name its plugin.
struct PluginId {
  std::string Path;
  std::string PassName;
  PluginPassInFlight InFlight;
};

Error inPlugin(const PluginId &Id, Error E) {
  if (!E)
    return E;
  return createFileError(
      Id.Path, prefixError("pass '" + Id.PassName + "'", std::move(E)));
}

/// A plugin's pass as the pass manager sees it: every call guarded, every
/// error naming the plugin.
class PluginPass final : public Pass {
public:
  PluginPass(std::shared_ptr<const PluginId> Id, std::unique_ptr<Pass> P)
      : Id(std::move(Id)), P(std::move(P)) {}

  StringRef name() const override { return P->name(); }
  void printPipeline(raw_ostream &OS) const override { P->printPipeline(OS); }
  StringRef invariantDescription() const override {
    return P->invariantDescription();
  }
  bool isTransform() const override { return P->isTransform(); }
  bool needsSomeCodeObject() const override { return P->needsSomeCodeObject(); }

  Expected<bool> isSatisfied(Object &Obj, AnalysisManager &AM,
                             PassContext &Ctx) override {
    return call<bool>("its invariant check",
                      [&] { return P->isSatisfied(Obj, AM, Ctx); });
  }
  Expected<std::optional<std::string>>
  unmetPrecondition(Object &Obj, AnalysisManager &AM,
                    PassContext &Ctx) override {
    return call<std::optional<std::string>>(
        "its precondition", [&] { return P->unmetPrecondition(Obj, AM, Ctx); });
  }
  Expected<PreservedAnalyses> run(Object &Obj, AnalysisManager &AM,
                                  PassContext &Ctx) override {
    return call<PreservedAnalyses>("it", [&] { return P->run(Obj, AM, Ctx); });
  }

private:
  template <typename T, typename FnT> Expected<T> call(StringRef What, FnT F) {
    InFlightScope S(Id->InFlight);
    Expected<T> R = guarded<T>(What, F);
    if (!R)
      return inPlugin(*Id, R.takeError());
    return R;
  }

  std::shared_ptr<const PluginId> Id;
  std::unique_ptr<Pass> P;
};

Error pluginError(const std::string &Path, const Twine &Msg) {
  return createFileError(Path, makeError(Msg));
}

/// dlerror() without the "PATH: " it starts with.
std::string dlMessage(StringRef Path) {
  const char *M = dlerror();
  StringRef S = M ? M : "unknown error";
  S.consume_front(Path);
  S.consume_front(": ");
  return S.str();
}

} // namespace

const PluginPassInFlight *hotswap::pluginPassOnThisThread() { return InFlight; }

Expected<PassPlugin> PassPlugin::load(const std::string &Path) {
  sys::fs::file_status St;
  if (std::error_code EC = sys::fs::status(Path, St))
    return pluginError(Path, "cannot load the pass plugin: " + EC.message());
  if (sys::fs::is_directory(St))
    return pluginError(Path, "cannot load the pass plugin: is a directory");
  // A name without a slash would be looked up in the library path.
  std::string Open = StringRef(Path).contains('/') ? Path : "./" + Path;
  // RTLD_NOW: a plugin that needs a symbol this program lacks fails here.
  // RTLD_LOCAL: plugins do not resolve each other's symbols.
  void *Handle = dlopen(Open.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Handle)
    return pluginError(Path,
                       "not a loadable shared object: " + dlMessage(Open));
  using EntryFn = PassPluginLibraryInfo (*)();
  auto Entry =
      reinterpret_cast<EntryFn>(dlsym(Handle, HOTSWAP_PLUGIN_ENTRY_POINT));
  if (!Entry)
    return pluginError(Path, "not a hotswap pass plugin: it has no '" +
                                 Twine(HOTSWAP_PLUGIN_ENTRY_POINT) +
                                 "' entry point");
  Expected<PassPluginLibraryInfo> Info = guarded<PassPluginLibraryInfo>(
      HOTSWAP_PLUGIN_ENTRY_POINT, [&] { return Entry(); });
  if (!Info)
    return createFileError(Path, Info.takeError());
  if (Info->APIVersion != HOTSWAP_PLUGIN_API_VERSION)
    return pluginError(Path, "pass plugin API version " +
                                 Twine(Info->APIVersion) +
                                 ", this program supports version " +
                                 Twine(HOTSWAP_PLUGIN_API_VERSION) +
                                 ": rebuild the plugin against its package");
  if (!Info->PluginName || !*Info->PluginName || !Info->PluginVersion ||
      !Info->RegisterPassBuilderCallbacks)
    return pluginError(Path, "the entry point gave no plugin name, version "
                             "or registration callback");
  return PassPlugin(Path, *Info);
}

Error PassPlugin::registerPassBuilderCallbacks(PassBuilder &PB) const {
  // Registered on a copy, kept only when everything succeeded.
  PassBuilder Trial = PB;
  PipelineParser::RegistrationScope Scope;
  Scope.Origin = ("plugin '" + getPluginName() + "' " + getPluginVersion() +
                  " (" + Filename + ")")
                     .str();
  std::string Path = Filename;
  Scope.Wrap = [Path](StringRef Name, PassFactory F) -> PassFactory {
    auto Id = std::make_shared<PluginId>();
    Id->Path = Path;
    Id->PassName = Name.str();
    Id->InFlight = {Id->Path.c_str(), Id->PassName.c_str()};
    return [Id, F = std::move(F)](
               StringRef Params) -> Expected<std::unique_ptr<Pass>> {
      // An error the factory returns is about the parameters: the parser
      // names the pass and the column. What it throws is the plugin's.
      std::optional<Error> Returned;
      Expected<std::unique_ptr<Pass>> P = [&] {
        InFlightScope S(Id->InFlight);
        return guarded<std::unique_ptr<Pass>>(
            "its factory", [&]() -> Expected<std::unique_ptr<Pass>> {
              Expected<std::unique_ptr<Pass>> Made = F(Params);
              if (!Made) {
                Returned = Made.takeError();
                return nullptr;
              }
              return Made;
            });
      }();
      if (Returned)
        return std::move(*Returned);
      if (!P)
        return inPlugin(*Id, P.takeError());
      if (!*P)
        return inPlugin(*Id, makeError("its factory made no pass"));
      return std::make_unique<PluginPass>(Id, std::move(*P));
    };
  };
  Trial.setRegistrationScope(&Scope);
  auto Register = Info.RegisterPassBuilderCallbacks;
  std::string Returned;
  Expected<bool> Done =
      guarded<bool>("the registration", [&]() -> Expected<bool> {
        if (Error E = Register(Trial))
          Returned = toString(std::move(E));
        return true;
      });
  Trial.setRegistrationScope(nullptr);
  if (!Done)
    return pluginError(Filename, toString(Done.takeError()));
  // A name taken counts even if the plugin dropped the Error it got.
  if (Returned.empty())
    Returned = Scope.FirstError;
  if (!Returned.empty())
    return pluginError(Filename, "registration failed: " + Returned);
  PB = std::move(Trial);
  return Error::success();
}

Error hotswap::loadPassPlugins(PassBuilder &PB, ArrayRef<std::string> Paths) {
  for (const std::string &Path : Paths) {
    Expected<PassPlugin> P = PassPlugin::load(Path);
    if (!P)
      return P.takeError();
    if (Error E = P->registerPassBuilderCallbacks(PB))
      return E;
  }
  return Error::success();
}
