//===- tools/hotswap-host-test/hotswap-host-test.cpp - HostBinary driver --===//
//
// Test-only: does to a HIP host binary what the pipeline does, with a
// stand-in for the code-object rewrite, so that HostBinary can be tested
// with rewrites the passes never make (padded code objects, some bundles
// only):
//
//   hotswap-host-test [--print] [--pad=N] [--only=I,...]
//                     [--zero-old-bundles] IN [-o OUT]
//
// reads IN with the ELF model (host ELF allowed), analyzes it
// (HostBinary::analyze), gives every bundle (or those of --only) a new
// version in which each code object is followed by N zero bytes (default
// 256; CCOB bundles are decompressed and compressed again at their version
// and method), calls HostBinary::replaceBundles and writes OUT with the
// normal writer. --pad=0 gives each bundle its own bytes back, which changes
// nothing. --print lists the wrappers and bundles found, on stdout:
//
//   wrapper 0x97d8 pointer=R_X86_64_RELATIVE inplace=0 bundle=0
//   wrapper 0x97f0 pointer=R_X86_64_64 inplace=0 bundle=0 symbol=NAME+0x0
//   bundle 0 addr=0x1000 size=0x4ce8 format=offload|ccob
//
// Errors: "hotswap-host-test: error: 'IN': message", exit status 1, OUT
// neither created nor changed.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Bundle/HostBinary.h"
#include "hotswap/Bundle/OffloadBundle.h"
#include "hotswap/Object/InputFile.h"
#include "hotswap/Object/OutputFile.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::bundle;

static cl::opt<std::string> InputFilename(cl::Positional, cl::Required,
                                          cl::desc("<host binary>"));
static cl::opt<std::string>
    OutputFilename("o", cl::desc("Output file (nothing is written without it)"),
                   cl::value_desc("filename"));
static cl::opt<bool> Print("print",
                           cl::desc("List the wrappers and bundles found"));
static cl::opt<uint64_t>
    Pad("pad", cl::init(256),
        cl::desc("Zero bytes appended to each code object (0: no change)"));
static cl::list<unsigned>
    Only("only", cl::CommaSeparated,
         cl::desc("Replace only these bundles (indices, default all)"));
static cl::opt<bool> ZeroOld("zero-old-bundles",
                             cl::desc("Fill the replaced bundles with zeros"));

static const char *ToolName = "hotswap-host-test";

[[noreturn]] static void fail(const Twine &Msg) {
  WithColor::error(errs(), ToolName)
      << "'" << InputFilename << "': " << Msg << "\n";
  exit(1);
}

/// \p Bytes (an uncompressed bundle) with --pad zero bytes after each
/// non-empty payload, laid out again as clang would.
static Expected<std::vector<uint8_t>> padEntries(ArrayRef<uint8_t> Bytes) {
  Expected<OffloadBundle> OB = parseOffloadBundle(Bytes);
  if (!OB)
    return OB.takeError();
  std::vector<std::vector<uint8_t>> Storage;
  Storage.reserve(OB->Entries.size());
  std::vector<std::optional<ArrayRef<uint8_t>>> Repl;
  for (const OffloadBundleEntry &E : OB->Entries) {
    if (E.empty() || Pad == 0) {
      Repl.push_back(std::nullopt);
      continue;
    }
    Storage.emplace_back(E.Payload.begin(), E.Payload.end());
    Storage.back().resize(E.Payload.size() + Pad, 0);
    Repl.push_back(ArrayRef<uint8_t>(Storage.back()));
  }
  return rewriteOffloadBundle(*OB, Repl);
}

static Expected<std::vector<uint8_t>> transform(const HostBundle &B) {
  if (!B.Compressed)
    return padEntries(B.Bytes);
  Expected<DecompressedBundle> D = decompressBundle(B.Bytes);
  if (!D)
    return D.takeError();
  Expected<std::vector<uint8_t>> New = padEntries(D->Bytes);
  if (!New)
    return New.takeError();
  return recompressBundle(*D, *New);
}

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv, "HostBinary test driver (see the file comment)\n");

  Expected<InputFile> In = InputFile::open(InputFilename);
  if (!In)
    fail(toString(In.takeError()));
  ReadOptions RO;
  RO.AllowHost = true;
  Expected<std::unique_ptr<Object>> Obj = readObject(In->buffer(), RO);
  if (!Obj)
    fail(toString(Obj.takeError()));
  Expected<HostBinary> HB = HostBinary::analyze(**Obj);
  if (!HB)
    fail(toString(HB.takeError()));

  if (Print) {
    for (const HostWrapper &W : HB->wrappers()) {
      outs() << "wrapper " << hex(W.Addr)
             << " pointer=" << pointerKindName(W.Kind)
             << " inplace=" << (W.InPlace ? 1 : 0) << " bundle=" << W.Bundle;
      if (W.Kind == PointerKind::Symbol)
        outs() << " symbol=" << W.SymbolName << "+"
               << hex(W.BundleAddr - W.SymbolValue);
      outs() << "\n";
    }
    for (size_t I = 0; I < HB->bundles().size(); ++I) {
      const HostBundle &B = HB->bundles()[I];
      outs() << "bundle " << I << " addr=" << hex(B.Addr)
             << " size=" << hex(B.Bytes.size())
             << " format=" << (B.Compressed ? "ccob" : "offload") << "\n";
    }
  }
  if (OutputFilename.empty())
    return 0;

  std::vector<std::optional<std::vector<uint8_t>>> New(HB->bundles().size());
  for (size_t I = 0; I < New.size(); ++I) {
    if (!Only.empty() && !is_contained(Only, I))
      continue;
    Expected<std::vector<uint8_t>> B = transform(HB->bundles()[I]);
    if (!B)
      fail("bundle " + Twine(I) + ": " + toString(B.takeError()));
    New[I] = std::move(*B);
  }
  for (unsigned I : Only)
    if (I >= New.size())
      fail("--only=" + Twine(I) + ": there are " + Twine(New.size()) +
           " bundles");
  HostRewriteOptions Opts;
  Opts.ZeroOldBundles = ZeroOld;
  if (Error E = HB->replaceBundles(**Obj, New, Opts))
    fail(toString(std::move(E)));
  if (Error E = writeObjectToFile(**Obj, OutputFilename, &*In))
    fail(toString(std::move(E)));
  return 0;
}
