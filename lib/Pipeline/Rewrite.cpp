//===- lib/Pipeline/Rewrite.cpp - One input, any kind ---------------------===//

#include "Rewrite.h"

#include "hotswap/Bundle/HostBinary.h"
#include "hotswap/Bundle/OffloadBundle.h"

#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Writer.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Endian.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::pipeline;
using bundle::InputKind;

PipelineText::PipelineText(StringRef Text, const PipelineOptions &Opts)
    : Text(Text.str()) {
  if (Opts.Builder) {
    Registry = Opts.Builder;
  } else {
    Own.emplace();
    Registry = &*Own;
  }
}

Expected<PassManager> PipelineText::parse() const {
  PassManager PM;
  if (Error E = Registry->parsePassPipeline(PM, Text))
    return std::move(E);
  return std::move(PM);
}

OutputImage Rewritten::image(ArrayRef<uint8_t> Input) const {
  OutputImage Image;
  Image.Base = Input;
  if (Model) {
    const Object &Obj = *Model;
    const Layout &L = *ModelLayout;
    Image.Size = L.FileSize;
    Image.BaseLength = L.BaseLength;
    Image.Pieces = [&Obj, &L] { return renderPieces(Obj, L); };
  } else if (Bytes) {
    Image.Size = Bytes->size();
    Image.BaseLength = 0;
    Image.Pieces = [B = ArrayRef<uint8_t>(*Bytes)] {
      return OutputPieces{{{0, B}}, {}};
    };
  } else {
    Image.Size = Input.size();
    Image.BaseLength = Input.size();
    Image.Pieces = [] { return OutputPieces(); };
  }
  return Image;
}

Expected<Rewritten> pipeline::rewriteCodeObject(ArrayRef<uint8_t> Input,
                                                const PipelineText &P,
                                                const PipelineOptions &Opts,
                                                bool &Changed,
                                                std::vector<UnfitPass> *Unfit) {
  Expected<PassManager> PM = P.parse();
  if (!PM)
    return PM.takeError();
  MemoryBufferRef Ref(
      StringRef(reinterpret_cast<const char *>(Input.data()), Input.size()),
      "");
  Expected<std::unique_ptr<Object>> Obj = readObject(Ref);
  if (!Obj)
    return Obj.takeError();
  if (Error E = runPasses(**Obj, *PM, Opts, Unfit))
    return std::move(E);
  Expected<Layout> L = computeLayout(**Obj);
  if (!L)
    return L.takeError();
  // Changed: laid out anew, or bytes edited in place that differ.
  Changed = !L->InPlace;
  for (const auto &S : (*Obj)->sections())
    if (!Changed && S->isDirty() && S->Orig && !S->isNoBits())
      Changed = S->contents() != Input.slice(S->Orig->Offset, S->Orig->Size);
  Rewritten R;
  R.Model = std::move(*Obj);
  R.ModelLayout = std::move(*L);
  return std::move(R);
}

/// A HIP host binary: every bundle its wrappers point to is rewritten, then
/// the host is changed to point at the new ones.
static Expected<Rewritten> rewriteHost(ArrayRef<uint8_t> Input,
                                       const PipelineText &P,
                                       const PipelineOptions &Opts,
                                       RunSummary &Summary) {
  MemoryBufferRef Ref(
      StringRef(reinterpret_cast<const char *>(Input.data()), Input.size()),
      "");
  ReadOptions RO;
  RO.AllowHost = true;
  Expected<std::unique_ptr<Object>> Host = readObject(Ref, RO);
  if (!Host)
    return Host.takeError();
  Expected<bundle::HostBinary> HB = bundle::HostBinary::analyze(**Host);
  if (!HB)
    return HB.takeError();
  std::vector<std::optional<std::vector<uint8_t>>> New;
  // print<...> JSON: one array for the whole host, whatever its bundles.
  std::vector<json::Value> JSONEntries;
  for (const bundle::HostBundle &B : HB->bundles()) {
    Expected<std::optional<std::vector<uint8_t>>> NB = rewriteBundle(
        B.Bytes, "bundle at " + hex(B.Addr), P, Opts, Summary, &JSONEntries);
    if (!NB)
      return NB.takeError();
    New.push_back(std::move(*NB));
    if (Opts.ReleaseInput)
      Opts.ReleaseInput(B.Bytes);
  }
  printJSONEntries(JSONEntries, Opts);
  bundle::HostRewriteOptions HO;
  HO.ZeroOldBundles = Opts.ZeroOldBundles;
  if (Error E = HB->takeBundles(**Host, std::move(New), HO))
    return std::move(E);
  Expected<Layout> L = computeLayout(**Host);
  if (!L)
    return L.takeError();
  Rewritten R;
  R.Model = std::move(*Host);
  R.ModelLayout = std::move(*L);
  return std::move(R);
}

