//===- unittests/CodeTest.cpp - The Code layer ----------------------------===//
//
// Where added code goes (CodeAppender: one appended PT_LOAD per run, regions
// named by purpose), how a kernel is entered through a stub (EntryPolicy)
// and how metadata is written back (MetadataCommit).
//
//===----------------------------------------------------------------------===//

#include "hotswap/Code/CodeAppender.h"
#include "hotswap/Code/EntryPolicy.h"
#include "hotswap/Object/Layout.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Writer.h"

#include "llvm/ADT/StringExtras.h"
#include "gtest/gtest.h"

#include "TestTargets.h"
#include "TestUtil.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace hotswap::code;
using namespace hotswap::unittest;

namespace {

class CodeAppenderTest : public testing::Test {
protected:
  void SetUp() override {
    // Loaded memory ends at 0x1234.
    Bytes = textOnlyObject(0x234);
    Expected<std::unique_ptr<Object>> O =
        readObject(MemoryBufferRef(toStringRef(Bytes), "small.co"));
    ASSERT_OK(O);
    Obj = std::move(*O);
  }
  /// The segments a CodeAppender made.
  std::vector<const Segment *> appended() const {
    std::vector<const Segment *> Out;
    for (const auto &P : Obj->segments())
      if (P->IsNew)
        Out.push_back(P.get());
    return Out;
  }
  std::vector<uint8_t> Bytes;
  std::unique_ptr<Object> Obj;
};

TEST_F(CodeAppenderTest, FirstRegionStartsAPageAboveEverything) {
  CodeAppender A(*Obj);
  Expected<uint64_t> Next = A.nextAddress(256);
  ASSERT_OK(Next);
  EXPECT_EQ(*Next, 0x2000u);
  Expected<Section &> S =
      A.append(CodePurpose::EntryStubs, 256, ELF::SHF_EXECINSTR,
               std::vector<uint8_t>(0x300, 0xbf));
  ASSERT_OK(S);
  EXPECT_EQ(S->Addr, 0x2000u);
  EXPECT_EQ(S->Name, ".hotswap.text");
  EXPECT_EQ(S->Flags, uint64_t(ELF::SHF_ALLOC | ELF::SHF_EXECINSTR));
  std::vector<const Segment *> Segs = appended();
  ASSERT_EQ(Segs.size(), 1u);
  EXPECT_EQ(Segs[0]->Type, uint32_t(ELF::PT_LOAD));
  EXPECT_EQ(Segs[0]->Flags, uint32_t(ELF::PF_R | ELF::PF_X));
  EXPECT_EQ(Segs[0]->VAddr, 0x2000u);
  EXPECT_EQ(Segs[0]->MemSize, 0x300u);
  EXPECT_EQ(Obj->loadSegmentFor(0x2000, 0x300), Segs[0]);
}

TEST_F(CodeAppenderTest, EveryRegionOfARunGoesInOneSegment) {
  ASSERT_OK(CodeAppender(*Obj).append(CodePurpose::EntryStubs, 256,
                                      ELF::SHF_EXECINSTR,
                                      std::vector<uint8_t>(0x140, 1)));
  // A second appender in the same run (another pass) continues the segment,
  // after what it holds, as aligned as the region asks.
  CodeAppender B(*Obj);
  Expected<uint64_t> Next = B.nextAddress(256);
  ASSERT_OK(Next);
  EXPECT_EQ(*Next, 0x2200u);
  Expected<Section &> Data =
      B.append(CodePurpose::SwapImage, 256, ELF::SHF_WRITE,
               std::vector<uint8_t>(0x10, 2));
  ASSERT_OK(Data);
  EXPECT_EQ(Data->Addr, 0x2200u);
  EXPECT_EQ(Data->Name, ".hotswap.swap.data");
  std::vector<const Segment *> Segs = appended();
  ASSERT_EQ(Segs.size(), 1u);
  // The union of what its regions need.
  EXPECT_EQ(Segs[0]->Flags, uint32_t(ELF::PF_R | ELF::PF_X | ELF::PF_W));
  ASSERT_EQ(Segs[0]->Members.size(), 2u);
  EXPECT_EQ(Segs[0]->MemSize, 0x210u);

  // Laid out and written, the regions are where their addresses say.
  Expected<std::unique_ptr<MemoryBuffer>> Out = writeObjectToBuffer(*Obj);
  ASSERT_OK(Out);
  Expected<std::unique_ptr<Object>> Back =
      readObject((*Out)->getMemBufferRef());
  ASSERT_OK(Back);
  Expected<ArrayRef<uint8_t>> At = (*Back)->bytesAt(0x2200, 0x10);
  ASSERT_OK(At);
  EXPECT_EQ(*At, ArrayRef<uint8_t>(std::vector<uint8_t>(0x10, 2)));
  unsigned NewLoads = 0;
  for (const auto &P : (*Back)->segments())
    if (P->Type == ELF::PT_LOAD && P->VAddr >= 0x2000)
      ++NewLoads;
  EXPECT_EQ(NewLoads, 1u);
}

TEST_F(CodeAppenderTest, AnImageKeepsItsAddressesModuloItsAlignment) {
  // An image of two PT_LOADs at 0x10000 (code) and 0x20100 (data + bss),
  // aligned to 64 KiB: the delta is a multiple of that.
  std::vector<uint8_t> Code(0x100, 0xaa), Data(0x20, 0xbb);
  ImageLoad Loads[] = {
      {0x10000, 0x100, 0x100, ELF::PF_R | ELF::PF_X, Code},
      {0x20100, 0x20, 0x80, ELF::PF_R | ELF::PF_W, Data},
  };
  Expected<uint64_t> D =
      CodeAppender(*Obj).appendImage(Loads, 0x10000, 0x10000, "img.co");
  ASSERT_OK(D);
  EXPECT_EQ(*D % 0x10000, 0u);
  EXPECT_EQ(0x10000 + *D, 0x10000u); // the first free 64 KiB boundary
  std::vector<std::string> Names;
  for (const Segment *P : appended())
    for (const Section *S : P->Members)
      Names.push_back(S->Name + "@" + utohexstr(S->Addr));
  EXPECT_EQ(join(Names, " "), ".hotswap.swap.text@10000 "
                              ".hotswap.swap.data@20100 "
                              ".hotswap.swap.bss@20120");
  ASSERT_EQ(appended().size(), 1u);
  EXPECT_EQ(appended()[0]->MemSize, 0x20180u - 0x10000u);
  EXPECT_EQ(appended()[0]->FileSize, 0x20120u - 0x10000u);
}

TEST_F(CodeAppenderTest, AnImageAlignedFarAboveTheSegmentGetsItsOwn) {
  ASSERT_OK(CodeAppender(*Obj).append(CodePurpose::EntryStubs, 256,
                                      ELF::SHF_EXECINSTR,
                                      std::vector<uint8_t>(0x100, 1)));
  // Aligned to 1 MiB, the image would leave ~1 MiB of zeros in the file
  // after the stubs at 0x2000: a second appended segment instead.
  std::vector<uint8_t> Code(0x10, 0xaa);
  ImageLoad Loads[] = {{0x100000, 0x10, 0x10, ELF::PF_R | ELF::PF_X, Code}};
  Expected<uint64_t> D =
      CodeAppender(*Obj).appendImage(Loads, 0x100000, 0x100000, "far.co");
  ASSERT_OK(D);
  EXPECT_EQ(0x100000 + *D, 0x100000u);
  std::vector<const Segment *> Segs = appended();
  ASSERT_EQ(Segs.size(), 2u);
  EXPECT_EQ(Segs[1]->VAddr, 0x100000u);
  // A page-aligned image after that shares the last segment.
  ImageLoad Near[] = {{0x1000, 0x10, 0x10, ELF::PF_R | ELF::PF_X, Code}};
  ASSERT_OK(CodeAppender(*Obj).appendImage(Near, 0x1000, 0x1000, "near.co"));
  EXPECT_EQ(appended().size(), 2u);
}

TEST_F(CodeAppenderTest, NoAddressSpaceLeftIsAnError) {
  std::vector<uint8_t> Code(16, 0);
  ImageLoad Huge[] = {{0x0, 16, UINT64_MAX - 0x100, ELF::PF_R, Code}};
  EXPECT_EQ(errorOf(CodeAppender(*Obj).appendImage(Huge, 0, 0x1000, "h.co")),
            "the image of 'h.co' does not fit above 0x2000");
  EXPECT_TRUE(appended().empty()); // nothing was added
}

/// An entry-policy verdict as text: the form ("short", "s[N:M]", "vcc") or
/// the error.
std::string formOf(const TargetInfo &T, const KernelDescriptor &KD,
                   uint64_t StubAddr, uint64_t Target, FormRules Rules = {}) {
  Expected<std::unique_ptr<StubEncoder>> Enc =
      StubEncoder::create(T, testMC(T), {});
  if (!Enc)
    return toString(Enc.takeError());
  Expected<StubSpec> S =
      chooseStubForm(T, KD, **Enc, {StubAddr, Target, false}, Rules);
  if (!S)
    return toString(S.takeError());
  if (S->Form == StubSpec::Short)
    return "short";
  if (S->Form == StubSpec::VCC)
    return "vcc";
  return "s[" + std::to_string(S->SGPR) + ":" + std::to_string(S->SGPR + 1) +
         "]";
}

TEST(EntryPolicyTest, ShortWhenInReachElseTheScratchPairAboveTheLiveIns) {
  TargetInfo T = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1030);
  KernelDescriptor KD;
  KD.ComputePgmRsrc2 = (6u << 1) | (1u << 7); // 6 user SGPRs, workgroup ID X
  EXPECT_EQ(formOf(T, KD, 0x10000, 0x1000), "short");
  EXPECT_EQ(formOf(T, KD, 0x10000, 0x1000, {/*AllowShort=*/false}), "s[8:9]");
  EXPECT_EQ(formOf(T, KD, 0x100000, 0x1000), "s[8:9]"); // out of reach
}

