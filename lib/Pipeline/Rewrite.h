//===- lib/Pipeline/Rewrite.h - One input, any kind -------------*- C++ -*-===//
//
// Private to the Pipeline layer. An input of any kind (code object, offload
// bundle, compressed bundle, HIP host binary) becomes a list of code
// objects to run the pipeline on -- all of them at once, one pool of work
// whatever container they are in -- and, once they ran, an output image:
// pieces placed at their offsets, which are the input's own bytes (copied in
// the kernel when written to a file), the code objects' new parts, and the
// headers of the containers around them. Nothing assembles a whole new
// bundle or section in memory, except a compressed bundle, which is
// compressed from memory (its compressed bytes are what the output holds).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_LIB_PIPELINE_REWRITE_H
#define HOTSWAP_LIB_PIPELINE_REWRITE_H

#include "BundleRecord.h"

#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Bundle/OffloadBundle.h"
#include "hotswap/Hotswap.h"
#include "hotswap/Object/Layout.h"
#include "hotswap/Passes/ProvenanceEdits.h"
#include "hotswap/Passes/ProvenanceRecord.h"
#include "hotswap/Support/EarlyJob.h"

#include "llvm/Support/JSON.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace hotswap {
namespace pipeline {

class InputDigest;

/// The pipeline text and the parser that reads it (the caller's, or a
/// PassBuilder of our own).
class PipelineText {
public:
  /// Parses \p Text once (with Opts.Builder, else a PassBuilder of its
  /// own), and makes its passes once to name them: the parse error, or the
  /// error of a pass that cannot be made, when that fails.
  static llvm::Expected<PipelineText> create(llvm::StringRef Text,
                                             const PipelineOptions &Opts);
  /// A new PassManager for one code object (passes keep state per run),
  /// made from the plan the text was parsed into.
  llvm::Expected<PassManager> parse() const { return Plan.instantiate(); }
  bool empty() const { return Text.empty(); }
  /// The transform passes of the pipeline as --print-pipeline-passes
  /// prints them (what a provenance record names: verify and print<...>
  /// change no byte, and leave no trace); empty when it does not parse.
  const std::string &canonical() const { return Canonical; }
  /// Whether a pass of this name ("verify", "print<provenance>") is in it.
  bool has(llvm::StringRef Name) const;
  /// Whether the pipeline is `restore`, which gives back the input a
  /// provenance record leads to instead of running passes (Restore.cpp).
  bool restores() const { return Names.size() == 1 && Names[0] == "restore"; }
  /// Fails when `restore` is mixed with other passes.
  llvm::Error checkRestoreAlone() const;

private:
  PipelineText(llvm::StringRef Text, PipelinePlan Plan)
      : Text(Text.str()), Plan(std::move(Plan)) {}

  std::string Text;
  /// (A plan may point into the parser that made it: kept with it.)
  std::unique_ptr<PassBuilder> Own;
  PipelinePlan Plan;
  std::string Canonical;
  std::vector<std::string> Names;
};

/// What a run of the passes found beside their results.
struct PassRunFacts {
  /// Passes that did not fit the code object (PassContext::Unfit).
  std::vector<UnfitPass> Unfit;
  /// How many kernels it has: when the passes computed the kernels
  /// analysis, or PipelineOptions::CountKernels asked for it.
  std::optional<unsigned> Kernels;
  /// With PipelineOptions::JSON: what its print passes printed, as values,
  /// in order (the caller prints them, a container's each with its entry).
  std::vector<llvm::json::Value> Printed;
};

/// A provenance record an output carries (ProvenanceRecord.h): the section
/// it is in, and its bytes.
struct WrittenProvenance {
  uint32_t Section = 0;
  ProvenanceNote Note;
  /// Set while the record still lacks its original's digest (being
  /// computed): the note's first piece is Late, and settle() fills it in.
  std::shared_ptr<InputDigest> Pending;

