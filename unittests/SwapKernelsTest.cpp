//===- unittests/SwapKernelsTest.cpp - swap-kernels' parts ----------------===//
//
// The parts swap-kernels is made of, each on its own: the replacement file
// (SwapReplacement: read once, shared while the same file is used) and the
// launch-interface comparison (amdgpu::launchDifference).
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/LaunchInterface.h"
#include "hotswap/Passes/SwapReplacement.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MD5.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include "TestUtil.h"

#include <chrono>
#include <thread>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace hotswap::unittest;

namespace {

/// A file holding \p Bytes, removed at the end of the test.
struct TempFile {
  SmallString<128> Path;
  explicit TempFile(ArrayRef<uint8_t> Bytes) {
    int FD;
    EXPECT_FALSE(sys::fs::createTemporaryFile("hotswap-repl", "co", FD, Path));
    raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS.write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
  }
  ~TempFile() { sys::fs::remove(Path); }
};

TEST(SwapReplacementTest, OneFileIsReadOnceWhileItIsUsed) {
  std::vector<uint8_t> Bytes =
      yamlToBytes(embeddedInput("concurrency-gfx1030.yaml"));
  TempFile F(Bytes);
  auto A = SwapReplacement::get(F.Path);
  ASSERT_OK(A);
  EXPECT_FALSE((*A)->Kernels->Kernels.empty());
  // Both digests a record may carry, against LLVM's own.
  EXPECT_EQ((*A)->digest(SwapDigest::SHA256),
            toHex(SHA256::hash(Bytes), /*LowerCase=*/true));
  MD5 Sum;
  Sum.update(Bytes);
  MD5::MD5Result R;
  Sum.final(R);
  EXPECT_EQ((*A)->digest(SwapDigest::MD5), R.digest().str());
  EXPECT_FALSE((*A)->Loads.empty());
  // A second pass (another code object, another thread) gets the same copy.
  auto B = SwapReplacement::get(F.Path);
  ASSERT_OK(B);
  EXPECT_EQ(A->get(), B->get());
}

TEST(SwapReplacementTest, AChangedFileIsReadAgain) {
  std::vector<uint8_t> Bytes =
      yamlToBytes(embeddedInput("concurrency-gfx1030.yaml"));
  TempFile F(Bytes);
  auto A = SwapReplacement::get(F.Path);
  ASSERT_OK(A);
  // The same path, other bytes (one more byte at the end: size and time).
  Bytes.push_back(0);
  {
    std::error_code EC;
    raw_fd_ostream OS(F.Path, EC);
    ASSERT_FALSE(EC);
    OS.write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
  }
  auto B = SwapReplacement::get(F.Path);
  ASSERT_OK(B);
  EXPECT_NE(A->get(), B->get());
  EXPECT_NE((*A)->digest(SwapDigest::SHA256), (*B)->digest(SwapDigest::SHA256));
}

TEST(SwapReplacementTest, ABundleIsRefusedWithItsName) {
  std::string Bundle = "__CLANG_OFFLOAD_BUNDLE__" + std::string(40, '\0');
  TempFile F(arrayRefFromStringRef(Bundle));
  EXPECT_EQ(errorOf(SwapReplacement::get(F.Path)),
            "replacement '" + F.Path.str().str() +
                "': an offload bundle, not a code object (extract the code "
                "object for the target, e.g. with clang-offload-bundler "
                "--unbundle)");
  EXPECT_EQ(errorOf(SwapReplacement::get("/nonexistent/x.co"))
                .find("cannot read replacement '/nonexistent/x.co': "),
            0u);
}

/// A kernel's launch side with two arguments (pointer at 0, int at 8).
struct Kernel {
  KernelInterface I;
  KernelMD MD;
  KernelDescriptor KD;
  Kernel() {
    I.Args =
        std::vector<KernelArg>{{0, 8, "global_buffer"}, {8, 4, "by_value"}};
    I.LaunchKeys[".kernarg_segment_align"] = "8";
    MD.KernargSegmentSize = 16;
    MD.WavefrontSize = 32;
    KD.KernargSize = 16;
  }
  LaunchSide side(StringRef Where) const { return {I, MD, KD, Where}; }
};

std::optional<std::string> diff(const Kernel &A, const Kernel &B) {
  return launchDifference(A.side("the code object"), B.side("'f.co'"));
}

TEST(LaunchInterfaceTest, ResourcesMayDifferTheInterfaceMayNot) {
  Kernel A, B;
  // Registers, LDS and scratch travel with the descriptor.
  B.MD.VGPRCount = 100;
  B.MD.GroupSegmentFixedSize = 4096;
  B.KD.GroupSegmentFixedSize = 4096;
  EXPECT_EQ(diff(A, B), std::nullopt);

  Kernel Size = B;
  (*Size.I.Args)[1].Size = 8;
  EXPECT_EQ(diff(A, Size), "'.args[1] .size' is 4 in the code object, 8 in "
                           "'f.co'");
  Kernel Kind = B;
  (*Kind.I.Args)[0].ValueKind = "by_value";
  EXPECT_EQ(diff(A, Kind), "'.args[0] .value_kind' is 'global_buffer' in the "
                           "code object, 'by_value' in 'f.co'");
  Kernel Fewer = B;
  Fewer.I.Args->pop_back();
  EXPECT_EQ(diff(A, Fewer),
            "it has 2 arguments in the code object, 1 in 'f.co'");
  // No .args means no arguments.
  Kernel NoArgs = B;
  NoArgs.I.Args.reset();
  EXPECT_EQ(diff(A, NoArgs),
            "it has 2 arguments in the code object, 0 in 'f.co'");
  Kernel NoArgsA = A, EmptyArgs = B;
  NoArgsA.I.Args.reset();
  EmptyArgs.I.Args = std::vector<KernelArg>{};
  EXPECT_EQ(diff(NoArgsA, EmptyArgs), std::nullopt);
  Kernel Seg = B;
  Seg.MD.KernargSegmentSize = 24;
  EXPECT_EQ(diff(A, Seg), "'.kernarg_segment_size' is 16 in the code object, "
                          "24 in 'f.co'");
  Kernel KDSize = B;
  KDSize.KD.KernargSize = 24;
  EXPECT_EQ(diff(A, KDSize), "the descriptor's kernarg_size is 16 in the code "
                             "object, 24 in 'f.co'");
  Kernel Key = B;
  Key.I.LaunchKeys[".reqd_workgroup_size"] = "[64, 1, 1]";
  EXPECT_EQ(diff(A, Key), "'.reqd_workgroup_size' is absent in the code "
                          "object, [64, 1, 1] in 'f.co'");
  // .uniform_work_group_size: absent is false; 1 is true.
  Kernel Uniform = B;
  Uniform.I.LaunchKeys[".uniform_work_group_size"] = "1";
  EXPECT_EQ(diff(A, Uniform), "'.uniform_work_group_size' is false (absent) "
                              "in the code object, true in 'f.co'");
  Uniform.I.LaunchKeys[".uniform_work_group_size"] = "0";
  EXPECT_EQ(diff(A, Uniform), std::nullopt);
  Kernel UniformA = A;
  UniformA.I.LaunchKeys[".uniform_work_group_size"] = "true";
  Uniform.I.LaunchKeys[".uniform_work_group_size"] = "1";
  EXPECT_EQ(diff(UniformA, Uniform), std::nullopt);
  // Hints are informative.
  Kernel Hint = B;
  Hint.I.LaunchKeys[".workgroup_size_hint"] = "[64, 1, 1]";
  Hint.I.LaunchKeys[".vec_type_hint"] = "'float4'";
  EXPECT_EQ(diff(A, Hint), std::nullopt);
}

TEST(LaunchInterfaceTest, AbsentKeysMeanTheABIDefault) {
  KernelMD MD;
  EXPECT_EQ(fieldMeaning(MD, KernelField::UsesDynamicStack), 0u);
  EXPECT_EQ(fieldMeaning(MD, KernelField::AGPRCount), 0u);
  EXPECT_EQ(fieldMeaning(MD, KernelField::VGPRSpillCount), 0u);
  EXPECT_EQ(fieldMeaning(MD, KernelField::VGPRCount), std::nullopt);
  MD.UsesDynamicStack = true;
  EXPECT_EQ(fieldMeaning(MD, KernelField::UsesDynamicStack), 1u);
  EXPECT_EQ(fieldRule(KernelField::SGPRSpillCount).Role,
            FieldRole::Informative);
  EXPECT_EQ(fieldRule(KernelField::KernargSegmentSize).Role, FieldRole::Launch);
  EXPECT_EQ(fieldRule(KernelField::GroupSegmentFixedSize).Role,
            FieldRole::Resource);
  EXPECT_EQ(fieldValueText(KernelField::UsesDynamicStack, 1), "true");
  EXPECT_EQ(fieldValueText(KernelField::UsesDynamicStack, 0, true),
            "false (absent)");
  EXPECT_EQ(fieldValueText(KernelField::VGPRCount, 177), "177");
  EXPECT_EQ(fieldValueText(KernelField::VGPRCount, std::nullopt), "absent");
}

} // namespace