TEST(EntryPolicyTest, EnteringAStubSetsTheEntryAndClampsInstPref) {
  TargetInfo T = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  ASSERT_NE(T.InstPrefWidth, 0u);
  KernelDescriptor KD;
  KD.ComputePgmRsrc2 = 2u << 1;
  KD.setInstPrefSize(T, 3);
  Expected<EntryEffects> E =
      enterThroughStub(T, KD, 0x1000, 0x4000, 256, StubSpec::SGPRPair, 2);
  ASSERT_OK(E);
  EXPECT_EQ(KD.entryAddress(0x1000), std::optional<uint64_t>(0x4000));
  EXPECT_TRUE(E->InstPrefClamped);
  EXPECT_EQ(KD.instPrefSize(T), 2u); // 256 bytes: two cache lines
  EXPECT_FALSE(E->GranuleRaised);
  ASSERT_TRUE(E->SGPRCountFloor.has_value());
  EXPECT_EQ(*E->SGPRCountFloor, 4u);

  // The short form clobbers nothing: no floor.
  KernelDescriptor Short;
  Expected<EntryEffects> S =
      enterThroughStub(T, Short, 0x1000, 0x4000, 256, StubSpec::Short, 0);
  ASSERT_OK(S);
  EXPECT_FALSE(S->SGPRCountFloor.has_value());
}

