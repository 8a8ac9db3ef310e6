//===- Support/Sha256.cpp - SHA-256 with the CPU's SHA extensions ---------===//
//
// FIPS 180-4's compression function, four rounds at a time with the x86 SHA
// extensions: SHA256RNDS2 does two rounds on the state held as (A,B,E,F) and
// (C,D,G,H); SHA256MSG1/MSG2 extend the message schedule four words at a
// time; two messages can go through it side by side. Without them, the same
// function a round at a time. Padding and the 64-bit length are FIPS 180-4's.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Support/Sha256.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define HOTSWAP_SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>
#endif

using namespace hotswap;

namespace {

constexpr uint32_t InitialState[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                      0xa54ff53a, 0x510e527f, 0x9b05688c,
                                      0x1f83d9ab, 0x5be0cd19};

alignas(16) constexpr uint32_t RoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t X, int N) { return (X >> N) | (X << (32 - N)); }

/// Compresses \p N 64-byte blocks at \p Data into \p State, one round at a
/// time (FIPS 180-4, 6.2.2).
void compressPortable(uint32_t State[8], const uint8_t *Data, size_t N) {
  for (; N != 0; --N, Data += 64) {
    uint32_t W[64];
    for (int T = 0; T < 16; ++T)
      W[T] = uint32_t(Data[4 * T]) << 24 | uint32_t(Data[4 * T + 1]) << 16 |
             uint32_t(Data[4 * T + 2]) << 8 | uint32_t(Data[4 * T + 3]);
    for (int T = 16; T < 64; ++T) {
      const uint32_t S0 =
          rotr(W[T - 15], 7) ^ rotr(W[T - 15], 18) ^ (W[T - 15] >> 3);
      const uint32_t S1 =
          rotr(W[T - 2], 17) ^ rotr(W[T - 2], 19) ^ (W[T - 2] >> 10);
      W[T] = W[T - 16] + S0 + W[T - 7] + S1;
    }
    uint32_t A = State[0], B = State[1], C = State[2], D = State[3],
             E = State[4], F = State[5], G = State[6], H = State[7];
    for (int T = 0; T < 64; ++T) {
      const uint32_t T1 = H + (rotr(E, 6) ^ rotr(E, 11) ^ rotr(E, 25)) +
                          ((E & F) ^ (~E & G)) + RoundConstants[T] + W[T];
      const uint32_t T2 = (rotr(A, 2) ^ rotr(A, 13) ^ rotr(A, 22)) +
                          ((A & B) ^ (A & C) ^ (B & C));
      H = G;
      G = F;
      F = E;
      E = D + T1;
      D = C;
      C = B;
      B = A;
      A = T1 + T2;
    }
    State[0] += A;
    State[1] += B;
    State[2] += C;
    State[3] += D;
    State[4] += E;
    State[5] += F;
    State[6] += G;
    State[7] += H;
  }
}

#ifdef HOTSWAP_SHA_NI

/// The state as the round instruction wants it: lanes 3..0 = A B E F and
/// C D G H (State[0..3] = A B C D, State[4..7] = E F G H, lane 0 first).
struct RoundState {
  __m128i ABEF, CDGH;
};

__attribute__((target("sha,sse4.1,ssse3"))) RoundState
loadState(const uint32_t State[8]) {
  __m128i ABCD = _mm_loadu_si128(reinterpret_cast<const __m128i *>(State));
  __m128i EFGH = _mm_loadu_si128(reinterpret_cast<const __m128i *>(State + 4));
  __m128i DCBA = _mm_shuffle_epi32(ABCD, 0x1B);
  __m128i HGFE = _mm_shuffle_epi32(EFGH, 0x1B);
  return {_mm_unpackhi_epi64(HGFE, DCBA),  // lanes: F E B A
          _mm_unpacklo_epi64(HGFE, DCBA)}; // lanes: H G D C
}

