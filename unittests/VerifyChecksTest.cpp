//===- unittests/VerifyChecksTest.cpp - verify's registered checks --------===//
//
// verify runs the built-in checks, then every registered one, and types
// each problem (the check, its subject, the message).
//
//===----------------------------------------------------------------------===//

#include "hotswap/Passes/VerifyChecks.h"
#include "hotswap/Passes/Verify.h"

#include "hotswap/Object/Reader.h"

#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

#include "TestUtil.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::unittest;

namespace {

TEST(VerifyChecksTest, BuiltinChecksRunFirstInTheirOrder) {
  std::vector<std::string> Names = verifyCheckNames();
  ASSERT_GE(Names.size(), 4u);
  EXPECT_EQ(join(ArrayRef<std::string>(Names).take_front(4), " "),
            "structure provenance kernels swaps");
}

TEST(VerifyChecksTest, ARegisteredCheckRunsOnEveryObjectWithTypedProblems) {
  std::vector<uint8_t> Bytes = textOnlyObject(0x100);
  Expected<std::unique_ptr<Object>> Obj =
      readObject(MemoryBufferRef(toStringRef(Bytes), "t.co"));
  ASSERT_OK(Obj);
  EXPECT_TRUE(verifyObject(**Obj).empty());

  unsigned Runs = 0;
  registerVerifyCheck("test-check",
                      [&Runs](const VerifyContext &C, VerifyProblems &P) {
                        ++Runs;
                        EXPECT_NE(C.Kernels, nullptr);
                        P.add("kernel 'k'", "kernel 'k': not proven");
                        P.push_back("section '.text' at 0x1000 is odd");
                      });
  std::vector<VerifyProblem> P = verifyObject(**Obj);
  EXPECT_EQ(Runs, 1u);
  ASSERT_EQ(P.size(), 2u);
  EXPECT_EQ(P[0].Check, "test-check");
  EXPECT_EQ(P[0].Where, "kernel 'k'");
  EXPECT_EQ(P[1].Where, "section '.text'");
  EXPECT_EQ(P[1].Message, "section '.text' at 0x1000 is odd");
  std::string JSON;
  raw_string_ostream(JSON) << P[0].toJSON();
  EXPECT_EQ(JSON, R"({"check":"test-check","message":"kernel 'k': not )"
                  R"(proven","where":"kernel 'k'"})");

  // Registered again under its name, it replaces itself.
  registerVerifyCheck("test-check",
                      [](const VerifyContext &, VerifyProblems &) {});
  EXPECT_TRUE(verifyObject(**Obj).empty());
  EXPECT_EQ(Runs, 1u);
}

TEST(VerifyChecksTest, SubjectIsWhereTheMessageBegins) {
  EXPECT_EQ(subjectOf("kernel 'vadd': stub at 0x4000 leads nowhere"),
            "kernel 'vadd'");
  EXPECT_EQ(subjectOf("PT_LOAD at 0x2000 extends past end of file"),
            "PT_LOAD at 0x2000");
  EXPECT_EQ(subjectOf("PT_LOADs at 0x0 and 0x1000 overlap"), "PT_LOADs at 0x0");
  EXPECT_EQ(subjectOf("image of the replacement 'f.co': segment at 0x1"),
            "image of the replacement 'f.co'");
  EXPECT_EQ(subjectOf("symbol table '.symtab': sh_info is 20"),
            "symbol table '.symtab'");
  EXPECT_EQ(subjectOf("the section header table is not last"), "");
}

} // namespace
