//===- lib/Passes/ProvenanceEdits.cpp - Edits an output makes -------------===//

#include "hotswap/Passes/ProvenanceEdits.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <cstring>
#include <map>

using namespace llvm;
using namespace hotswap;

std::vector<OutputSpan> hotswap::resolveOutput(const OutputPieces &P,
                                               uint64_t Begin, uint64_t End) {
  std::vector<OutputSpan> Out;
  if (Begin >= End)
    return Out;
  // Later pieces win: go from the last, each taking what no later piece
  // took. Covered holds what is taken, as disjoint [start, end) intervals.
  std::map<uint64_t, uint64_t> Covered;
  for (auto It = P.Pieces.rbegin(); It != P.Pieces.rend(); ++It) {
    const OutputPiece &Piece = *It;
    const uint64_t PEnd = Piece.Offset + Piece.Bytes.size();
    const uint64_t A = std::max(Piece.Offset, Begin), B = std::min(PEnd, End);
    if (A >= B)
      continue;
    auto Take = [&](uint64_t From, uint64_t To) {
      if (From >= To)
        return;
      OutputSpan S;
      S.Offset = From;
      S.Size = To - From;
      S.Bytes = Piece.Bytes.data() + (From - Piece.Offset);
      S.AtInputOffset = Piece.InputOffset && *Piece.InputOffset == Piece.Offset;
      Out.push_back(S);
    };
    // The free parts of [A, B).
    uint64_t Cur = A;
    auto C = Covered.upper_bound(A);
    if (C != Covered.begin() && std::prev(C)->second > A)
      Cur = std::prev(C)->second;
    while (Cur < B) {
      if (C == Covered.end() || C->first >= B) {
        Take(Cur, B);
        break;
      }
      Take(Cur, C->first);
      Cur = std::max(Cur, C->second);
      ++C;
    }
    // Mark [A, B) taken, merged with what it touches.
    uint64_t NA = A, NB = B;
    auto First = Covered.upper_bound(A);
    if (First != Covered.begin() && std::prev(First)->second >= A)
      --First;
    auto Last = First;
    while (Last != Covered.end() && Last->first <= B) {
      NA = std::min(NA, Last->first);
      NB = std::max(NB, Last->second);
      ++Last;
    }
    Covered.erase(First, Last);
    Covered.emplace(NA, NB);
  }
  // What no piece covers is zeros.
  uint64_t Cur = Begin;
  for (const auto &[From, To] : Covered) {
    if (From > Cur)
      Out.push_back({Cur, From - Cur, nullptr, false});
    Cur = std::max(Cur, To);
  }
  if (Cur < End)
    Out.push_back({Cur, End - Cur, nullptr, false});
  llvm::sort(Out, [](const OutputSpan &X, const OutputSpan &Y) {
    return X.Offset < Y.Offset;
  });
  return Out;
}

namespace {
/// Appends [Off, Off+Size) to \p R, merging with the last range when fewer
/// than \p Gap bytes apart (ranges come in increasing order).
void appendRange(std::vector<ByteRange> &R, uint64_t Off, uint64_t Size,
                 uint64_t Gap) {
  if (!R.empty() && (Off <= R.back().end() || Off - R.back().end() < Gap)) {
    R.back().Size = std::max(R.back().end(), Off + Size) - R.back().Offset;
    return;
  }
  R.push_back({Off, Size});
}

/// The first index from \p I below \p N where \p A (zeros when null) and
/// \p B differ, or N. Eight bytes at a time: what the output edits is a
/// few fields in sections that are otherwise the input's bytes.
uint64_t firstDifference(const uint8_t *A, const uint8_t *B, uint64_t I,
                         uint64_t N) {
  for (; I + 8 <= N; I += 8) {
    uint64_t X = 0, Y;
    if (A)
      std::memcpy(&X, A + I, 8);
    std::memcpy(&Y, B + I, 8);
    if (X != Y) // (little-endian: the lowest differing bit is the first)
      return I + llvm::countr_zero(llvm::support::endian::byte_swap(
                     X ^ Y, llvm::endianness::little)) /
                     8;
  }
  for (; I < N; ++I)
    if ((A ? A[I] : 0) != B[I])
      return I;
  return N;
}
} // namespace

std::vector<ByteRange> hotswap::editedRanges(const OutputPieces &P,
                                             ArrayRef<uint8_t> Input,
                                             uint64_t Limit,
                                             uint64_t MergeGap) {
  Limit = std::min<uint64_t>(Limit, Input.size());
  std::vector<ByteRange> R;
  for (const OutputSpan &S : resolveOutput(P, 0, Limit)) {
    if (S.AtInputOffset)
      continue; // the input's own bytes
    const uint8_t *In = Input.data() + S.Offset;
    uint64_t I = 0;
    while (I < S.Size) {
      // The next differing byte, then the end of the differing run.
      I = firstDifference(S.Bytes, In, I, S.Size);
      if (I == S.Size)
        break;
      uint64_t J = I;
      if (S.Bytes) {
        while (J < S.Size && S.Bytes[J] != In[J])
          ++J;
      } else {
        while (J < S.Size && In[J] != 0)
          ++J;
      }
      appendRange(R, S.Offset + I, J - I, MergeGap);
      I = J;
    }
  }
  return R;
}

std::vector<ByteRange> hotswap::uniteRanges(ArrayRef<ByteRange> A,
                                            ArrayRef<ByteRange> B,
                                            uint64_t MergeGap) {
  std::vector<ByteRange> R;
  size_t I = 0, J = 0;
  while (I < A.size() || J < B.size()) {
    const ByteRange &Next =
        J == B.size() || (I < A.size() && A[I].Offset <= B[J].Offset) ? A[I++]
                                                                      : B[J++];
    if (Next.Size)
      appendRange(R, Next.Offset, Next.Size, MergeGap);
  }
  return R;
}

bool hotswap::rangesCover(ArrayRef<ByteRange> Outer,
                          ArrayRef<ByteRange> Inner) {
  size_t O = 0;
  for (const ByteRange &In : Inner) {
    while (O < Outer.size() && Outer[O].end() <= In.Offset)
      ++O;
    if (O == Outer.size() || Outer[O].Offset > In.Offset ||
        Outer[O].end() < In.end())
      return false;
  }
  return true;
}
