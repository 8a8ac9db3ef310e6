//===- unittests/CounterCodeTest.cpp - Code that counts a block -----------===//
//
// code::counterCodeTarget reads counter code from its bytes, as verify
// does: the code the template assembles to adds to the counter its
// distance names, and any other shape, operand or register overlap is
// refused with a reason. Both forms: scalar (gfx9) and global (gfx11,
// gfx12), and checkBody's leave for EXEC given back.
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
#include <tuple>

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

/// \p Lines with placeholders bound by \p Regs (longest names first) and
/// \p Distance in place of the placeholder's, assembled.
std::vector<uint8_t>
assembleBound(const TargetMC &MC, const std::vector<std::string> &Lines,
              ArrayRef<std::pair<StringRef, StringRef>> Regs,
              uint32_t Distance) {
  std::string Text;
  for (std::string L : Lines) {
    for (auto [Name, Reg] : Regs)
      for (size_t P = L.find(Name.str()); P != std::string::npos;
           P = L.find(Name.str()))
        L.replace(P, Name.size(), Reg.str());
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

/// The scalar template with its placeholders bound and \p Distance in
/// place of the placeholder's, assembled.
std::vector<uint8_t> counterCode(const TargetMC &MC, uint32_t Distance,
                                 StringRef SP0 = "s[2:3]", StringRef S0 = "s1",
                                 StringRef SP1 = "s[8:9]",
                                 CounterUnit Unit = CounterUnit::Wave) {
  return assembleBound(MC, counterCodeLines(Unit),
                       {{"%sp1.0", "s8"},
                        {"%sp1.1", "s9"},
                        {"%sp0", SP0},
                        {"%sp1", SP1},
                        {"%s0", S0}},
                       Distance);
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

/// Based code (%rp0 = s[20:21], %rp1 = s[22:23]): the entry's with
/// \p Distance, or a block's at counter \p N.
std::vector<uint8_t> basedCode(const TargetMC &MC, bool Entry, uint32_t N = 0,
                               uint32_t Distance = 0) {
  std::vector<std::string> Lines =
      Entry
          ? basedCounterEntryLines(CounterKind{})
          : counterCodeLines(CounterKind{CounterForm::Scalar, CounterUnit::Wave,
                                         false, Generation::GFX9, true});
  for (std::string &L : Lines)
    if (size_t P = L.find("%nth"); P != std::string::npos)
      L.replace(P, 4, std::to_string(N));
  return assembleBound(MC, Lines,
                       {{"%rp0.0", "s20"},
                        {"%rp0.1", "s21"},
                        {"%rp0", "s[20:21]"},
                        {"%rp1", "s[22:23]"}},
                       Distance);
}

TEST(CounterCodeTest, BasedCodeAddsAtItsOffsetFromTheBase) {
  for (StringRef CPU : {"gfx900", "gfx90a", "gfx942"}) {
    SCOPED_TRACE(CPU.str());
    auto MC = mc(CPU);
    ASSERT_TRUE(MC);
    // The entry's: 28 bytes, the distance where the pass writes it.
    std::vector<uint8_t> E = basedCode(*MC, true, 0, 0x800);
    ASSERT_EQ(E.size(), 28u);
    EXPECT_EQ(support::endian::read32le(E.data() + CounterDistanceAt), 0x800u);
    Expected<CounterTarget> T = counterCodeTarget(*MC, E, At);
    ASSERT_TRUE(bool(T)) << toString(T.takeError());
    EXPECT_TRUE(T->SetsBase);
    ASSERT_TRUE(T->Based);
    EXPECT_EQ(T->Based->Base, "s[20:21]");
    EXPECT_EQ(T->Based->One, "s[22:23]");
    EXPECT_EQ(T->Counter, At + 4 + 0x800);
    // Another block's: 8 bytes, its counter's offset from the base.
    std::vector<uint8_t> B = basedCode(*MC, false, 5);
    ASSERT_EQ(B.size(), 8u);
    T = counterCodeTarget(*MC, B, At);
    ASSERT_TRUE(bool(T)) << toString(T.takeError());
    EXPECT_FALSE(T->SetsBase);
    EXPECT_EQ(T->Counter, 40u);
    EXPECT_EQ(T->Based->Base, "s[20:21]");
    // With the s_nop a seam may need around it.
    Expected<std::vector<uint8_t>> G = MC->assemble(
        "s_nop 0\ns_atomic_add_x2 s[22:23], s[20:21], 0x10\ns_nop 1\n");
    ASSERT_TRUE(bool(G));
    EXPECT_EQ(why(counterCodeTarget(*MC, *G, At)), "counts at 16");
  }
}

TEST(CounterCodeTest, BasedCodeOfOtherShapesIsRefused) {
  auto MC = mc("gfx90a");
  ASSERT_TRUE(MC);
  auto Why = [&](StringRef Asm) {
    Expected<std::vector<uint8_t>> B = MC->assemble(Asm);
    if (!B)
      return toString(B.takeError());
    return why(counterCodeTarget(*MC, *B, At));
  };
  // An atomic that returns writes its data registers.
  EXPECT_NE(Why("s_atomic_add_x2 s[22:23], s[20:21], 0x8 glc")
                .find("returns the old value"),
            std::string::npos);
  // Counters are 8 bytes apart.
  EXPECT_NE(Why("s_atomic_add_x2 s[22:23], s[20:21], 0x4")
                .find("not s_atomic_add_x2 of a counter"),
            std::string::npos);
  // The data is the base.
  EXPECT_EQ(Why("s_atomic_add_x2 s[20:21], s[20:21], 0x8"),
            "its registers overlap");
  // The entry's adds at the base and sets the one.
  EXPECT_NE(Why("s_getpc_b64 s[20:21]\ns_add_u32 s20, s20, 0x100\n"
                "s_addc_u32 s21, s21, 0\ns_mov_b64 s[22:23], 1\n"
                "s_atomic_add_x2 s[22:23], s[20:21], 0x8\n")
                .find("not to the base"),
            std::string::npos);
  EXPECT_NE(Why("s_getpc_b64 s[20:21]\ns_add_u32 s20, s20, 0x100\n"
                "s_addc_u32 s21, s21, 0\ns_mov_b64 s[22:23], 2\n"
                "s_atomic_add_x2 s[22:23], s[20:21], 0x0\n")
                .find("not s_mov_b64 s[22:23], 1"),
            std::string::npos);
  // The base's address is the PC's plus the distance, carried.
  EXPECT_NE(Why("s_getpc_b64 s[20:21]\ns_add_u32 s21, s21, 0x100\n"
                "s_addc_u32 s20, s20, 0\ns_mov_b64 s[22:23], 1\n"
                "s_atomic_add_x2 s[22:23], s[20:21], 0x0\n")
                .find("not the base's address"),
            std::string::npos);
}

TEST(CounterCodeTest, BasedCodeLeavesItsAtomicInFlight) {
  auto MC = mc("gfx90a");
  ASSERT_TRUE(MC);
  const RegisterModel &RM = RegisterModel::get(MC->regInfo());
  CounterSet Set = CounterSet::of(Generation::GFX9);
  std::vector<uint8_t> B = basedCode(*MC, false, 3);
  // No register written; the atomic returns nothing, so it may stay in
  // flight, but only with leave.
  EXPECT_TRUE(checkBody(*MC, B, false, Set, RM.emptySet(), RM.emptySet(), true,
                        /*StoresMayStay=*/true)
                  .empty());
  EXPECT_FALSE(
      checkBody(*MC, B, false, Set, RM.emptySet(), RM.emptySet(), true, false)
          .empty());
  // A load may never stay in flight.
  Expected<std::vector<uint8_t>> L =
      MC->assemble("s_load_dword s30, s[20:21], 0x0\n");
  ASSERT_TRUE(bool(L));
  RegSet S30 = RM.emptySet();
  RM.addSGPRs(30, 1, S30);
  EXPECT_FALSE(
      checkBody(*MC, *L, false, Set, S30, RM.emptySet(), true, true).empty());
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

/// The global form for \p Gen, bound to fixed registers (%sp0 = s[4:5],
/// %s0 = s3, %sp1 = s[6:7], %v0 = v1, %vp0 = v[2:3]), with \p Distance.
std::vector<uint8_t> globalCode(const TargetMC &MC, Generation Gen,
                                uint32_t Distance, bool Wave32,
                                CounterUnit Unit = CounterUnit::Wave) {
  return assembleBound(
      MC, counterCodeLines(CounterKind{CounterForm::Global, Unit, Wave32, Gen}),
      {{"%vp0.0", "v2"},
       {"%vp0.1", "v3"},
       {"%vp0", "v[2:3]"},
       {"%sp0", "s[4:5]"},
       {"%sp1", "s[6:7]"},
       {"%s0", "s3"},
       {"%v0", "v1"}},
      Distance);
}

TEST(CounterCodeTest, TheGlobalFormAddsToTheCounterItsDistanceNames) {
  EXPECT_EQ(counterForm(Generation::GFX9), CounterForm::Scalar);
  EXPECT_EQ(counterForm(Generation::GFX11), CounterForm::Global);
  EXPECT_EQ(counterForm(Generation::GFX12), CounterForm::Global);
  EXPECT_EQ(counterForm(Generation::GFX10), CounterForm::Global);
  EXPECT_EQ(counterForm(Generation::GFX8), CounterForm::Flat);
  EXPECT_EQ(counterForm(Generation::GFX125), CounterForm::Global);
  EXPECT_FALSE(counterForm(Generation::GFX7));
  EXPECT_FALSE(counterForm(Generation::GFX6));
  // gfx10: two waits more (8 bytes); gfx11+ counting waves: a wait for
  // the copy of EXEC before it is given back (4 bytes).
  for (auto [CPU, Gen, Size] : {std::tuple<StringRef, Generation, size_t>{
                                    "gfx1100", Generation::GFX11, 52},
                                {"gfx1151", Generation::GFX11, 52},
                                {"gfx1201", Generation::GFX12, 56},
                                {"gfx1250", Generation::GFX125, 56},
                                {"gfx1030", Generation::GFX10, 56},
                                {"gfx1010", Generation::GFX10, 56}}) {
    SCOPED_TRACE(CPU.str());
    auto MC = mc(CPU);
    ASSERT_TRUE(MC);
    for (bool Wave32 : {true, false})
      for (CounterUnit Unit : {CounterUnit::Wave, CounterUnit::Lane}) {
        const CounterKind Kind{CounterForm::Global, Unit, Wave32, Gen};
        std::vector<uint8_t> B = globalCode(*MC, Gen, 0x53c, Wave32, Unit);
        // Counting lanes leaves out the three EXEC moves (and the wait).
        const size_t Moves = Gen == Generation::GFX10 ? 12 : 16;
        ASSERT_EQ(B.size(), Unit == CounterUnit::Wave ? Size : Size - Moves);
        const CounterLayout L = counterLayout(Kind);
        EXPECT_EQ(support::endian::read32le(B.data() + L.DistanceAt), 0x53cu);
        Expected<CounterTarget> T = counterCodeTarget(*MC, B, At);
        ASSERT_TRUE(bool(T)) << toString(T.takeError());
        EXPECT_EQ(T->Counter, At + L.PCAt + 0x53c);
        EXPECT_EQ(T->Unit, Unit);
        EXPECT_EQ(T->ExecLo, Wave32 && Unit == CounterUnit::Wave);
      }
  }
}

/// The flat form bound to fixed registers (%sp0 = s[4:5], %sp1 = s[6:7],
/// %vp0 = v[2:3], %vp1 = v[4:5]), with \p Distance.
std::vector<uint8_t> flatCode(const TargetMC &MC, uint32_t Distance,
                              CounterUnit Unit = CounterUnit::Wave) {
  return assembleBound(MC,
                       counterCodeLines(CounterKind{CounterForm::Flat, Unit,
                                                    false, Generation::GFX8}),
                       {{"%vp0.0", "v2"},
                        {"%vp0.1", "v3"},
                        {"%vp1.0", "v4"},
                        {"%vp1.1", "v5"},
                        {"%vp0", "v[2:3]"},
                        {"%vp1", "v[4:5]"},
                        {"%sp0.0", "s4"},
                        {"%sp0.1", "s5"},
                        {"%sp0", "s[4:5]"},
                        {"%sp1", "s[6:7]"}},
                       Distance);
}

TEST(CounterCodeTest, TheFlatFormAddsToTheCounterItsDistanceNames) {
  auto MC = mc("gfx803");
  ASSERT_TRUE(MC);
  for (CounterUnit Unit : {CounterUnit::Wave, CounterUnit::Lane}) {
    const CounterKind Kind{CounterForm::Flat, Unit, false, Generation::GFX8};
    std::vector<uint8_t> B = flatCode(*MC, 0x2a4, Unit);
    ASSERT_EQ(B.size(), Unit == CounterUnit::Wave ? 56u : 44u);
    const CounterLayout L = counterLayout(Kind);
    EXPECT_EQ(support::endian::read32le(B.data() + L.DistanceAt), 0x2a4u);
    Expected<CounterTarget> T = counterCodeTarget(*MC, B, At);
    ASSERT_TRUE(bool(T)) << toString(T.takeError());
    EXPECT_EQ(T->Counter, At + L.PCAt + 0x2a4);
    EXPECT_EQ(T->Unit, Unit);
  }
  auto Why = [&](StringRef Text) {
    Expected<std::vector<uint8_t>> A = MC->assemble(Text);
    EXPECT_TRUE(bool(A)) << Text.str();
    Expected<CounterTarget> T =
        counterCodeTarget(*MC, A ? *A : std::vector<uint8_t>{}, At);
    return T ? std::string("<none>") : toString(T.takeError());
  };
  const std::string Head = "s_getpc_b64 s[4:5]\ns_add_u32 s4, s4, 0x100\n"
                           "s_addc_u32 s5, s5, 0\n";
  const std::string Tail = "flat_atomic_add_x2 v[2:3], v[4:5]\n"
                           "s_waitcnt vmcnt(0) lgkmcnt(0)\n";
  EXPECT_EQ(Why(Head +
                "v_mov_b32 v2, s4\nv_mov_b32 v3, s5\nv_mov_b32 v4, 1\n"
                "v_mov_b32 v5, 0\n" +
                Tail),
            "<none>");
  // The distance added to the high half.
  EXPECT_EQ(Why("s_getpc_b64 s[4:5]\ns_add_u32 s5, s5, 0x100\n"
                "s_addc_u32 s4, s4, 0\nv_mov_b32 v2, s4\nv_mov_b32 v3, s5\n"
                "v_mov_b32 v4, 1\nv_mov_b32 v5, 0\n" +
                Tail),
            "instructions 2 and 3 are 's_add_u32 s5, s5, 0x100' and "
            "'s_addc_u32 s4, s4, 0', not the counter's address");
  // The address's halves, or the data's, swapped.
  EXPECT_EQ(Why(Head +
                "v_mov_b32 v3, s4\nv_mov_b32 v2, s5\nv_mov_b32 v4, 1\n"
                "v_mov_b32 v5, 0\n" +
                Tail),
            "its operands are not those of counter code");
  EXPECT_EQ(Why(Head +
                "v_mov_b32 v2, s4\nv_mov_b32 v3, s5\nv_mov_b32 v5, 1\n"
                "v_mov_b32 v4, 0\n" +
                Tail),
            "its operands are not those of counter code");
  // Address and data in one pair.
  EXPECT_EQ(Why(Head + "v_mov_b32 v2, s4\nv_mov_b32 v3, s5\nv_mov_b32 v2, 1\n"
                       "v_mov_b32 v3, 0\nflat_atomic_add_x2 v[2:3], v[2:3]\n"
                       "s_waitcnt vmcnt(0) lgkmcnt(0)\n"),
            "its registers overlap");
  // Only vmcnt waited for.
  EXPECT_EQ(Why(Head + "v_mov_b32 v2, s4\nv_mov_b32 v3, s5\nv_mov_b32 v4, 1\n"
                       "v_mov_b32 v5, 0\nflat_atomic_add_x2 v[2:3], v[4:5]\n"
                       "s_waitcnt vmcnt(0)\n"),
            "its wait is 's_waitcnt vmcnt(0)', not s_waitcnt vmcnt(0) "
            "lgkmcnt(0)");
}

TEST(CounterCodeTest, TheGlobalFormGivesEXECBack) {
  auto MC = mc("gfx1100");
  ASSERT_TRUE(MC);
  const RegisterModel &RM = RegisterModel::get(MC->regInfo());
  CounterSet Set = CounterSet::of(Generation::GFX11);
  std::vector<uint8_t> B = globalCode(*MC, Generation::GFX11, 0x100, true);
  // What it may write: s3-s5 and v1-v3; EXEC is live.
  RegSet Writable = RM.emptySet();
  RM.addSGPRs(3, 3, Writable);
  RM.addVGPRs(1, 3, Writable);
  EXPECT_TRUE(
      checkBody(*MC, B, true, Set, Writable, RM.emptySet(), true).empty());
  auto Asm = [&](StringRef Text) {
    Expected<std::vector<uint8_t>> A = MC->assemble(Text);
    EXPECT_TRUE(bool(A)) << Text.str();
    return A ? *A : std::vector<uint8_t>{};
  };
  auto Problems = [&](StringRef Text) {
    std::string Out;
    for (const BodyProblem &P :
         checkBody(*MC, Asm(Text), true, Set, Writable, RM.emptySet()))
      Out +=
          (P.Insn ? std::to_string(*P.Insn + 1) + ": " : "") + P.Message + "\n";
    return Out;
  };
  // Saved and given back: nothing wrong.
  EXPECT_EQ(Problems("s_mov_b32 s3, exec_lo\ns_mov_b32 exec_lo, 1\n"
                     "v_mov_b32 v1, 0\ns_mov_b32 exec_lo, s3\n"),
            "");
  // Not given back.
  EXPECT_EQ(Problems("s_mov_b32 s3, exec_lo\ns_mov_b32 exec_lo, 1\n"),
            "2: s_mov_b32 writes exec_lo, which the site does not give "
            "(live, written by a load in flight, or outside the kernel's "
            "allocation)\n");
  // The copy changed before it is given back.
  EXPECT_EQ(Problems("s_mov_b32 s3, exec_lo\ns_mov_b32 exec_lo, 1\n"
                     "s_mov_b32 s3, 0\ns_mov_b32 exec_lo, s3\n"),
            "2: s_mov_b32 writes exec_lo, which the site does not give "
            "(live, written by a load in flight, or outside the kernel's "
            "allocation)\n");
  // Saved after it was changed: the copy is not EXEC's value.
  EXPECT_EQ(Problems("s_mov_b32 exec_lo, 1\ns_mov_b32 s3, exec_lo\n"
                     "s_mov_b32 exec_lo, s3\n"),
            "1: s_mov_b32 writes exec_lo, which the site does not give "
            "(live, written by a load in flight, or outside the kernel's "
            "allocation)\n");
  // Given back from another register than its copy.
  EXPECT_EQ(Problems("s_mov_b32 s3, exec_lo\ns_mov_b32 exec_lo, 1\n"
                     "s_mov_b32 exec_lo, s4\n"),
            "2: s_mov_b32 writes exec_lo, which the site does not give "
            "(live, written by a load in flight, or outside the kernel's "
            "allocation)\n");
}

TEST(CounterCodeTest, OtherCodeIsNotGlobalCounterCode) {
  auto MC = mc("gfx1100");
  ASSERT_TRUE(MC);
  auto Asm = [&](StringRef Text) {
    Expected<std::vector<uint8_t>> B = MC->assemble(Text);
    EXPECT_TRUE(bool(B)) << Text.str();
    return B ? *B : std::vector<uint8_t>{};
  };
  const std::string Head = "s_waitcnt_depctr 0\ns_getpc_b64 s[4:5]\n"
                           "s_mov_b32 s3, exec_lo\ns_mov_b32 exec_lo, 1\n"
                           "v_mov_b32 v1, 0x100\n";
  const std::string Tail = "global_atomic_add_u64 v1, v[2:3], s[4:5]\n"
                           "s_waitcnt_vscnt null, 0\n"
                           "s_waitcnt_depctr 0xfffe\n"
                           "s_mov_b32 exec_lo, s3\n";
  // The template itself.
  EXPECT_EQ(
      why(counterCodeTarget(
          *MC, Asm(Head + "v_mov_b32 v2, 1\nv_mov_b32 v3, 0\n" + Tail), At)),
      "counts at " + std::to_string(At + 8 + 0x100));
  // Data 1 in the high half.
  EXPECT_EQ(
      why(counterCodeTarget(
          *MC, Asm(Head + "v_mov_b32 v2, 0\nv_mov_b32 v3, 1\n" + Tail), At)),
      "its operands are not those of counter code");
  // Data registers that are not a pair: the atomic adds other ones.
  EXPECT_EQ(
      why(counterCodeTarget(
          *MC, Asm(Head + "v_mov_b32 v2, 1\nv_mov_b32 v7, 0\n" + Tail), At)),
      "its atomic is 'global_atomic_add_u64 v1, v[2:3], s[4:5]', not "
      "'global_atomic_add_u64 v1, v2 v7, s[4:5]'");
  // An offset on the atomic: another counter.
  EXPECT_EQ(why(counterCodeTarget(
                *MC,
                Asm(Head + "v_mov_b32 v2, 1\nv_mov_b32 v3, 0\n" +
                    "global_atomic_add_u64 v1, v[2:3], s[4:5] offset:8\n"
                    "s_waitcnt_vscnt null, 0\ns_waitcnt_depctr 0xfffe\n"
                    "s_mov_b32 exec_lo, s3\n"),
                At)),
            "its atomic is 'global_atomic_add_u64 v1, v[2:3], s[4:5] "
            "offset:8', not 'global_atomic_add_u64 v1, v[2:3], s[4:5]'");
  // Two lanes (EXEC set to 3).
  EXPECT_EQ(
      why(counterCodeTarget(*MC,
                            Asm("s_waitcnt_depctr 0\ns_getpc_b64 s[4:5]\n"
                                "s_mov_b32 s3, exec_lo\ns_mov_b32 exec_lo, 3\n"
                                "v_mov_b32 v1, 0x100\nv_mov_b32 v2, 1\n"
                                "v_mov_b32 v3, 0\n" +
                                Tail),
                            At)),
      "instruction 4 is 's_mov_b32 exec_lo, 3', not s_mov_b32 "
      "exec_lo, 1");
  // The offset register is the PC's.
  EXPECT_EQ(why(counterCodeTarget(
                *MC,
                Asm("s_waitcnt_depctr 0\ns_getpc_b64 s[4:5]\n"
                    "s_mov_b32 s4, exec_lo\ns_mov_b32 exec_lo, 1\n"
                    "v_mov_b32 v1, 0x100\nv_mov_b32 v2, 1\n"
                    "v_mov_b32 v3, 0\n"
                    "global_atomic_add_u64 v1, v[2:3], s[4:5]\n"
                    "s_waitcnt_vscnt null, 0\ns_waitcnt_depctr 0xfffe\n"
                    "s_mov_b32 exec_lo, s4\n"),
                At)),
            "its registers overlap");
  // EXEC given back without waiting for the SALU's copy of it (gfx11+).
  EXPECT_EQ(
      why(counterCodeTarget(*MC,
                            Asm(Head + "v_mov_b32 v2, 1\nv_mov_b32 v3, 0\n" +
                                "global_atomic_add_u64 v1, v[2:3], s[4:5]\n"
                                "s_waitcnt_vscnt null, 0\ns_nop 0\n"
                                "s_mov_b32 exec_lo, s3\n"),
                            At)),
      "instruction 10 is 's_nop 0', not a wait for the SALU's write "
      "of s3 (sa_sdst)");
  // A partial dependency wait.
  EXPECT_EQ(
      why(counterCodeTarget(
              *MC,
              Asm("s_waitcnt_depctr 0xfffe\ns_getpc_b64 s[4:5]\n"
                  "s_mov_b32 s3, exec_lo\ns_mov_b32 exec_lo, 1\n"
                  "v_mov_b32 v1, 0x100\nv_mov_b32 v2, 1\nv_mov_b32 v3, 0\n" +
                  Tail),
              At))
          .substr(0, 25),
      "its dependency wait is 's");
}

} // namespace
