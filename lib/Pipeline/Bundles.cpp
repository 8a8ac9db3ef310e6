//===- lib/Pipeline/Bundles.cpp - The code objects of a bundle ------------===//
//
// An offload bundle (plain or compressed) is rewritten with its AMDGPU code
// objects rewritten: entries, IDs and their order kept (clang's layout,
// the input's alignment), other entries copied verbatim, the input's
// version and method for a compressed bundle. A plain bundle is written as
// pieces -- its new header, each unchanged payload as the input's bytes,
// each rewritten code object as its own pieces -- never assembled in
// memory; a compressed one is assembled and compressed.
//
//===----------------------------------------------------------------------===//

#include "BundleRecord.h"
#include "Rewrite.h"

#include "hotswap/Bundle/Bundle.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/Sha256.h"

#include "llvm/Support/CheckedArithmetic.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;
using bundle::InputKind;

namespace {

/// Whether a bundle entry ID names an AMDGPU (HSA) target:
/// "<kind>-amdgcn-amd-amdhsa-<env>-<target id>".
bool isAMDGPUEntry(StringRef ID) { return ID.contains("-amdgcn-amd-amdhsa"); }

std::string entryName(StringRef Where, StringRef ID) {
  std::string S;
  raw_string_ostream OS(S);
  OS << (Where.empty() ? StringRef("bundle") : Where) << " entry '";
  printEscapedString(ID.take_front(120), OS);
  OS << "'";
  return S;
}

/// What a payload that is not a code object is, for the message.
std::string notACodeObject(ArrayRef<uint8_t> Payload) {
  StringRef S(reinterpret_cast<const char *>(Payload.data()), Payload.size());
  if (S.starts_with("BC\xC0\xDE"))
    return "its payload is LLVM bitcode (an -fgpu-rdc object before device "
           "linking), not a linked AMDGPU code object";
  return "its payload is " + bundle::describeInput(Payload) +
         ", not an AMDGPU code object";
}

/// \p E in the context \p Where names ("" for the input itself).
Error located(StringRef Where, Error E) {
  return Where.empty() ? std::move(E) : prefixError(Where, std::move(E));
}

} // namespace

DecompressionBudget::DecompressionBudget(uint64_t InputSize) {
  std::optional<uint64_t> Ratio =
      checkedMulUnsigned<uint64_t>(InputSize, bundle::MaxCompressionRatio);
  Total = std::max<uint64_t>(Ratio.value_or(UINT64_MAX),
                             bundle::MinUncompressedSizeLimit);
  Left = Total;
}

Error DecompressionBudget::take(uint64_t Claimed) {
  if (Claimed > Left)
    return makeError("uncompressed size " + hex(Claimed) +
                     " is more than the " + hex(Left) +
                     " bytes left of what the input's compressed bundles may "
                     "decompress to together (" +
                     hex(Total) + ")");
  Left -= Claimed;
  return Error::success();
}

