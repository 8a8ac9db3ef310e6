//===- unittests/PassPluginTest.cpp - Pass plugins through both APIs -----===//
//
// The plugins of test/CMakeLists.txt (HOTSWAP_TEST_PLUGIN_DIR), loaded
// through the C++ API (PassPlugin, loadPassPlugins) and the C API
// (hotswap_options_load_pass_plugin) into this test program, which exports
// its symbols as hotswap-opt does. The driver's side is test/Plugins.
//
//===----------------------------------------------------------------------===//

#include "hotswap-c.h"

#include "hotswap/Hotswap.h"

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <string>

using namespace llvm;
using namespace hotswap;
using unittest::embeddedInput;
using unittest::errorOf;
using unittest::isOk;
using unittest::yamlToBytes;

namespace {

std::string plugin(StringRef Name) {
  return (Twine(HOTSWAP_TEST_PLUGIN_DIR) + "/lib" + Name + ".so").str();
}

std::vector<uint8_t> object() {
  return yamlToBytes(embeddedInput("concurrency-gfx1030.yaml"));
}

MemoryBufferRef bytesOf(const std::vector<uint8_t> &B) {
  return MemoryBufferRef(
      StringRef(reinterpret_cast<const char *>(B.data()), B.size()), "in");
}

std::string message(Error E) { return E ? toString(std::move(E)) : ""; }

bool contains(const MemoryBuffer &B, StringRef S) {
  return B.getBuffer().contains(S);
}

TEST(PassPlugin, LoadsAndRegisters) {
  Expected<PassPlugin> P = PassPlugin::load(plugin("hotswap-test-plugin"));
  ASSERT_TRUE(isOk(P));
  EXPECT_EQ(P->getPluginName(), "hotswap-test");
  EXPECT_EQ(P->getPluginVersion(), "1.0");
  EXPECT_EQ(P->getAPIVersion(), unsigned(HOTSWAP_PLUGIN_API_VERSION));
  PassBuilder PB;
  ASSERT_EQ(message(P->registerPassBuilderCallbacks(PB)), "");

  std::vector<uint8_t> In = object();
  PipelineOptions Opts;
  Opts.Builder = &PB;
  Expected<std::unique_ptr<MemoryBuffer>> Out =
      runPipeline(bytesOf(In), "test-mark<tag=unit>,trampoline", Opts);
  ASSERT_TRUE(isOk(Out));
  EXPECT_TRUE(contains(**Out, ".test.mark"));

  // A pass that throws: an error naming the plugin and the pass.
  Out = runPipeline(bytesOf(In), "test-throw", Opts);
  EXPECT_EQ(errorOf(std::move(Out)),
            "'" + plugin("hotswap-test-plugin") +
                "': pass 'test-throw': it threw an exception: thrown by "
                "test-throw");
}

TEST(PassPlugin, FailedRegistrationRegistersNothing) {
  PassBuilder PB;
  Error E = loadPassPlugins(PB, {plugin("hotswap-test-plugin-twice")});
  EXPECT_EQ(message(std::move(E)),
            "'" + plugin("hotswap-test-plugin-twice") +
                "': registration failed: pass name 'test-mark' is already "
                "registered by plugin 'hotswap-test' 1.0 (" +
                plugin("hotswap-test-plugin-twice") + ")");
  PassManager PM;
  EXPECT_EQ(message(PB.parsePassPipeline(PM, "test-mark")),
            "invalid pipeline 'test-mark': unknown pass name 'test-mark' (at "
            "column 1)");
  // The builder still works, and takes a good plugin afterwards.
  EXPECT_EQ(message(loadPassPlugins(PB, {plugin("hotswap-test-plugin")})), "");
  EXPECT_EQ(message(PB.parsePassPipeline(PM, "test-mark,verify")), "");
}

TEST(PassPlugin, BadPluginsAreErrors) {
  PassBuilder PB;
  for (auto [Name, Message] :
       std::initializer_list<std::pair<const char *, const char *>>{
           {"hotswap-test-plugin-version",
            "pass plugin API version 999, this program supports version 1: "
            "rebuild the plugin against its package"},
           {"hotswap-test-plugin-noentry",
            "not a hotswap pass plugin: it has no 'hotswapGetPassPluginInfo' "
            "entry point"},
           {"hotswap-test-plugin-throws",
            "the registration threw an exception: thrown by the "
            "registration"},
           {"hotswap-test-plugin-regfail",
            "registration failed: the plugin refuses to register"},
           {"no-such-plugin",
            "cannot load the pass plugin: No such file or directory"}})
    EXPECT_EQ(message(loadPassPlugins(PB, {plugin(Name)})),
              "'" + plugin(Name) + "': " + Message);
}

struct ResultDeleter {
  void operator()(hotswap_result *R) const { hotswap_result_destroy(R); }
};
using ResultPtr = std::unique_ptr<hotswap_result, ResultDeleter>;

TEST(PassPlugin, ThroughTheCAPI) {
  hotswap_options_t Opts = hotswap_options_create();
  std::vector<uint8_t> In = object();

  // Unknown before the plugin.
  ResultPtr R(hotswap_run_pipeline(Opts, In.data(), In.size(), "test-mark"));
  EXPECT_FALSE(hotswap_result_succeeded(R.get()));

  R.reset(hotswap_options_load_pass_plugin(
      Opts, plugin("hotswap-test-plugin-version").c_str()));
  EXPECT_FALSE(hotswap_result_succeeded(R.get()));
  EXPECT_EQ(std::string(hotswap_result_get_error(R.get())),
            "'" + plugin("hotswap-test-plugin-version") +
                "': pass plugin API version 999, this program supports "
                "version 1: rebuild the plugin against its package");

  R.reset(hotswap_options_load_pass_plugin(
      Opts, plugin("hotswap-test-plugin").c_str()));
  EXPECT_TRUE(hotswap_result_succeeded(R.get()))
      << hotswap_result_get_error(R.get());

  R.reset(hotswap_run_pipeline(Opts, In.data(), In.size(),
                               "test-mark<tag=c>,trampoline"));
  ASSERT_TRUE(hotswap_result_succeeded(R.get()))
      << hotswap_result_get_error(R.get());
  size_t Size = 0;
  const char *Out =
      static_cast<const char *>(hotswap_result_get_output(R.get(), &Size));
  EXPECT_TRUE(StringRef(Out, Size).contains(".test.mark"));

  R.reset(hotswap_run_pipeline(Opts, In.data(), In.size(), "test-fail"));
  EXPECT_FALSE(hotswap_result_succeeded(R.get()));
  EXPECT_EQ(std::string(hotswap_result_get_error(R.get())),
            "'" + plugin("hotswap-test-plugin") +
                "': pass 'test-fail': this pass always fails");

  R.reset(hotswap_options_load_pass_plugin(Opts, nullptr));
  EXPECT_EQ(std::string(hotswap_result_get_error(R.get())),
            "invalid argument: options or path is NULL");
  hotswap_options_destroy(Opts);
}

} // namespace
