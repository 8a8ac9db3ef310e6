//===- fuzz/hotswap-fuzz-restore.cpp - libFuzzer target for `restore` -----===//
//
// `restore` and `verify` on damaged provenance records. The target makes,
// once, rewritten code objects from the seed (FuzzSeed.h): the seed after
// `trampoline,stub-syms` (one run in its record) and that output after
// `swap-kernels` with the seed as the replacement (two runs, more ranges).
// The fuzzer's bytes are a script of edits to one of them: byte 0 picks the
// object, then every 6 bytes are one edit (op, u32 offset, value), aimed at
// the `.hotswap.provenance` section's contents, at its first 192 bytes (the
// fixed fields, the runs, the ranges), or anywhere in the file: set, xor,
// a 32- or 64-bit value from a list of interesting ones, truncate, append,
// insert or delete a byte. An empty script leaves the object as made.
//
// What "Provenance and undo" in README.md promises, and so what is checked:
//   * nothing crashes (sanitizers, leaks), whatever the edits;
//   * `restore` succeeding means the output is the original the record
//     names: its size is the record's original size and its SHA-256 (LLVM's
//     own, not the library's) the record's original SHA-256 -- the record
//     as read back from the edited file by the library's parser;
//   * on an unedited object (or edits that changed no byte) verify passes
//     and restore gives back the seed byte for byte;
//   * `verify` passing on an edited file whose record still reads means
//     the record leads back to its original, so `restore` must succeed then
//     (an edit may hide the record -- e.g. rename its section -- and leave
//     a file verify passes as one never rewritten);
//   * what restore gives back carries no record: `restore` on it fails.
//
//===----------------------------------------------------------------------===//

#include "FuzzSeed.h"

#include "hotswap/Hotswap.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Passes/ProvenanceRecord.h"

#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::fuzz;