__attribute__((target("sha,sse4.1,ssse3"))) void storeState(uint32_t State[8],
                                                            RoundState R) {
  __m128i DCBA = _mm_unpackhi_epi64(R.CDGH, R.ABEF);
  __m128i HGFE = _mm_unpacklo_epi64(R.CDGH, R.ABEF);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(State),
                   _mm_shuffle_epi32(DCBA, 0x1B));
  _mm_storeu_si128(reinterpret_cast<__m128i *>(State + 4),
                   _mm_shuffle_epi32(HGFE, 0x1B));
}

/// Compresses \p N 64-byte blocks of each of \p Lanes messages, the I-th
/// at \p Data[I] into \p State[I], with the SHA extensions. Each pair of
/// rounds waits for the one before it (SHA256RNDS2's latency), so one
/// message leaves the unit idle half of the time: two messages in turn keep
/// it busy (~1.9x the bytes per second here); a third no longer fits the
/// registers and is slower.
template <int Lanes>
__attribute__((target("sha,sse4.1,ssse3"))) void
compressBlocks(uint32_t *const State[Lanes], const uint8_t *const Data[Lanes],
               size_t N) {
  // The message words are big-endian: swap the bytes of each 32-bit lane.
  const __m128i Swap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  RoundState R[Lanes];
  const uint8_t *P[Lanes];
  for (int L = 0; L < Lanes; ++L) {
    R[L] = loadState(State[L]);
    P[L] = Data[L];
  }
  for (; N != 0; --N) {
    RoundState Saved[Lanes];
    __m128i W[Lanes][4];
    for (int L = 0; L < Lanes; ++L) {
      Saved[L] = R[L];
      for (int I = 0; I < 4; ++I)
        W[L][I] = _mm_shuffle_epi8(
            _mm_loadu_si128(reinterpret_cast<const __m128i *>(P[L] + 16 * I)),
            Swap);
    }
    // Unrolled, the message vectors stay in registers; as a loop they go
    // through the stack and every group waits on a store (~20% slower).
#pragma GCC unroll 16
    for (int G = 0; G < 16; ++G) {
      const __m128i RC = _mm_load_si128(
          reinterpret_cast<const __m128i *>(RoundConstants + 4 * G));
#pragma GCC unroll 2
      for (int L = 0; L < Lanes; ++L) {
        __m128i &Words = W[L][G & 3];
        if (G >= 4) {
          // W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at once.
          const __m128i Prev = W[L][(G - 1) & 3], Prev2 = W[L][(G - 2) & 3];
          __m128i T = _mm_sha256msg1_epu32(Words, W[L][(G - 3) & 3]);
          T = _mm_add_epi32(T, _mm_alignr_epi8(Prev, Prev2, 4));
          Words = _mm_sha256msg2_epu32(T, Prev);
        }
        __m128i K = _mm_add_epi32(Words, RC);
        R[L].CDGH = _mm_sha256rnds2_epu32(R[L].CDGH, R[L].ABEF, K);
        K = _mm_shuffle_epi32(K, 0x0E); // the upper two words to the bottom
        R[L].ABEF = _mm_sha256rnds2_epu32(R[L].ABEF, R[L].CDGH, K);
      }
    }
    for (int L = 0; L < Lanes; ++L) {
      R[L].ABEF = _mm_add_epi32(R[L].ABEF, Saved[L].ABEF);
      R[L].CDGH = _mm_add_epi32(R[L].CDGH, Saved[L].CDGH);
      P[L] += 64;
    }
  }
  for (int L = 0; L < Lanes; ++L)
    storeState(State[L], R[L]);
}

bool detectSha() {
  unsigned A, B, C, D;
  if (!__get_cpuid(1, &A, &B, &C, &D))
    return false;
  const bool SSSE3 = C & bit_SSSE3, SSE41 = C & bit_SSE4_1;
  if (!__get_cpuid_count(7, 0, &A, &B, &C, &D))
    return false;
  return SSSE3 && SSE41 && (B & bit_SHA);
}
#endif

} // namespace

