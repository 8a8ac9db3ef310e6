//===- unittests/CAPITest.cpp - hotswap-c.h argument and error handling ---===//
//
// What the C API does without a valid code object: every misuse and every
// failure is an error string on the result, never a crash. Runs on real
// objects are covered by test/Embedding/c-api.test.
//
//===----------------------------------------------------------------------===//

#include "hotswap-c.h"

#include "hotswap/Hotswap.h"

#include "gtest/gtest.h"

#include <string>

namespace {

struct ResultDeleter {
  void operator()(hotswap_result *R) const { hotswap_result_destroy(R); }
};
using ResultPtr = std::unique_ptr<hotswap_result, ResultDeleter>;

std::string errorOf(hotswap_result_t R) {
  const char *E = hotswap_result_get_error(R);
  return E ? E : "<null>";
}

void expectFailed(hotswap_result_t R) {
  ASSERT_NE(R, nullptr);
  EXPECT_FALSE(hotswap_result_succeeded(R));
  size_t Size = 123;
  EXPECT_EQ(hotswap_result_get_output(R, &Size), nullptr);
  EXPECT_EQ(Size, 0u);
  EXPECT_EQ(hotswap_result_get_output(R, nullptr), nullptr);
}

TEST(CAPI, VersionMatchesLibrary) {
  EXPECT_EQ(std::string(hotswap_version()), hotswap::getVersionString().str());
  EXPECT_EQ(std::string(hotswap_version()), "0.1.0");
}

TEST(CAPI, NullDataWithSizeIsAnError) {
  ResultPtr R(hotswap_run_pipeline(nullptr, nullptr, 16, ""));
  expectFailed(R.get());
  EXPECT_EQ(errorOf(R.get()),
            "invalid argument: input data is NULL but its size is not 0");
}

TEST(CAPI, NullPipelineIsAnError) {
  const char Data[4] = {0x7f, 'E', 'L', 'F'};
  ResultPtr R(hotswap_run_pipeline(nullptr, Data, sizeof(Data), nullptr));
  expectFailed(R.get());
  EXPECT_EQ(errorOf(R.get()), "invalid argument: pipeline is NULL");
}

TEST(CAPI, EmptyInputIsNotAnObject) {
  ResultPtr R(hotswap_run_pipeline(nullptr, nullptr, 0, ""));
  expectFailed(R.get());
  EXPECT_EQ(errorOf(R.get()), "input is empty");
}

TEST(CAPI, PipelineIsParsedBeforeTheInput) {
  hotswap_options_t O = hotswap_options_create();
  ASSERT_NE(O, nullptr);
  hotswap_options_set_strict(O, 1);
  hotswap_options_set_verify_each(O, 1);
  ResultPtr R(hotswap_run_pipeline(O, "junk", 4, "trampoline,nope"));
  expectFailed(R.get());
  EXPECT_EQ(errorOf(R.get()), "invalid pipeline 'trampoline,nope': unknown "
                              "pass name 'nope' (at column 12)");
  hotswap_options_destroy(O);
}

TEST(CAPI, UnalignedGarbageInputIsAnError) {
  // One byte in, so that the bytes are not aligned.
  alignas(8) char Buf[65] = {};
  Buf[1] = 0x7f;
  Buf[2] = 'E';
  Buf[3] = 'L';
  Buf[4] = 'F';
  int Calls = 0;
  hotswap_options_t O = hotswap_options_create();
  hotswap_options_set_warning_callback(
      O, [](const char *, void *UD) { ++*static_cast<int *>(UD); }, &Calls);
  ResultPtr R(hotswap_run_pipeline(O, Buf + 1, 64, ""));
  expectFailed(R.get());
  EXPECT_FALSE(errorOf(R.get()).empty());
  EXPECT_EQ(Calls, 0);
  hotswap_options_destroy(O);
}

TEST(CAPI, KindAndCountsOfAnInputThatIsNotAnObject) {
  ResultPtr R(hotswap_run_pipeline(nullptr, "not an object", 13, ""));
  expectFailed(R.get());
  EXPECT_EQ(hotswap_result_get_input_kind(R.get()), HOTSWAP_INPUT_UNKNOWN);
  size_t Changed = 7, Failed = 7;
  EXPECT_EQ(hotswap_result_get_code_objects(R.get(), &Changed, &Failed), 0u);
  EXPECT_EQ(Changed, 0u);
  EXPECT_EQ(Failed, 0u);
  // A bundle magic is recognised even when the rest is missing.
  const char Magic[] = "__CLANG_OFFLOAD_BUNDLE__";
  ResultPtr B(hotswap_run_pipeline(nullptr, Magic, sizeof(Magic) - 1, ""));
  expectFailed(B.get());
  EXPECT_EQ(hotswap_result_get_input_kind(B.get()),
            HOTSWAP_INPUT_OFFLOAD_BUNDLE);
}

TEST(CAPI, InputKindNames) {
  EXPECT_STREQ(hotswap_input_kind_name(HOTSWAP_INPUT_CODE_OBJECT),
               "AMDGPU code object");
  EXPECT_STREQ(hotswap_input_kind_name(HOTSWAP_INPUT_OFFLOAD_BUNDLE),
               "offload bundle");
  EXPECT_STREQ(hotswap_input_kind_name(HOTSWAP_INPUT_COMPRESSED_OFFLOAD_BUNDLE),
               "compressed offload bundle");
  EXPECT_STREQ(hotswap_input_kind_name(HOTSWAP_INPUT_HOST_BINARY),
               "host ELF (x86-64)");
  EXPECT_STREQ(hotswap_input_kind_name(HOTSWAP_INPUT_UNKNOWN), "unknown input");
}

TEST(CAPI, NullHandlesAreHarmless) {
  hotswap_options_destroy(nullptr);
  hotswap_result_destroy(nullptr);
  hotswap_options_set_strict(nullptr, 1);
  hotswap_options_set_verify_each(nullptr, 1);
  hotswap_options_set_keep_going(nullptr, 1);
  EXPECT_EQ(hotswap_result_get_input_kind(nullptr), HOTSWAP_INPUT_UNKNOWN);
  EXPECT_EQ(hotswap_result_get_code_objects(nullptr, nullptr, nullptr), 0u);
  hotswap_options_set_warning_callback(nullptr, nullptr, nullptr);
  EXPECT_FALSE(hotswap_result_succeeded(nullptr));
  size_t Size = 7;
  EXPECT_EQ(hotswap_result_get_output(nullptr, &Size), nullptr);
  EXPECT_EQ(Size, 0u);
  EXPECT_EQ(errorOf(nullptr), "invalid argument: result is NULL");
}

TEST(EmbeddingAPI, AnalyzeKernelsRejectsGarbage) {
  llvm::MemoryBufferRef In(llvm::StringRef("not an object"), "garbage");
  llvm::Expected<hotswap::AnalyzedObject> A = hotswap::analyzeKernels(In);
  ASSERT_FALSE(static_cast<bool>(A));
  EXPECT_NE(llvm::toString(A.takeError()).find("ELF"), std::string::npos);
}

} // namespace