  /// Adds the record's pieces to \p Pieces, the output of the object laid
  /// out as \p L, whose input is \p Input.
  void addTo(OutputPieces &Pieces, const Layout &L,
             llvm::ArrayRef<uint8_t> Input) const;
  /// Waits for the pending digest, if any, and writes it into the note (in
  /// place: pieces taken before stay valid).
  void settle();
};

/// What a host binary's rewrite leaves as holes in its output (old bundles
/// nothing reads any more), and how its record says so.
struct HoleRecord {
  /// Ranges of the input, sorted and disjoint, that the output leaves as
  /// holes (zeros, no disk blocks): the old bundles, each either a rebuilt
  /// range of the record (inside the original's extent) or past that
  /// extent, where the record needs nothing.
  std::vector<ByteRange> Holes;
  /// The record's new rebuilt ranges, sorted.
  std::vector<RebuiltRange> Rebuilt;
  /// Old bundles past the original's extent that were the source of a
  /// rebuilt range of the input's record, and the new bundle that is now.
  std::vector<std::pair<ByteRange, ByteRange>> Moved;
  /// Makes the bytes of the rebuilt ranges of the input's record (to check
  /// it before it is extended).
  RebuildFn Rebuild;
};

/// \p P without the bytes inside \p Holes (sorted, disjoint): zeros there,
/// which a file written from it does not store (PieceWriter.h).
void leaveHoles(OutputPieces &P, llvm::ArrayRef<ByteRange> Holes);

/// After the passes changed \p Obj, laid out as \p L: gives it the record
/// of this run (a new one, or its input's extended, after checking that the
/// input still leads back to its original) and lays it out again into \p L.
/// The record holds every byte of the input's original extent that the
/// output edits (read off the output's pieces, the ELF header always).
/// \p Digest is the input's SHA-256 (asked for only when the input has no
/// record yet); with \p Defer the record leaves it Pending instead of
/// waiting for it. \p Holes: a host binary's (the output's pieces are then
/// taken with them left out).
llvm::Expected<WrittenProvenance>
recordProvenance(Object &Obj, Layout &L, const PipelineText &P,
                 const std::shared_ptr<InputDigest> &Digest, bool Defer = false,
                 const HoleRecord *Holes = nullptr);

/// How a host binary's record rebuilds its rebuilt ranges from \p File:
/// the bundle at the source restored (its code objects given back by their
/// records) and laid out, and compressed, again.
RebuildFn hostRebuilder(llvm::ArrayRef<uint8_t> File,
                        const PipelineOptions &Opts);

/// Why the provenance record \p R of the host binary \p Host, which no
/// longer leads back to its original, was made stale by another tool rather
/// than broken; nullopt when nothing says so. Every rewrite of a host
/// leaves its program header table at the start of its new last PT_LOAD,
/// past the original's extent; GNU strip and objcopy put it back among the
/// loaded bytes, patchelf at offset 64: a table inside the original's
/// extent means the file was laid out again after the rewrite.
std::optional<std::string> hostLaidOutAgain(const Object &Host,
                                            const ProvenanceRecord &R);

/// Whether \p Obj carries a provenance record (it was rewritten before: its
/// original's digest is in the record, and a run of the same passes likely
/// leaves it as it is).
inline bool carriesRecord(const Object &Obj) {
  return Obj.findSection(ProvenanceSectionName) != nullptr;
}

/// One code object to run the pipeline on, and what its run produced.
struct CodeObjectRun {
  /// "" for an input that is a code object; else the entry it is, for
  /// messages ("bundle at 0x1000 entry 'hipv4-amdgcn-amd-amdhsa--gfx90a'").
  std::string Name;
  llvm::ArrayRef<uint8_t> Payload;
  /// Where Payload lies in the input (unset: it is not the input's bytes,
  /// e.g. it came out of a compressed bundle).
  std::optional<uint64_t> InputOffset;
  /// Set before running when the payload cannot be run at all.
  llvm::Error Err = llvm::Error::success();
  /// The payload is the whole input, written out by the caller: its
  /// record's digest may still be computed while the output is written
  /// (WrittenProvenance::Pending).
  bool DeferDigest = false;
  /// When set (the payload is the whole input): called once it is read,
  /// unless it carries a provenance record already (rewritten before, it
  /// likely stays as it is), with how many bytes of the input its output
  /// would begin with; the caller may start writing them.
  std::function<void(uint64_t)> StartHead;
  /// The payload's digest, when the caller made it ahead (a host's code
  /// objects are hashed beside the host); else the run makes it.
  std::shared_ptr<InputDigest> Digest;

  /// Results.
  bool Changed = false;
  std::unique_ptr<Object> Model;
  std::optional<Layout> ModelLayout;
  /// The provenance record of a changed run.
  std::optional<WrittenProvenance> Record;
  /// restore: the original its record leads back to, as pieces of Payload
  /// (then Changed; with no record, neither is set).
  struct Original {
    uint64_t Size = 0;
    OutputPieces Pieces;
  };
  std::optional<Original> Restored;
  /// What the run reported, replayed in order on the calling thread.
  std::vector<std::string> Warnings;
  std::string Printed;
  Statistics Stats;
  /// Passes that did not fit it, and how many kernels it has.
  PassRunFacts Facts;