/// -stats on a container: the code objects it held, after their passes'
/// counters.
static void countCodeObjects(const RunSummary &Summary,
                             const PipelineOptions &Opts) {
  if (!Opts.StatsOut)
    return;
  Opts.StatsOut->add("containers", "code-objects",
                     "code objects in bundles and host binaries",
                     Summary.CodeObjects);
  Opts.StatsOut->add("containers", "code-objects-changed",
                     "code objects changed", Summary.Changed);
  if (Summary.Failed)
    Opts.StatsOut->add("containers", "code-objects-failed",
                       "code objects that failed, left as they were",
                       Summary.Failed);
}

/// What is wrong with an input of no kind we read, when more can be said
/// than the code object reader would (it assumes a code object was meant);
/// nullopt leaves the input to that reader.
static std::optional<std::string> whyUnknown(ArrayRef<uint8_t> Input) {
  using namespace llvm::ELF;
  if (Input.empty())
    return std::string("input is empty");
  StringRef S(reinterpret_cast<const char *>(Input.data()), Input.size());
  // An offload bundle cut short in its 24-byte magic (4 bytes at least, so
  // that a stray byte is not taken for one).
  if (S.size() >= 4 && bundle::OffloadBundleMagic.starts_with(S)) {
    Expected<bundle::OffloadBundle> B = bundle::parseOffloadBundle(Input);
    if (!B)
      return toString(B.takeError());
    consumeError(B.takeError());
    return std::nullopt;
  }
  // ELF for neither kind. Files for AMDGPU (r600's ELF32, a byte-swapped
  // code object) are the code object reader's to explain.
  if (!S.starts_with(ElfMagic) || S.size() < 20)
    return std::nullopt;
  const uint8_t Class = Input[EI_CLASS], Data = Input[EI_DATA];
  const uint16_t Machine = Data == ELFDATA2MSB
                               ? support::endian::read16be(Input.data() + 18)
                               : support::endian::read16le(Input.data() + 18);
  // Either byte order: a code object with only EI_DATA flipped is still one.
  const bool AMDGPU = Machine == EM_AMDGPU ||
                      support::endian::read16le(Input.data() + 18) == EM_AMDGPU;
  if (AMDGPU ||
      (Class == ELFCLASS64 && Data == ELFDATA2LSB && Machine == EM_X86_64))
    return std::nullopt;
  std::string What = Class == ELFCLASS32 ? "ELF32"
                     : Class == ELFCLASS64
                         ? "ELF64"
                         : "ELF class " + std::to_string(Class);
  What += Data == ELFDATA2LSB   ? " little-endian"
          : Data == ELFDATA2MSB ? " big-endian"
                                : ", data encoding " + std::to_string(Data);
  What += ", e_machine " + std::to_string(Machine);
  StringRef Arch = convertEMachineToArchName(Machine);
  if (Arch != "None")
    What += " (" + Arch.str() + ")";
  return "not an AMDGPU code object or a HIP host binary: " + What +
         "; expected ELF64 little-endian with EM_AMDGPU or EM_X86_64";
}

Expected<Rewritten> pipeline::rewriteInput(ArrayRef<uint8_t> Input,
                                           const PipelineText &P,
                                           const PipelineOptions &Opts,
                                           RunSummary &Summary) {
  Summary.Kind = bundle::identifyInput(Input);
  switch (Summary.Kind) {
  case InputKind::CodeObject:
  case InputKind::Unknown: {
    // Unknown input goes to the code object reader, which says what is
    // wrong with it, unless it is plainly no code object at all.
    if (Summary.Kind == InputKind::Unknown)
      if (std::optional<std::string> Why = whyUnknown(Input))
        return makeError(*Why);
    bool Changed = false;
    std::vector<UnfitPass> Unfit;
    Expected<Rewritten> R = rewriteCodeObject(Input, P, Opts, Changed, &Unfit);
    if (!R)
      return R.takeError();
    Summary.CodeObjects = 1;
    Summary.Changed = Changed;
    Summary.OutputChanged = Changed;
    Summary.addUnfit(Unfit, "");
    if (Error E = checkPassesFit(P, Summary))
      return std::move(E);
    return R;
  }
  case InputKind::OffloadBundle:
  case InputKind::CompressedOffloadBundle: {
    Expected<std::optional<std::vector<uint8_t>>> B =
        rewriteBundle(Input, "", P, Opts, Summary);
    countCodeObjects(Summary, Opts);
    if (!B)
      return B.takeError();
    if (Error E = checkPassesFit(P, Summary))
      return std::move(E);
    Rewritten R;
    R.Bytes = std::move(*B);
    Summary.OutputChanged = R.Bytes.has_value();
    return std::move(R);
  }
  case InputKind::HostELF: {
    Expected<Rewritten> R = rewriteHost(Input, P, Opts, Summary);
    countCodeObjects(Summary, Opts);
    if (!R)
      return R.takeError();
    if (Error E = checkPassesFit(P, Summary))
      return std::move(E);
    Summary.OutputChanged = Summary.Changed != 0;
    return R;
  }
  }
  llvm_unreachable("unknown input kind");
}