bool Sha256::hasHardwareSha256() {
#ifdef HOTSWAP_SHA_NI
  static const bool Has = detectSha();
  return Has;
#else
  return false;
#endif
}

Sha256::Sha256(bool UseHardware)
    : Hardware(UseHardware && hasHardwareSha256()) {
  std::memcpy(State, InitialState, sizeof(State));
}

void Sha256::blocks(const uint8_t *Data, size_t N) {
#ifdef HOTSWAP_SHA_NI
  if (Hardware) {
    uint32_t *const S[1] = {State};
    const uint8_t *const D[1] = {Data};
    return compressBlocks<1>(S, D, N);
  }
#endif
  compressPortable(State, Data, N);
}

void Sha256::update(llvm::ArrayRef<uint8_t> Data) {
  if (Data.empty()) // (its data may be null: no memcpy from it)
    return;
  Length += Data.size();
  const uint8_t *P = Data.data();
  size_t N = Data.size();
  if (PendingSize != 0) {
    const size_t Take = std::min(N, sizeof(Pending) - PendingSize);
    std::memcpy(Pending + PendingSize, P, Take);
    PendingSize += Take;
    P += Take;
    N -= Take;
    if (PendingSize < sizeof(Pending))
      return;
    blocks(Pending, 1);
    PendingSize = 0;
  }
  blocks(P, N / 64);
  P += N / 64 * 64;
  N %= 64;
  std::memcpy(Pending, P, N);
  PendingSize = N;
}

void Sha256::updateBoth(Sha256 &X, llvm::ArrayRef<uint8_t> DX, Sha256 &Y,
                        llvm::ArrayRef<uint8_t> DY) {
#ifdef HOTSWAP_SHA_NI
  if (X.Hardware && Y.Hardware && &X != &Y) {
    // Each to a block boundary; a message that ends before has nothing
    // left for the two lanes.
    auto ToBoundary = [](Sha256 &H, llvm::ArrayRef<uint8_t> &D) {
      if (H.PendingSize == 0)
        return;
      const size_t Take = std::min(D.size(), sizeof(H.Pending) - H.PendingSize);
      H.update(D.take_front(Take));
      D = D.drop_front(Take);
    };
    ToBoundary(X, DX);
    ToBoundary(Y, DY);
    const size_t N = std::min(DX.size(), DY.size()) / 64;
    if (N != 0) {
      uint32_t *const S[2] = {X.State, Y.State};
      const uint8_t *const D[2] = {DX.data(), DY.data()};
      compressBlocks<2>(S, D, N);
      X.Length += N * 64;
      Y.Length += N * 64;
      DX = DX.drop_front(N * 64);
      DY = DY.drop_front(N * 64);
    }
  }
#endif
  X.update(DX);
  Y.update(DY);
}

Sha256::Digest Sha256::final() {
  Digest D;
  // 0x80, zeros up to 56 mod 64, the length in bits (big-endian).
  uint8_t Tail[128] = {};
  std::memcpy(Tail, Pending, PendingSize);
  Tail[PendingSize] = 0x80;
  const size_t TailSize = PendingSize < 56 ? 64 : 128;
  const uint64_t Bits = Length * 8;
  for (int I = 0; I < 8; ++I)
    Tail[TailSize - 1 - I] = uint8_t(Bits >> (8 * I));
  blocks(Tail, TailSize / 64);
  for (int I = 0; I < 8; ++I)
    for (int J = 0; J < 4; ++J)
      D[4 * I + J] = uint8_t(State[I] >> (24 - 8 * J));
  return D;
}

Sha256::Digest Sha256::hash(llvm::ArrayRef<uint8_t> Data) {
  Sha256 H;
  H.update(Data);
  return H.final();
}