  /// The rewritten (or restored) code object's size and pieces (offsets
  /// from its start, input pieces relative to the input); only when
  /// Changed.
  uint64_t outputSize() const {
    return Restored ? Restored->Size : ModelLayout->FileSize;
  }
  OutputPieces pieces() const;
};

/// Runs \p P on every run of \p Runs that has no error yet: at once on
/// Opts.ThreadPool unless instrumentation asks for one at a time (each then
/// preceded by Opts.OnCodeObject), each on its task's thread (the pool is
/// not handed down). Then, on the calling thread and in order, hands on
/// what each reported (warnings prefixed with its name, statistics, printed
/// text) and counts it in \p Summary. The first run that failed fails the
/// whole input unless Opts.KeepGoing (then it is left unchanged, reported
/// and counted). With Opts.JSON each run's print<...> JSON goes into
/// \p JSONOut (with an "entry" member).
///
///
/// \p Ended, when set, is called on the thread of each run as it ends
/// (never for one with an error before it started; on the pool, or here
/// before its reports are handed on); the last call returns before this
/// does.
llvm::Error
runCodeObjects(llvm::ArrayRef<CodeObjectRun *> Runs, const PipelineText &P,
               const PipelineOptions &Opts, RunSummary &Summary,
               std::vector<llvm::json::Value> &JSONOut,
               const std::function<void(const CodeObjectRun &)> &Ended = {});

/// Runs \p P on \p Run on the calling thread (what runCodeObjects does for
/// each): reads the model, runs the passes, lays it out, decides whether
/// it changed, and gives a changed one its provenance record. With
/// `restore`, restoreCodeObject instead.
void runCodeObject(CodeObjectRun &Run, const PipelineText &P,
                   const PipelineOptions &Opts);

/// `restore` on one code object: reads it, and when it has a provenance
/// record checks it and sets Restored (and Changed, and counts it in
/// Opts.StatsOut). With \p Later and a pool, the original's digest is
/// checked on the pool while its bytes are written: *Later is set to that
/// check, which the caller must get() before it keeps the output.
void restoreCodeObject(CodeObjectRun &Run, const PipelineOptions &Opts,
                       std::unique_ptr<EarlyJob> *Later = nullptr);

/// runPassManager, handing on what it found to \p Facts when given.
llvm::Error runPasses(Object &Obj, PassManager &PM, const PipelineOptions &Opts,
                      PassRunFacts *Facts);

/// Fails when a pass of \p P that needs some code object of the input fit
/// none of those that ran (RunSummary::Unfit).
llvm::Error checkPassesFit(const PipelineText &P, const RunSummary &Summary);

/// A bundle of the input (plain, or compressed and decompressed here) and
/// the runs of its AMDGPU entries.
struct BundlePlan {
  std::string Where; // "" when the bundle is the input
  bundle::OffloadBundle Bundle;
  std::optional<bundle::DecompressedBundle> Decompressed;
  /// Where the uncompressed bundle lies in the input (plain bundles).
  std::optional<uint64_t> InputOffset;
  /// The bundle record after its end (BundleRecord.h), when it has one:
  /// then Bundle.Bytes leave it out.
  std::optional<BundleRecord> Record;
  /// One per AMDGPU entry, and the entry each is.
  std::vector<std::unique_ptr<CodeObjectRun>> Runs;
  std::vector<size_t> EntryOfRun;
};

/// How many bytes the compressed bundles of one input may decompress to,
/// together: as for one bundle (CompressedBundle.h), at most
/// MaxCompressionRatio times the input's size, or MinUncompressedSizeLimit
/// -- so that many small bundles each claiming a little under the limit do
/// not add up to work out of proportion with the input.
class DecompressionBudget {
public:
  explicit DecompressionBudget(uint64_t InputSize);
  /// Takes \p Claimed bytes, or says why they cannot be had.
  llvm::Error take(uint64_t Claimed);
  uint64_t left() const { return Left; }

private:
  uint64_t Total, Left;
};

/// Parses (decompressing a CCOB, within \p Budget) the bundle \p Bytes,
/// found at \p InputOffset of the input, and plans a run per AMDGPU entry.
llvm::Expected<BundlePlan> planBundle(llvm::ArrayRef<uint8_t> Bytes,
                                      uint64_t InputOffset,
                                      llvm::StringRef Where,
                                      DecompressionBudget &Budget);

/// A bundle to write: its size and pieces (offsets from its start; input
/// pieces relative to the input).
struct NewBundle {
  uint64_t Size = 0;
  OutputPieces Pieces;
  /// Why `restore` would not give the input bundle back byte for byte from
  /// this one (it restores the code objects and lays the bundle out as
  /// clang does, with the alignment of this one's offsets), or nullopt.
  std::optional<std::string> NotRestorable;
  /// restore of a CCOB: why its compressed bytes are not the original's
  /// (what they decompress to is), or nullopt.
  std::optional<std::string> NotExact;
};

/// What buildBundle adds to the bundle, or checks it against.
struct BundleExtras {
  /// Bytes to write after the bundle's end (inside a CCOB's uncompressed
  /// bundle): the input's bundle record (BundleRecord.h).
  llvm::ArrayRef<uint8_t> Trailer;
  /// restore: the original the bundle must be, checked before it is
  /// returned.
  const BundleRecord *Expect = nullptr;
};

/// After the runs: the bundle with the code objects that changed, or
/// nullopt when none did.
llvm::Expected<std::optional<NewBundle>>
buildBundle(const BundlePlan &Plan, const BundleExtras &Extras = {});

/// The result of one input: its output as pieces, and everything they
/// point into.
struct Rewritten {
  uint64_t Size = 0;
  OutputPieces Pieces;
  std::unique_ptr<Object> Model;
  std::optional<Layout> ModelLayout;
  std::vector<BundlePlan> Bundles;
  std::unique_ptr<CodeObjectRun> Run;
  /// A host binary's own provenance record.
  std::optional<WrittenProvenance> Record;
  /// A check still running (a restored original's digest): checkDone()
  /// before the output is kept or handed on.
  std::unique_ptr<EarlyJob> Check;