TEST(EntryPolicyTest, Gfx9RaisesTheGranuleForAPairAboveTheAllocation) {
  TargetInfo T = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX900);
  KernelDescriptor KD;
  KD.setSGPRGranule(0); // 8 SGPRs, VCC and XNACK_MASK at the top
  KD.ComputePgmRsrc2 = (6u << 1) | (1u << 7);
  Expected<EntryEffects> E =
      enterThroughStub(T, KD, 0x1000, 0x4000, 256, StubSpec::SGPRPair, 8);
  ASSERT_OK(E);
  EXPECT_TRUE(E->GranuleRaised);
  EXPECT_GT(KD.allocatedSGPRs(T).value_or(0), 10u);
}

TEST(EntryPolicyTest, AnUnreachableEntryLeavesTheDescriptorAlone) {
  TargetInfo T = target(ELF::EF_AMDGPU_MACH_AMDGCN_GFX1100);
  KernelDescriptor KD;
  KD.setInstPrefSize(T, 3);
  KernelDescriptor Before = KD;
  EXPECT_EQ(errorOf(enterThroughStub(T, KD, 0xffffffffffff0000ull, 0x1000, 256,
                                     StubSpec::Short, 0)),
            "stub 0x1000 is not reachable from the descriptor at "
            "0xffffffffffff0000 with a signed 64-bit offset");
  EXPECT_EQ(KD.instPrefSize(T), Before.instPrefSize(T));
}

} // namespace
