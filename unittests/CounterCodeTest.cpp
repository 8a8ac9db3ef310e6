//===- unittests/CounterCodeTest.cpp - Code that counts a block -----------===//
//
// code::counterCodeTarget reads counter code from its bytes, as verify
// does: the code the template assembles to adds to the counter its
// distance names, and any other shape, operand or register overlap is
// refused with a reason.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Code/CounterCode.h"

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Registers.h"
#include "hotswap/Code/SiteSafety.h"
#include "hotswap/Code/WaitCounts.h"

#include "llvm/Support/Endian.h"

#include "gtest/gtest.h"

#include <string>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;
using namespace hotswap::code;

namespace {

constexpr uint64_t At = 0x3000;

std::unique_ptr<TargetMC> mc(StringRef MCPU) {
  Expected<std::unique_ptr<TargetMC>> MC = TargetMC::create(MCPU, "");
  if (!MC) {
    ADD_FAILURE() << toString(MC.takeError());
    return nullptr;
  }
  return std::move(*MC);
}

/// The template with its placeholders bound and \p Distance in place of
/// the placeholder's, assembled.
std::vector<uint8_t> counterCode(const TargetMC &MC, uint32_t Distance,
                                 StringRef SP0 = "s[2:3]", StringRef S0 = "s1",
                                 StringRef SP1 = "s[8:9]",
                                 CounterUnit Unit = CounterUnit::Wave) {
  std::string Text;
  for (std::string L : counterCodeLines(Unit)) {
    for (auto [Name, Reg] : {std::pair<StringRef, StringRef>{"%sp1.0", "s8"},
                             {"%sp1.1", "s9"},
                             {"%sp0", SP0},
                             {"%sp1", SP1},
                             {"%s0", S0}}) {
      size_t P = L.find(Name.str());
      if (P != std::string::npos)
        L.replace(P, Name.size(), Reg.str());
    }
    size_t P = L.find(std::to_string(CounterDistancePlaceholder));
    if (P != std::string::npos)
      L.replace(P, std::to_string(CounterDistancePlaceholder).size(),
                std::to_string(Distance));
    Text += L + "\n";
  }
  Expected<std::vector<uint8_t>> B = MC.assemble(Text);
  if (!B) {
    ADD_FAILURE() << toString(B.takeError());
    return {};
  }
  return *B;
}

std::string why(Expected<CounterTarget> T) {
  if (T)
    return "counts at " + std::to_string(T->Counter);
  return toString(T.takeError());
}

TEST(CounterCodeTest, TheTemplateAddsToTheCounterItsDistanceNames) {
  for (StringRef CPU : {"gfx900", "gfx90a", "gfx942", "gfx950"}) {
    SCOPED_TRACE(CPU.str());
    auto MC = mc(CPU);
    ASSERT_TRUE(MC);
    std::vector<uint8_t> B = counterCode(*MC, 0x53c);
    ASSERT_EQ(B.size(), 28u);
    // The distance is where the pass writes it.
    EXPECT_EQ(support::endian::read32le(B.data() + CounterDistanceAt), 0x53cu);
    Expected<CounterTarget> T = counterCodeTarget(*MC, B, At);
    ASSERT_TRUE(bool(T)) << toString(T.takeError());
    EXPECT_EQ(T->Counter, At + 4 + 0x53c); // the PC after s_getpc_b64
    EXPECT_EQ(T->Unit, CounterUnit::Wave);
    // The largest distance: the offset is 32-bit unsigned.
    T = counterCodeTarget(*MC, counterCode(*MC, 0xfffffff0), At);
    ASSERT_TRUE(bool(T)) << toString(T.takeError());
    EXPECT_EQ(T->Counter, At + 4 + 0xfffffff0);
    // Counting lanes: 32 bytes, the same distance in the same place.
    std::vector<uint8_t> L =
        counterCode(*MC, 0x53c, "s[2:3]", "s1", "s[8:9]", CounterUnit::Lane);
    ASSERT_EQ(L.size(), 32u);
    EXPECT_EQ(support::endian::read32le(L.data() + CounterDistanceAt), 0x53cu);
    T = counterCodeTarget(*MC, L, At);
    ASSERT_TRUE(bool(T)) << toString(T.takeError());
    EXPECT_EQ(T->Counter, At + 4 + 0x53c);
    EXPECT_EQ(T->Unit, CounterUnit::Lane);
  }
}

TEST(CounterCodeTest, TheTemplateIsStraightLineAndWaitsForItsAtomic) {
  auto MC = mc("gfx90a");
  ASSERT_TRUE(MC);
  const RegisterModel &RM = RegisterModel::get(MC->regInfo());
  std::vector<uint8_t> B = counterCode(*MC, 0x100);
  RegSet Writable = RM.emptySet();
  RM.addSGPRs(1, 3, Writable); // s1-s3
  RM.addSGPRs(8, 2, Writable); // s8-s9
  CounterSet Set = CounterSet::of(Generation::GFX9);
  EXPECT_TRUE(checkBody(*MC, B, false, Set, Writable, RM.emptySet(),
                        /*MayReadPC=*/true)
                  .empty());
  // Without leave to read the PC, it may not go anywhere.
  EXPECT_FALSE(checkBody(*MC, B, false, Set, Writable, RM.emptySet()).empty());
  // Its five SGPRs and nothing else: s8 not given is a problem.
  RegSet Less = RM.emptySet();
  RM.addSGPRs(1, 3, Less);
  EXPECT_FALSE(
      checkBody(*MC, B, false, Set, Less, RM.emptySet(), true).empty());
}

TEST(CounterCodeTest, OtherCodeIsNotCounterCode) {
  auto MC = mc("gfx90a");
  ASSERT_TRUE(MC);
  auto Asm = [&](StringRef Text) {
    Expected<std::vector<uint8_t>> B = MC->assemble(Text);
    EXPECT_TRUE(bool(B)) << Text.str();
    return B ? *B : std::vector<uint8_t>{};
  };
  // One instruction short.
  EXPECT_EQ(why(counterCodeTarget(
                *MC,
                Asm("s_getpc_b64 s[2:3]\ns_mov_b32 s1, 0x100\n"
                    "s_mov_b64 s[8:9], 1\ns_atomic_add_x2 s[8:9], s[2:3], "
                    "s1\n"),
                At)),
            "4 instructions, not the 5 or 6 of counter code");
  // The wait replaced.
  EXPECT_EQ(why(counterCodeTarget(
                *MC,
                Asm("s_getpc_b64 s[2:3]\ns_mov_b32 s1, 0x100\n"
                    "s_mov_b64 s[8:9], 1\ns_atomic_add_x2 s[8:9], s[2:3], "
                    "s1\ns_nop 0\n"),
                At)),
            "instruction 5 is s_nop 0, not s_waitcnt");
  // Adds 2.
  EXPECT_EQ(why(counterCodeTarget(
                *MC,
                Asm("s_getpc_b64 s[2:3]\ns_mov_b32 s1, 0x100\n"
                    "s_mov_b64 s[8:9], 2\ns_atomic_add_x2 s[8:9], s[2:3], "
                    "s1\ns_waitcnt lgkmcnt(0)\n"),
                At)),
            "its operands are not those of counter code");
  // The atomic's base is not the PC's register.
  EXPECT_EQ(why(counterCodeTarget(
                *MC,
                Asm("s_getpc_b64 s[2:3]\ns_mov_b32 s1, 0x100\n"
                    "s_mov_b64 s[8:9], 1\ns_atomic_add_x2 s[8:9], s[4:5], "
                    "s1\ns_waitcnt lgkmcnt(0)\n"),
                At)),
            "its atomic is 's_atomic_add_x2 s[8:9], s[4:5], s1', not "
            "'s_atomic_add_x2 s[8:9], s[2:3], s1'");
  // It returns the old value (glc): it writes its data registers.
  EXPECT_EQ(why(counterCodeTarget(
                *MC,
                Asm("s_getpc_b64 s[2:3]\ns_mov_b32 s1, 0x100\n"
                    "s_mov_b64 s[8:9], 1\ns_atomic_add_x2 s[8:9], s[2:3], "
                    "s1 glc\ns_waitcnt lgkmcnt(0)\n"),
                At)),
            "its atomic is 's_atomic_add_x2 s[8:9], s[2:3], s1 glc', not "
            "'s_atomic_add_x2 s[8:9], s[2:3], s1'");
  // Lanes: the count of another mask, or a high half that is not 0.
  EXPECT_EQ(
      why(counterCodeTarget(*MC,
                            Asm("s_getpc_b64 s[2:3]\ns_mov_b32 s1, 0x100\n"
                                "s_bcnt1_i32_b64 s8, vcc\ns_mov_b32 s9, 0\n"
                                "s_atomic_add_x2 s[8:9], s[2:3], s1\n"
                                "s_waitcnt lgkmcnt(0)\n"),
                            At)),
      "its lane count is 's_bcnt1_i32_b64 s8, vcc', not "
      "'s_bcnt1_i32_b64 s8, exec'");
  EXPECT_EQ(
      why(counterCodeTarget(*MC,
                            Asm("s_getpc_b64 s[2:3]\ns_mov_b32 s1, 0x100\n"
                                "s_bcnt1_i32_b64 s8, exec\ns_mov_b32 s9, 1\n"
                                "s_atomic_add_x2 s[8:9], s[2:3], s1\n"
                                "s_waitcnt lgkmcnt(0)\n"),
                            At)),
      "its operands are not those of counter code");
  // The distance register overwrites half of the PC.
  EXPECT_EQ(
      why(counterCodeTarget(*MC, counterCode(*MC, 0x100, "s[2:3]", "s3"), At)),
      "its registers overlap");
}

} // namespace
