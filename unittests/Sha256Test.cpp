//===- Sha256Test.cpp - The hardware SHA-256 against llvm::SHA256 ---------===//

#include "hotswap/Support/Sha256.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "gtest/gtest.h"

#include <random>
#include <vector>

using namespace hotswap;

namespace {

std::string hex(const Sha256::Digest &D) {
  return llvm::toHex(llvm::ArrayRef<uint8_t>(D.data(), D.size()),
                     /*LowerCase=*/true);
}

std::string llvmHex(llvm::ArrayRef<uint8_t> Data) {
  std::array<uint8_t, 32> D = llvm::SHA256::hash(Data);
  return llvm::toHex(llvm::ArrayRef<uint8_t>(D.data(), D.size()), true);
}

std::vector<uint8_t> randomBytes(size_t N, uint32_t Seed) {
  std::mt19937 G(Seed);
  std::vector<uint8_t> V(N);
  for (uint8_t &B : V)
    B = uint8_t(G());
  return V;
}

// FIPS 180-4's examples (one block, two blocks) and the empty message.
TEST(Sha256Test, KnownDigests) {
  for (bool Hardware : {false, true}) {
    auto H = [&](llvm::StringRef S) {
      Sha256 X(Hardware);
      X.update(llvm::arrayRefFromStringRef(S));
      return hex(X.final());
    };
    EXPECT_EQ(H(""), "e3b0c44298fc1c149afbf4c8996fb924"
                     "27ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(H("abc"), "ba7816bf8f01cfea414140de5dae2223"
                        "b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(H("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039"
              "a33ce45964ff2167f6ecedd419db06c1");
  }
}

// From 512 MiB on, the length in bits needs more than 32 bits (where
// llvm::SHA256 goes wrong): 2^29 zero bytes and "abc" against sha256sum's
// digest. (Padding is common to both paths; this runs the faster one.)
TEST(Sha256Test, LengthsOverFourGigabits) {
  static const uint8_t Zeros[1 << 20] = {};
  Sha256 H;
  for (int I = 0; I < 512; ++I)
    H.update(Zeros);
  H.update(llvm::arrayRefFromStringRef("abc"));
  EXPECT_EQ(hex(H.final()), "717dbb38e902c8ccfec58bd3ad0c3491"
                            "3fab4850d86992ad326ed3ada0382653");
}

// Every length across the padding boundaries (55, 56, 63, 64, ...), fed
// whole and byte by byte.
TEST(Sha256Test, EveryLengthUpToFiveBlocksMatchesLLVM) {
  const std::vector<uint8_t> Data = randomBytes(320, 1);
  for (size_t N = 0; N <= Data.size(); ++N) {
    llvm::ArrayRef<uint8_t> A(Data.data(), N);
    const std::string Want = llvmHex(A);
    EXPECT_EQ(hex(Sha256::hash(A)), Want) << N;
    Sha256 Portable(/*Hardware=*/false);
    Portable.update(A);
    EXPECT_EQ(hex(Portable.final()), Want) << N;
    Sha256 Bytewise;
    for (uint8_t B : A)
      Bytewise.update(llvm::ArrayRef<uint8_t>(&B, 1));
    EXPECT_EQ(hex(Bytewise.final()), Want) << N;
  }
}

// Megabytes split at random points, as the provenance record hashes a file
// piece by piece.
TEST(Sha256Test, LargeInputsSplitAtRandomPointsMatchLLVM) {
  std::mt19937 G(7);
  for (uint32_t Seed = 0; Seed < 8; ++Seed) {
    const std::vector<uint8_t> Data =
        randomBytes((1u << 20) + G() % 4096, Seed);
    Sha256 H, Portable(/*Hardware=*/false);
    size_t Pos = 0;
    while (Pos < Data.size()) {
      const size_t N = std::min<size_t>(Data.size() - Pos, G() % 70000);
      H.update(llvm::ArrayRef<uint8_t>(Data.data() + Pos, N));
      Portable.update(llvm::ArrayRef<uint8_t>(Data.data() + Pos, N));
      Pos += N;
    }
    const std::string Want = llvmHex(Data);
    EXPECT_EQ(hex(H.final()), Want) << Seed;
    EXPECT_EQ(hex(Portable.final()), Want) << Seed;
  }
}

// Two messages hashed side by side (updateBoth) in pieces of random sizes,
// so that each lane starts at every offset within a block of the other's,
// one of them often ends first, and pieces are empty: each digest is its
// message's alone. With one object portable, the two are hashed one after
// the other.
TEST(Sha256Test, TwoMessagesSideBySideMatchLLVM) {
  std::mt19937 G(11);
  for (uint32_t Seed = 0; Seed < 24; ++Seed) {
    const std::vector<uint8_t> A = randomBytes(G() % 300000, 2 * Seed),
                               B = randomBytes(G() % 300000, 2 * Seed + 1);
    const bool PortableB = Seed % 4 == 3;
    Sha256 HA, HB(/*Hardware=*/!PortableB);
    size_t PA = 0, PB = 0;
    while (PA < A.size() || PB < B.size()) {
      // Mostly a few blocks and a ragged end; sometimes a single byte.
      const size_t Max = G() % 5 == 0 ? 2 : 9000;
      const size_t NA = std::min<size_t>(A.size() - PA, G() % Max),
                   NB = std::min<size_t>(B.size() - PB, G() % Max);
      Sha256::updateBoth(HA, llvm::ArrayRef<uint8_t>(A.data() + PA, NA), HB,
                         llvm::ArrayRef<uint8_t>(B.data() + PB, NB));
      PA += NA;
      PB += NB;
    }
    EXPECT_EQ(hex(HA.final()), llvmHex(A)) << Seed;
    EXPECT_EQ(hex(HB.final()), llvmHex(B)) << Seed;
  }
}

// Whole messages of every length up to three blocks against each other:
// the tails, the padding and the two-lane blocks in every combination.
TEST(Sha256Test, TwoShortMessagesOfEveryLength) {
  const std::vector<uint8_t> Data = randomBytes(200, 3);
  for (size_t NA = 0; NA <= 192; NA += 7)
    for (size_t NB = 0; NB <= 192; ++NB) {
      llvm::ArrayRef<uint8_t> A(Data.data(), NA), B(Data.data() + 8, NB);
      Sha256 HA, HB;
      Sha256::updateBoth(HA, A, HB, B);
      ASSERT_EQ(hex(HA.final()), llvmHex(A)) << NA << " " << NB;
      ASSERT_EQ(hex(HB.final()), llvmHex(B)) << NA << " " << NB;
    }
}

// The CPU feature check and what an object uses agree: on a CPU with the SHA
// extensions the tests above ran the hardware path beside the portable one.
// On a CPU without them there is no hardware path to have run, and the skip
// says so (CI=true counts it as a failure: CI's machines have them, so a
// skip there means the detection is broken).
TEST(Sha256Test, UsesTheHardwareWhereTheCPUHasIt) {
  EXPECT_EQ(Sha256().usesHardware(), Sha256::hasHardwareSha256());
  EXPECT_FALSE(Sha256(/*Hardware=*/false).usesHardware());
  if (!Sha256::hasHardwareSha256())
    GTEST_SKIP() << "this CPU has no SHA extensions: only the portable code "
                    "ran";
}

} // namespace