Expected<BundlePlan> pipeline::planBundle(ArrayRef<uint8_t> Bytes,
                                          uint64_t InputOffset, StringRef Where,
                                          DecompressionBudget &Budget) {
  BundlePlan Plan;
  Plan.Where = Where.str();
  ArrayRef<uint8_t> Uncompressed = Bytes;
  const bool Compressed =
      bundle::identifyInput(Bytes) == InputKind::CompressedOffloadBundle;
  if (Compressed) {
    // The bundle layer's messages say "compressed bundle" already.
    Expected<bundle::CompressedBundleHeader> H =
        bundle::parseCompressedBundleHeader(Bytes);
    if (!H)
      return located(Where, H.takeError());
    // What the header claims, on its own terms, then against the input.
    if (Error E =
            bundle::checkUncompressedSize(*H, Bytes.size() - H->HeaderSize))
      return located(Where, std::move(E));
    if (Error E = Budget.take(H->UncompressedSize))
      return located(Where, std::move(E));
    Expected<bundle::DecompressedBundle> D = bundle::decompressBundle(Bytes);
    if (!D)
      return located(Where, D.takeError());
    Plan.Decompressed = std::move(*D);
    Uncompressed = Plan.Decompressed->Bytes;
  } else {
    Plan.InputOffset = InputOffset;
  }
  Expected<bundle::OffloadBundle> B = bundle::parseOffloadBundle(Uncompressed);
  if (!B) {
    // Offsets and sizes a parse error names are in the decompressed bytes.
    if (Compressed)
      return prefixError(Where.empty() ? Twine("decompressed bundle")
                                       : Where + ", decompressed",
                         B.takeError());
    return located(Where, B.takeError());
  }
  Plan.Bundle = std::move(*B);
  // A bundle rewritten before carries its bundle record after its end: not
  // part of the bundle, kept apart.
  if ((Plan.Record = BundleRecord::parse(Plan.Bundle.trailingBytes())))
    Plan.Bundle.Bytes = Plan.Bundle.Bytes.take_front(Plan.Bundle.Size);
  for (size_t I = 0; I < Plan.Bundle.Entries.size(); ++I) {
    const bundle::OffloadBundleEntry &Entry = Plan.Bundle.Entries[I];
    if (Entry.empty() || !isAMDGPUEntry(Entry.ID))
      continue; // host and other entries are copied verbatim
    auto R = std::make_unique<CodeObjectRun>();
    R->Name = entryName(Where, Entry.ID);
    R->Payload = Entry.Payload;
    if (Plan.InputOffset)
      R->InputOffset =
          *Plan.InputOffset + (Entry.Payload.data() - Uncompressed.data());
    if (bundle::identifyInput(Entry.Payload) != InputKind::CodeObject)
      R->Err = makeError(notACodeObject(Entry.Payload));
    Plan.Runs.push_back(std::move(R));
    Plan.EntryOfRun.push_back(I);
  }
  return std::move(Plan);
}

/// Why restoring \p B from the bundle laid out as \p New (the sizes
/// \p NewSizes) would not give back its bytes: restore lays out the
/// restored bundle as clang does with the alignment of New's offsets, which
/// must be B's layout of itself.
static std::optional<std::string>
whyNotRestorable(const bundle::OffloadBundle &B,
                 const bundle::OffloadBundleLayout &New,
                 ArrayRef<std::optional<uint64_t>> NewSizes) {
  if (!B.trailingBytes().empty())
    return hex(B.trailingBytes().size()) +
           " bytes after its end are not written back";
  bundle::OffloadBundle Rewritten = B;
  for (size_t I = 0; I < B.Entries.size(); ++I) {
    Rewritten.Entries[I].Offset = New.Offsets[I];
    Rewritten.Entries[I].Size = NewSizes[I].value_or(B.Entries[I].Size);
  }
  if (Rewritten.payloadAlignment() != B.payloadAlignment())
    return "its payloads, aligned to " + hex(B.payloadAlignment()) +
           ", would be laid out aligned to " +
           hex(Rewritten.payloadAlignment());
  Expected<bundle::OffloadBundleLayout> Own = bundle::layoutRewrittenBundle(
      B, std::vector<std::optional<uint64_t>>(B.Entries.size()));
  if (!Own) // (it was laid out with new sizes)
    return "it cannot be laid out as clang does: " + toString(Own.takeError());
  bool Same = Own->Size == B.Size &&
              B.Bytes.take_front(Own->Header.size()) == ArrayRef(Own->Header);
  uint64_t Pos = Own->Header.size();
  for (size_t I = 0; Same && I < B.Entries.size(); ++I) {
    const bundle::OffloadBundleEntry &E = B.Entries[I];
    Same = Own->Offsets[I] == E.Offset;
    if (Same && E.Offset > Pos)
      Same = llvm::all_of(B.Bytes.slice(Pos, E.Offset - Pos),
                          [](uint8_t C) { return C == 0; });
    Pos = std::max(Pos, E.Offset + E.Size);
  }
  if (!Same)
    return std::string("it is not laid out as clang lays it out (header, "
                       "offsets, zero gaps)");
  return std::nullopt;
}