  OutputImage image() const;
  /// Waits for Check (if any): its error means the output must not be kept.
  llvm::Error checkDone() {
    if (!Check)
      return llvm::Error::success();
    llvm::Error E = Check->get();
    Check.reset();
    return E;
  }
};

/// Writes pieces of the output (offsets into it) before the rest, beyond
/// its head (OutputFile::writeAhead): false when that failed (the output's
/// commit says why).
using WriteAheadFn = std::function<bool(OutputPieces)>;

/// Called, when a run reads an input whose output begins with the input's
/// own bytes (a code object, a host binary) and has no provenance record,
/// with how many: the caller may start copying them to the output. Returns,
/// when the output is a file that can take them, how to write other pieces
/// ahead of the rest; the image then leaves them out.
using StartHeadFn = std::function<WriteAheadFn(uint64_t Bytes)>;

/// Runs \p P on every code object of \p Input.
llvm::Expected<Rewritten> rewriteInput(llvm::ArrayRef<uint8_t> Input,
                                       const PipelineText &P,
                                       const PipelineOptions &Opts,
                                       RunSummary &Summary,
                                       const StartHeadFn &StartHead = {});

/// The kinds of input, each rewritten whole (Rewrite.cpp, Bundles.cpp,
/// Hosts.cpp).
llvm::Expected<Rewritten> rewriteBundleInput(llvm::ArrayRef<uint8_t> Input,
                                             const PipelineText &P,
                                             const PipelineOptions &Opts,
                                             RunSummary &Summary);
llvm::Expected<Rewritten> rewriteHostInput(llvm::ArrayRef<uint8_t> Input,
                                           const PipelineText &P,
                                           const PipelineOptions &Opts,
                                           RunSummary &Summary,
                                           const StartHeadFn &StartHead);

/// `restore` on an input of any kind (Restore.cpp).
llvm::Expected<Rewritten> restoreInput(llvm::ArrayRef<uint8_t> Input,
                                       const PipelineText &P,
                                       const PipelineOptions &Opts,
                                       RunSummary &Summary);

/// What is wrong with an input of no kind this library reads, when more
/// can be said than the code object reader would (it assumes a code object
/// was meant); nullopt leaves the input to that reader (Input.cpp).
std::optional<std::string> whyUnknown(llvm::ArrayRef<uint8_t> Input);

/// Prints \p Entries as one JSON array to Opts.PrintOut (nothing when there
/// are none).
void printJSONEntries(std::vector<llvm::json::Value> &Entries,
                      const PipelineOptions &Opts);

} // namespace pipeline
} // namespace hotswap

#endif // HOTSWAP_LIB_PIPELINE_REWRITE_H