namespace {

struct Base {
  std::string Bytes;
  /// The provenance section's contents in Bytes.
  uint64_t NoteOffset = 0, NoteSize = 0;
};

Base makeBase(std::string Bytes) {
  Base B;
  B.Bytes = std::move(Bytes);
  Expected<object::ELF64LEFile> F = object::ELF64LEFile::create(B.Bytes);
  if (!F)
    die("a rewritten seed is not ELF", F.takeError());
  Expected<object::ELF64LEFile::Elf_Shdr_Range> Secs = F->sections();
  if (!Secs)
    die("a rewritten seed's sections", Secs.takeError());
  for (const object::ELF64LE::Shdr &S : *Secs) {
    Expected<StringRef> Name = F->getSectionName(S);
    if (!Name)
      die("a rewritten seed's section names", Name.takeError());
    if (*Name == ProvenanceSectionName) {
      B.NoteOffset = S.sh_offset;
      B.NoteSize = S.sh_size;
    }
  }
  if (!B.NoteSize)
    die("a rewritten seed has no provenance record");
  return B;
}

const std::vector<Base> &bases() {
  static const std::vector<Base> Bs = [] {
    const std::string &Seed = seedObject();
    std::string Once = mustRun(Seed, "trampoline,stub-syms");
    std::vector<Base> V;
    V.push_back(makeBase(Once));
    // A second run on the output: the seed's kernels swapped in.
    const std::string &Path = tempPath<0>();
    if (!Path.empty()) {
      std::error_code EC;
      {
        raw_fd_ostream OS(Path, EC);
        OS << Seed;
      }
      if (!EC)
        V.push_back(makeBase(mustRun(Once, "swap-kernels<with=" + Path + ">")));
    }
    return V;
  }();
  return Bs;
}

const uint64_t Interesting[] = {0,
                                1,
                                2,
                                0x7f,
                                0x80,
                                0xff,
                                0x100,
                                0x1000,
                                0x7fffffff,
                                0x80000000,
                                0xffffffff,
                                0x100000000,
                                0x7fffffffffffffff,
                                0x8000000000000000,
                                0xfffffffffffffff0,
                                0xffffffffffffffff};

/// Applies the edits of \p Script to \p B's bytes.
std::string applyEdits(const Base &B, ArrayRef<uint8_t> Script) {
  std::string F = B.Bytes;
  for (; Script.size() >= 6; Script = Script.drop_front(6)) {
    const uint8_t Op = Script[0];
    const uint32_t Where = support::endian::read32le(Script.data() + 1);
    const uint8_t Value = Script[5];
    // Where: within the record, its fixed fields and first entries, or
    // anywhere.
    uint64_t Off;
    switch (Op & 3) {
    case 0:
      Off = B.NoteOffset + Where % B.NoteSize;
      break;
    case 1:
      Off = B.NoteOffset + Where % std::min<uint64_t>(B.NoteSize, 192);
      break;
    default:
      Off = F.empty() ? 0 : Where % F.size();
      break;
    }
    if (Off >= F.size() && ((Op >> 2) & 7) != 5)
      continue; // truncated before
    const uint64_t V = Interesting[Value % std::size(Interesting)];
    switch ((Op >> 2) & 7) {
    case 0:
      F[Off] = static_cast<char>(Value);
      break;
    case 1:
      F[Off] ^= static_cast<char>(Value ? Value : 1);
      break;
    case 2:
      if (Off + 4 <= F.size())
        support::endian::write32le(&F[Off], static_cast<uint32_t>(V));
      break;
    case 3:
      if (Off + 8 <= F.size())
        support::endian::write64le(&F[Off], V);
      break;
    case 4:
      F.resize(Off);
      break;
    case 5:
      F.append(Value % 64 + 1, static_cast<char>(Value));
      break;
    case 6:
      F.insert(F.begin() + Off, static_cast<char>(Value));
      break;
    case 7:
      F.erase(F.begin() + Off);
      break;
    }
  }
  return F;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  const std::vector<Base> &Bs = bases();
  ArrayRef<uint8_t> Script(Data, Size);
  const Base &B = Bs[Script.empty() ? 0 : Script[0] % Bs.size()];
  const std::string F =
      applyEdits(B, Script.drop_front(Script.empty() ? 0 : 1));
  MemoryBufferRef In(F, "fuzz-input");

  // The record, as the library's parser reads it from the edited file
  // (nullopt when the file does not read or holds no record that reads).
  std::optional<ProvenanceRecord> Record;
  std::unique_ptr<Object> Obj;
  if (Expected<std::unique_ptr<Object>> O = readObject(In); !O) {
    consumeError(O.takeError());
  } else {
    Obj = std::move(*O);
    if (Expected<std::optional<ProvenanceRecord>> R = readProvenance(*Obj); !R)
      consumeError(R.takeError());
    else
      Record = std::move(*R);
  }

  PipelineOptions Opts;
  Expected<std::unique_ptr<MemoryBuffer>> Verified =
      runPipeline(In, "verify", Opts);
  const bool VerifyOK = static_cast<bool>(Verified);
  if (!VerifyOK) {
    if (F == B.Bytes)
      die("verify fails on an unedited object", Verified.takeError());
    consumeError(Verified.takeError());
  }

  Expected<std::unique_ptr<MemoryBuffer>> Back =
      runPipeline(In, "restore", Opts);
  if (!Back) {
    if (F == B.Bytes)
      die("restore fails on an unedited object", Back.takeError());
    // verify checks what restore checks: a record it passes leads back.
    if (VerifyOK && Record)
      die("verify passes on a record restore refuses", Back.takeError());
    count("restores refused");
    consumeError(Back.takeError());
    return 0;
  }
  count(F == B.Bytes ? "restores of unedited objects"
                     : "restores of edited objects");
  StringRef Out = (*Back)->getBuffer();

  if (!Record)
    die("restore succeeds on a file without a record that reads");
  if (Out.size() != Record->OriginalSize)
    die("restore gave " + Twine(Out.size()) + " bytes, the record says " +
        Twine(Record->OriginalSize));
  if (sha256(Out) != Record->OriginalSHA256)
    die("restore gave bytes whose SHA-256 is not the record's");
  if (F == B.Bytes && Out != seedObject())
    die("restore on an unedited object did not give back the seed");

  Expected<std::unique_ptr<MemoryBuffer>> Again =
      runPipeline((*Back)->getMemBufferRef(), "restore", Opts);
  if (Again)
    die("restore succeeds on what restore gave back");
  consumeError(Again.takeError());
  return 0;
}