/// The uncompressed bundle with the new code objects, as pieces, followed
/// by \p Trailer.
static Expected<NewBundle> layOut(const BundlePlan &Plan,
                                  ArrayRef<uint8_t> Trailer) {
  const bundle::OffloadBundle &B = Plan.Bundle;
  std::vector<const CodeObjectRun *> RunOfEntry(B.Entries.size(), nullptr);
  std::vector<std::optional<uint64_t>> NewSizes(B.Entries.size());
  for (size_t K = 0; K < Plan.Runs.size(); ++K) {
    const CodeObjectRun &R = *Plan.Runs[K];
    if (!R.Changed)
      continue;
    RunOfEntry[Plan.EntryOfRun[K]] = &R;
    NewSizes[Plan.EntryOfRun[K]] = R.outputSize();
  }
  Expected<bundle::OffloadBundleLayout> L =
      bundle::layoutRewrittenBundle(B, NewSizes);
  if (!L)
    return located(Plan.Where, L.takeError());
  NewBundle N;
  N.Size = L->Size;
  N.NotRestorable = whyNotRestorable(B, *L, NewSizes);
  std::vector<uint8_t> &Header =
      N.Pieces.Owned.emplace_back(std::move(L->Header));
  N.Pieces.Pieces.push_back({0, Header, std::nullopt});
  for (size_t I = 0; I < B.Entries.size(); ++I) {
    const uint64_t At = L->Offsets[I];
    ArrayRef<uint8_t> Payload = B.Entries[I].Payload;
    std::optional<uint64_t> InputAt;
    if (Plan.InputOffset)
      InputAt = *Plan.InputOffset + (Payload.data() - B.Bytes.data());
    if (const CodeObjectRun *R = RunOfEntry[I])
      N.Pieces.append(R->pieces(), At, InputAt);
    else if (!Payload.empty())
      N.Pieces.Pieces.push_back({At, Payload, InputAt});
  }
  if (!Trailer.empty()) {
    std::vector<uint8_t> &Own =
        N.Pieces.Owned.emplace_back(Trailer.begin(), Trailer.end());
    N.Pieces.Pieces.push_back({N.Size, Own, std::nullopt});
    N.Size += Trailer.size();
  }
  return std::move(N);
}

/// restore: fails unless \p Bundle, the bundle laid out again from the
/// restored code objects, is the original bundle \p R records.
static Error checkRestoredBundle(const BundleRecord &R,
                                 ArrayRef<uint8_t> Bundle, StringRef Where) {
  if (Bundle.size() == R.UncompressedSize &&
      Sha256::hash(Bundle) == R.UncompressedSHA256)
    return Error::success();
  return located(
      Where,
      makeError("the bundle was modified after it was rewritten: restored, "
                "it would be " +
                hex(Bundle.size()) + " bytes with SHA-256 " +
                digestHex(Sha256::hash(Bundle)) + ", not the original's " +
                hex(R.UncompressedSize) + " bytes with SHA-256 " +
                digestHex(R.UncompressedSHA256) +
                " (entry ids, their order, the entries or the padding "
                "changed, or the original was not laid out as clang lays "
                "it out)"));
}

Expected<std::optional<NewBundle>>
pipeline::buildBundle(const BundlePlan &Plan, const BundleExtras &Extras) {
  if (llvm::none_of(Plan.Runs, [](const auto &R) { return R->Changed; }))
    return std::nullopt;
  Expected<NewBundle> N = layOut(Plan, Extras.Trailer);
  if (!N)
    return N.takeError();
  if (!Plan.Decompressed) {
    if (Extras.Expect) {
      std::vector<uint8_t> Bytes(N->Size, 0);
      N->Pieces.applyTo(Bytes);
      if (Error E = checkRestoredBundle(*Extras.Expect, Bytes, Plan.Where))
        return std::move(E);
    }
    return std::optional<NewBundle>(std::move(*N));
  }
  // A compressed bundle: its new bytes come out of the compressor, which
  // takes the uncompressed bundle whole.
  std::vector<uint8_t> Uncompressed(N->Size, 0);
  N->Pieces.applyTo(Uncompressed);
  if (Extras.Expect)
    if (Error E = checkRestoredBundle(*Extras.Expect, Uncompressed, Plan.Where))
      return std::move(E);
  Expected<std::vector<uint8_t>> C =
      bundle::recompressBundle(*Plan.Decompressed, Uncompressed);
  if (!C)
    return located(Plan.Where, C.takeError());
  NewBundle Out;
  Out.Size = C->size();
  Out.NotRestorable = std::move(N->NotRestorable);
  if (Extras.Expect && (C->size() != Extras.Expect->OriginalSize ||
                        Sha256::hash(*C) != Extras.Expect->OriginalSHA256))
    Out.NotExact = "the compressed bundle's bytes are not the original's, "
                   "only what it decompresses to: the original was "
                   "compressed at another level than clang's, or by another "
                   "zstd or zlib build";
  std::vector<uint8_t> &Bytes = Out.Pieces.Owned.emplace_back(std::move(*C));
  Out.Pieces.Pieces.push_back({0, Bytes, std::nullopt});
  return std::optional<NewBundle>(std::move(Out));
}

Expected<Rewritten> pipeline::rewriteBundleInput(ArrayRef<uint8_t> Input,
                                                 const PipelineText &P,
                                                 const PipelineOptions &Opts,
                                                 RunSummary &Summary) {
  DecompressionBudget Budget(Input.size());
  Expected<BundlePlan> Plan = planBundle(Input, 0, "", Budget);
  if (!Plan)
    return Plan.takeError();
  std::vector<CodeObjectRun *> Runs;
  for (auto &R : Plan->Runs)
    Runs.push_back(R.get());
  std::vector<json::Value> JSON;
  if (Error E = runCodeObjects(Runs, P, Opts, Summary, JSON))
    return std::move(E); // (text printed so far stays; JSON is all or none)
  printJSONEntries(JSON, Opts);
  // The bundle level is covered by the bundle record it carries after its
  // end (BundleRecord.h): the input's own when it was rewritten before (it
  // leads to the very first input), else one made of the input now.
  const bool Compressed = Plan->Decompressed.has_value();
  std::optional<BundleRecord> Own = Plan->Record;
  BundleExtras Extras;
  std::vector<uint8_t> Trailer;
  if (P.restores()) {
    // (With no code object restored restoreInput says there is nothing to
    // restore.)
    if (Summary.Changed != 0 && !Own)
      return makeError(
          "no bundle record: the bundle was laid out again after it was "
          "rewritten (its entries, their ids or order changed) or rewritten "
          "by an older hotswap-opt, so restore cannot check that it gives "
          "it back byte for byte");
    Extras.Expect = Own ? &*Own : nullptr;
  } else if (llvm::any_of(Plan->Runs,
                          [](const auto &R) { return R->Changed; })) {
    if (!Own) {
      Own = BundleRecord::of(
          Input,
          Compressed ? ArrayRef<uint8_t>(Plan->Decompressed->Bytes) : Input,
          Compressed);
      // Whether restore will give the compressed bytes back: it compresses
      // the restored bundle as clang does, which need not be how the input
      // was compressed.
      if (Compressed && Opts.Warn) {
        Expected<std::vector<uint8_t>> Again = bundle::compressBundle(
            Plan->Decompressed->Bytes, Plan->Decompressed->Header.Version,
            Plan->Decompressed->Header.Method);
        if (!Again)
          consumeError(Again.takeError()); // (the rewrite will say why)
        else if (ArrayRef<uint8_t>(*Again) != Input)
          Opts.Warn("restore will not give this compressed bundle back byte "
                    "for byte, only what it decompresses to: compressed "
                    "again as clang compresses it, it is other bytes (it was "
                    "compressed at another level, or by another zstd or "
                    "zlib build)");
      }
    }
    Trailer = Own->encode();
    Extras.Trailer = Trailer;
  }
  Expected<std::optional<NewBundle>> N = buildBundle(*Plan, Extras);
  if (!N)
    return N.takeError();
  Rewritten R;
  if (*N && (*N)->NotRestorable && Opts.Warn && !P.restores())
    Opts.Warn("restore will not give this bundle back byte for byte: " +
              *(*N)->NotRestorable);
  if (*N && (*N)->NotExact && Opts.Warn)
    Opts.Warn(*(*N)->NotExact);
  if (*N) {
    R.Size = (*N)->Size;
    R.Pieces = std::move((*N)->Pieces);
  } else {
    R.Size = Input.size();
    R.Pieces.Pieces.push_back({0, Input, uint64_t(0)});
  }
  R.Bundles.push_back(std::move(*Plan));
  return std::move(R);
}
