//===- lib/Passes/SwapKernels.cpp - swap-kernels --------------------------===//

#include "hotswap/Passes/SwapKernels.h"

#include "hotswap/AMDGPU/ScratchSGPR.h"
#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Object/InputFile.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Passes/SwapRecord.h"
#include "hotswap/Passes/TargetAnalysis.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <map>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace {

/// The metadata fields a swapped kernel takes from the replacement (the
/// others that KernelMD has, .kernarg_segment_size and .wavefront_size, must
/// be equal).
constexpr KernelField TakenFields[] = {
    KernelField::SGPRCount,
    KernelField::VGPRCount,
    KernelField::AGPRCount,
    KernelField::GroupSegmentFixedSize,
    KernelField::PrivateSegmentFixedSize,
    KernelField::MaxFlatWorkgroupSize,
    KernelField::SGPRSpillCount,
    KernelField::VGPRSpillCount,
    KernelField::UsesDynamicStack,
};

/// The largest PT_LOAD alignment of a replacement taken as is (the delta is
/// a multiple of it); larger ones are refused.
constexpr uint64_t MaxImageAlign = uint64_t(1) << 30;

std::string valueText(std::optional<uint64_t> V) {
  return V ? std::to_string(*V) : std::string("absent");
}

/// The name of an AMDGPU relocation type.
StringRef relocationName(uint32_t Type) {
  switch (Type) {
#define ELF_RELOC(Name, Value)                                                 \
  case Value:                                                                  \
    return #Name;
#include "llvm/BinaryFormat/ELFRelocs/AMDGPU.def"
#undef ELF_RELOC
  default:
    return "an unknown relocation";
  }
}

} // namespace

struct SwapKernelsPass::Replacement {
  /// One PT_LOAD of the file.
  struct Load {
    uint64_t VAddr = 0;
    uint64_t FileSize = 0;
    uint64_t MemSize = 0;
    uint32_t Flags = 0;
    ArrayRef<uint8_t> Bytes;
  };

  std::unique_ptr<Object> Obj; // owns the file's bytes
  AnalysisManager AM;
  std::optional<KernelsAnalysis::Result> Kernels;
  std::string MD5;
  std::vector<Load> Loads;
  /// The delta is a multiple of this (the largest p_align, at least a page).
  uint64_t Align = 0x1000;
  /// The first PT_LOAD's address, aligned down to Align: where the image
  /// starts.
  uint64_t Start = 0;
  StringMap<size_t> ByName;
  /// Function symbols (address, size) by name.
  StringMap<std::pair<uint64_t, uint64_t>> Functions;
  /// Variables the host can reach (exported STT_OBJECT other than kernel
  /// descriptors).
  std::vector<std::string> Variables;
  /// Whether the image is intact at a delta, by delta, in the object as it
  /// is during one call of the pass (cleared at the start of each).
  DenseMap<uint64_t, bool> IntactAt;
};

SwapKernelsPass::SwapKernelsPass(SwapOptions O) : Opts(std::move(O)) {
  if (!Opts.Only.empty())
    OnlyRE.emplace(Opts.Only);
}

SwapKernelsPass::~SwapKernelsPass() = default;

Expected<std::unique_ptr<Pass>> SwapKernelsPass::create(StringRef Params) {
  SwapOptions O;
  SmallVector<StringRef, 4> Parts;
  Params.split(Parts, ';', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts) {
    auto [Key, Value] = P.split('=');
    if (Key == "with" && !Value.empty()) {
      O.With = Value.str();
    } else if (Key == "only") {
      std::string Err;
      Regex RE(Value);
      if (!RE.isValid(Err))
        return makeError("invalid regular expression '" + Value +
                         "' in only=: " + Err);
      O.Only = Value.str();
    } else if (Key == "own-variables" && P == Key) {
      O.OwnVariables = true;
    } else {
      return makeError("unknown parameter '" + P + "'");
    }
  }
  if (O.With.empty())
    return makeError("with=FILE is required: the code object whose "
                     "kernels replace the object's");
  return std::make_unique<SwapKernelsPass>(std::move(O));
}

void SwapKernelsPass::printPipeline(raw_ostream &OS) const {
  OS << name() << "<with=" << Opts.With;
  if (!Opts.Only.empty())
    OS << ";only=" << Opts.Only;
  if (Opts.OwnVariables)
    OS << ";own-variables";
  OS << ">";
}

Expected<SwapKernelsPass::Replacement &> SwapKernelsPass::replacement() {
  if (Repl)
    return *Repl;
  auto Fail = [&](const Twine &Msg) {
    return makeError("replacement '" + Opts.With + "': " + Msg);
  };
  Expected<std::unique_ptr<MemoryBuffer>> B = readRegularFile(Opts.With);
  if (!B)
    return makeError("cannot read replacement '" + Opts.With +
                     "': " + toString(B.takeError()));
  StringRef Bytes = (*B)->getBuffer();
  if (Bytes.starts_with("__CLANG_OFFLOAD_BUNDLE__") ||
      Bytes.starts_with("CCOB"))
    return Fail("an offload bundle, not a code object (extract the code "
                "object for the target, e.g. with clang-offload-bundler "
                "--unbundle)");
  auto F = std::make_unique<Replacement>();
  F->MD5 = md5Hex(arrayRefFromStringRef(Bytes));
  Expected<std::unique_ptr<Object>> O = readObject(std::move(*B));
  if (!O)
    return Fail(toString(O.takeError()));
  F->Obj = std::move(*O);
  const Object &Obj = *F->Obj;
  Expected<KernelsAnalysis::Result> K = KernelsAnalysis::run(*F->Obj, F->AM);
  if (!K)
    return Fail(toString(K.takeError()));
  F->Kernels.emplace(std::move(*K));
  if (F->Kernels->Kernels.empty())
    return Fail("no kernels");
  for (size_t I = 0; I != F->Kernels->Kernels.size(); ++I)
    F->ByName[F->Kernels->Kernels[I].Name] = I;

  // Moved by a delta, the image is right only if nothing in it holds an
  // absolute address: the loader would have to relocate it.
  for (const auto &S : Obj.sections()) {
    if (!S->isAlloc() || S->isNoBits() || S->size() == 0 ||
        (S->Type != ELF::SHT_RELA && S->Type != ELF::SHT_REL &&
         S->Type != ELF::SHT_RELR))
      continue;
    const uint64_t EntSize = S->Type == ELF::SHT_RELA  ? 24
                             : S->Type == ELF::SHT_REL ? 16
                                                       : 8;
    std::string First;
    if (S->Type == ELF::SHT_RELA && S->size() >= 24) {
      uint64_t Offset = support::endian::read64le(S->contents().data());
      uint32_t Type = static_cast<uint32_t>(
          support::endian::read64le(S->contents().data() + 8));
      const Section *At = Obj.sectionForAddress(Offset);
      First = "; the first: " + relocationName(Type).str() + " at " +
              hex(Offset) + (At ? " in '" + At->Name + "'" : "");
    }
    return Fail("needs dynamic relocations (" + Twine(S->size() / EntSize) +
                " in '" + S->Name + "'" + First +
                "): moved by a delta, its data would hold stale addresses (a "
                "device variable whose address is stored in data needs one)");
  }

  // The PT_LOADs, in address order, disjoint, inside the file.
  for (const auto &P : Obj.segments()) {
    if (P->Type != ELF::PT_LOAD)
      continue;
    if (P->FileSize > P->MemSize || P->Offset > Obj.input().size() ||
        P->FileSize > Obj.input().size() - P->Offset ||
        P->MemSize > UINT64_MAX - P->VAddr)
      return Fail("PT_LOAD at " + hex(P->VAddr) + " has a bad size or offset");
    if (P->Align > 1 && (!isPowerOf2_64(P->Align) || P->Align > MaxImageAlign))
      return Fail("PT_LOAD at " + hex(P->VAddr) + " has alignment " +
                  hex(P->Align) + " (a power of two up to " +
                  hex(MaxImageAlign) + " expected)");
    if (!F->Loads.empty() &&
        F->Loads.back().VAddr + F->Loads.back().MemSize > P->VAddr)
      return Fail("PT_LOAD at " + hex(P->VAddr) +
                  " is not above the PT_LOAD before it");
    F->Align = std::max(F->Align, P->Align);
    F->Loads.push_back({P->VAddr, P->FileSize, P->MemSize, P->Flags,
                        Obj.input().slice(P->Offset, P->FileSize)});
  }
  if (F->Loads.empty())
    return Fail("no PT_LOAD");
  F->Start = alignDown(F->Loads.front().VAddr, F->Align);

  for (SymbolTable *T : {Obj.dynsym(), Obj.symtab()}) {
    if (!T)
      continue;
    for (const Symbol &S : T->symbols()) {
      if (S.Type == ELF::STT_FUNC && S.Sec)
        F->Functions.try_emplace(S.Name, S.Value, S.Size);
      bool Exported = !S.isLocal() && S.visibility() != ELF::STV_HIDDEN &&
                      S.visibility() != ELF::STV_INTERNAL;
      if (T == Obj.dynsym() && Exported &&
          (S.Type == ELF::STT_OBJECT || S.Type == ELF::STT_COMMON) &&
          (S.Sec || S.Shndx == ELF::SHN_COMMON) &&
          !StringRef(S.Name).ends_with(".kd") &&
          // The marker of a HIP translation unit, which no code reads.
          !StringRef(S.Name).starts_with("__hip_cuid_"))
        F->Variables.push_back(S.Name);
    }
  }
  Repl = std::move(F);
  return *Repl;
}

std::optional<std::string>
SwapKernelsPass::mismatch(const Object &Obj, const KernelsAnalysis::Result &R) {
  const Object &F = *Repl->Obj;
  const TargetInfo &FT = Repl->Kernels->Target;
  if (F.Header.Flags != Obj.Header.Flags)
    return "'" + Opts.With + "' is for " + FT.targetID() + " (e_flags " +
           hex(F.Header.Flags) + "), this code object for " +
           R.Target.targetID() + " (e_flags " + hex(Obj.Header.Flags) + ")";
  if (F.Header.abiVersion() != Obj.Header.abiVersion())
    return "'" + Opts.With + "' is code object v" +
           std::to_string(FT.CodeObjectVersion) + ", this one v" +
           std::to_string(R.Target.CodeObjectVersion);
  return std::nullopt;
}

std::vector<std::pair<size_t, size_t>>
SwapKernelsPass::selected(const KernelsAnalysis::Result &R,
                          const Replacement &F) const {
  std::vector<std::pair<size_t, size_t>> Out;
  for (size_t I = 0; I != R.Kernels.size(); ++I) {
    const KernelInfo &K = R.Kernels[I];
    if (OnlyRE && !OnlyRE->match(K.Name))
      continue;
    auto It = F.ByName.find(K.Name);
    if (It != F.ByName.end())
      Out.push_back({I, It->second});
  }
  return Out;
}

/// Whether FILE's image lies intact at delta \p D in \p Obj. Deltas are
/// taken modulo 2^64: an image may lie below FILE's own addresses.
static bool imageIntactAt(const Object &Obj, SwapKernelsPass::Replacement &F,
                          uint64_t D) {
  auto [It, New] = F.IntactAt.try_emplace(D, false);
  if (!New)
    return It->second;
  bool Intact = D % F.Align == 0;
  for (const SwapKernelsPass::Replacement::Load &L : F.Loads) {
    if (!Intact)
      break;
    const uint64_t Addr = L.VAddr + D;
    if (L.MemSize > UINT64_MAX - Addr) {
      Intact = false;
      break;
    }
    Intact = Obj.loadSegmentFor(Addr, L.MemSize) != nullptr;
    if (Intact && L.FileSize) {
      // Bytes not in the file at that address: the image is not there.
      std::optional<ArrayRef<uint8_t>> B = Obj.bytesIfAt(Addr, L.FileSize);
      Intact = B && *B == L.Bytes;
    }
  }
  F.IntactAt[D] = Intact;
  return Intact;
}

/// The `<kernel>.swap` symbol at \p Code, if any.
static const Symbol *swapSymbolAt(const Object &Obj, const KernelInfo &K,
                                  uint64_t Code) {
  const SymbolTable *T = Obj.symtab();
  if (!T)
    return nullptr;
  std::string Name = K.Name + SwapSymbolSuffix.str();
  for (const Symbol &S : T->symbols())
    if (S.Type == ELF::STT_FUNC && S.Value == Code && S.Name == Name)
      return &S;
  return nullptr;
}

bool SwapKernelsPass::isSwapped(const Object &Obj,
                                const KernelsAnalysis::Result &R,
                                const KernelInfo &K, const KernelInfo &RK) {
  if (!imageIntactAt(Obj, *Repl, K.CodeEntry - RK.CodeEntry))
    return false;
  if (K.KD != swappedDescriptor(R.Target, RK.KD, K))
    return false;
  if (!K.MD || !RK.MD)
    return false;
  for (KernelField F : TakenFields) {
    std::optional<uint64_t> Have = K.MD->get(F), Want = RK.MD->get(F);
    // A stub's scratch pair may have raised .sgpr_count.
    bool Raised = F == KernelField::SGPRCount && K.EntryStub && Have && Want &&
                  *Have > *Want;
    if (Have != Want && !Raised)
      return false;
  }
  return !Obj.symtab() || swapSymbolAt(Obj, K, K.CodeEntry);
}

Expected<bool> SwapKernelsPass::holds(Object &Obj, KernelsAnalysis::Result &R,
                                      AnalysisManager &AM, PassContext &Ctx) {
  Expected<Replacement &> F = replacement();
  if (!F)
    return F.takeError();
  F->IntactAt.clear();
  // A code object the file does not fit: let the precondition say why.
  if (mismatch(Obj, R))
    return false;
  std::vector<std::pair<size_t, size_t>> Pairs = selected(R, *F);
  if (Pairs.empty())
    return false;
  for (auto [I, J] : Pairs)
    if (!isSwapped(Obj, R, R.Kernels[I], F->Kernels->Kernels[J]))
      return false;
  return true;
}

Expected<std::optional<std::string>>
SwapKernelsPass::precondition(Object &Obj, KernelsAnalysis::Result &R,
                              AnalysisManager &AM, PassContext &Ctx) {
  Expected<Replacement &> F = replacement();
  if (!F)
    return F.takeError();
  if (std::optional<std::string> Why = mismatch(Obj, R))
    return Why;
  if (selected(R, *F).empty())
    return std::optional<std::string>(
        "'" + Opts.With + "' defines none of this code object's kernels" +
        (Opts.Only.empty() ? "" : " that only=" + Opts.Only + " selects"));
  return std::nullopt;
}

/// What the host relies on to launch \p K must be the same in \p RK.
static Error checkCompatible(const KernelsAnalysis::Result &R,
                             const KernelInfo &K,
                             const KernelsAnalysis::Result &FR,
                             const KernelInfo &RK, StringRef File) {
  auto Bad = [&](const Twine &What) {
    return makeError("kernel '" + K.Name + "' cannot be swapped: " + What);
  };
  if (!R.Metadata || !K.MD)
    return Bad("the code object has no metadata for it");
  if (!FR.Metadata || !RK.MD)
    return Bad("'" + File + "' has no metadata for it");
  auto Differs = [&](const Twine &Field, const std::string &Here,
                     const std::string &There) {
    return Bad(Field + " is " + Here + " in the code object, " + There +
               " in '" + File + "'");
  };
  Expected<KernelInterface> A = R.Metadata->interfaceOf(K.KDSymbol);
  if (!A)
    return Bad(toString(A.takeError()));
  Expected<KernelInterface> B = FR.Metadata->interfaceOf(RK.KDSymbol);
  if (!B)
    return Bad("'" + File + "': " + toString(B.takeError()));
  if (A->Args.has_value() != B->Args.has_value())
    return Differs("'.args'", A->Args ? "present" : "absent",
                   B->Args ? "present" : "absent");
  if (A->Args) {
    if (A->Args->size() != B->Args->size())
      return Bad("it has " + Twine(A->Args->size()) +
                 " arguments in the code object, " + Twine(B->Args->size()) +
                 " in '" + File + "'");
    for (size_t I = 0; I != A->Args->size(); ++I) {
      const KernelArg &X = (*A->Args)[I], &Y = (*B->Args)[I];
      std::string Arg = "'.args[" + std::to_string(I) + "]";
      if (X.Offset != Y.Offset)
        return Differs(Arg + " .offset'", valueText(X.Offset),
                       valueText(Y.Offset));
      if (X.Size != Y.Size)
        return Differs(Arg + " .size'", valueText(X.Size), valueText(Y.Size));
      if (X.ValueKind != Y.ValueKind) {
        // (Strings from the files: escaped, as launch keys' values are.)
        std::string XS, YS;
        raw_string_ostream XO(XS), YO(YS);
        printEscapedString(X.ValueKind, XO);
        printEscapedString(Y.ValueKind, YO);
        return Differs(Arg + " .value_kind'", "'" + XS + "'", "'" + YS + "'");
      }
    }
  }
  for (KernelField F :
       {KernelField::KernargSegmentSize, KernelField::WavefrontSize}) {
    std::optional<uint64_t> Here = K.MD->get(F), There = RK.MD->get(F);
    if (Here != There)
      return Differs("'" + kernelFieldKey(F) + "'", valueText(Here),
                     valueText(There));
  }
  if (K.KD.wavefrontSize() != RK.KD.wavefrontSize())
    return Differs("the descriptor's wavefront size",
                   std::to_string(K.KD.wavefrontSize()),
                   std::to_string(RK.KD.wavefrontSize()));
  if (K.KD.KernargSize != RK.KD.KernargSize)
    return Differs("the descriptor's kernarg_size",
                   std::to_string(K.KD.KernargSize),
                   std::to_string(RK.KD.KernargSize));
  // The kernel takes the replacement's descriptor and metadata values: they
  // must agree, or the output would say two things (and fail verify).
  std::vector<std::string> Disagree = metadataDisagreements(*RK.MD, RK.KD);
  if (!Disagree.empty())
    return Bad("in '" + File + "', " + Disagree.front());
  std::map<std::string, std::string> Keys = A->LaunchKeys;
  Keys.insert(B->LaunchKeys.begin(), B->LaunchKeys.end());
  for (const auto &KV : Keys) {
    auto Value = [&](const KernelInterface &I) {
      auto It = I.LaunchKeys.find(KV.first);
      return It == I.LaunchKeys.end() ? std::string("absent") : It->second;
    };
    if (Value(*A) != Value(*B))
      return Differs("'" + KV.first + "'", Value(*A), Value(*B));
  }
  return Error::success();
}

/// Appends FILE's image above everything \p Obj has: one section per PT_LOAD
/// (and one NOBITS section for its bss), one new PT_LOAD each. Returns the
/// delta.
static Expected<uint64_t> appendImage(Object &Obj,
                                      const SwapKernelsPass::Replacement &F,
                                      StringRef File) {
  const uint64_t Free = Obj.firstFreeAddress(0x1000);
  if (Free > UINT64_MAX - F.Align)
    return makeError("no address space left above " + hex(Free) +
                     " for the image of '" + File + "'");
  const uint64_t Base = alignTo(Free, F.Align);
  // Modulo 2^64: FILE's addresses may lie above Base.
  const uint64_t D = Base - F.Start;
  const SwapKernelsPass::Replacement::Load &Last = F.Loads.back();
  if (Last.VAddr - F.Start + Last.MemSize > UINT64_MAX - Base)
    return makeError("the image of '" + File + "' does not fit above " +
                     hex(Base));
  for (const SwapKernelsPass::Replacement::Load &L : F.Loads) {
    const uint64_t Addr = L.VAddr + D;
    const bool Exec = L.Flags & ELF::PF_X, Write = L.Flags & ELF::PF_W;
    const uint64_t Flags = ELF::SHF_ALLOC | (Exec ? ELF::SHF_EXECINSTR : 0) |
                           (Write ? ELF::SHF_WRITE : 0);
    auto Seg = std::make_unique<Segment>();
    Seg->Type = ELF::PT_LOAD;
    Seg->Flags = L.Flags;
    Seg->VAddr = Seg->PAddr = Addr;
    Seg->Align = F.Align;
    Seg->FileSize = L.FileSize;
    Seg->MemSize = L.MemSize;
    if (L.FileSize) {
      auto S = std::make_unique<Section>();
      S->Name = std::string(".hotswap.swap.") + (Exec    ? "text"
                                                 : Write ? "data"
                                                         : "rodata");
      S->Type = ELF::SHT_PROGBITS;
      S->Flags = Flags;
      S->Addr = Addr;
      // As aligned as the address allows, up to a page (nothing in the
      // image asks for more than its segment's alignment).
      S->AddrAlign =
          Addr ? std::min<uint64_t>(uint64_t(1) << countr_zero(Addr), F.Align)
               : F.Align;
      S->setContents(std::vector<uint8_t>(L.Bytes.begin(), L.Bytes.end()));
      Seg->Members.push_back(&Obj.addSection(std::move(S)));
    }
    if (L.MemSize > L.FileSize) {
      auto S = std::make_unique<Section>();
      S->Name = ".hotswap.swap.bss";
      S->Type = ELF::SHT_NOBITS;
      S->Flags = Flags;
      S->Addr = Addr + L.FileSize;
      S->AddrAlign = 1;
      S->setNoBitsSize(L.MemSize - L.FileSize);
      Seg->Members.push_back(&Obj.addSection(std::move(S)));
    }
    Obj.addSegment(std::move(Seg));
  }
  return D;
}

/// The stub a kernel enters through, or that patch-descriptors will make it
/// enter through.
static const PoolStub *stubOf(const KernelInfo &K) {
  return K.EntryStub     ? &*K.EntryStub
         : K.PendingStub ? &*K.PendingStub
                         : nullptr;
}

/// Everything that makes a swap impossible, checked before anything changes.
static Error checkSwaps(const KernelsAnalysis::Result &R,
                        const SwapKernelsPass::Replacement &F,
                        ArrayRef<std::pair<size_t, size_t>> Todo,
                        const SwapOptions &Opts) {
  const KernelsAnalysis::Result &FR = *F.Kernels;
  for (auto [I, J] : Todo)
    if (Error E =
            checkCompatible(R, R.Kernels[I], FR, FR.Kernels[J], Opts.With))
      return E;
  if (!F.Variables.empty() && !Opts.OwnVariables) {
    std::string Names;
    for (size_t I = 0; I != F.Variables.size() && I != 4; ++I)
      Names += (I ? ", '" : "'") + F.Variables[I] + "'";
    if (F.Variables.size() > 4)
      Names += " and " + std::to_string(F.Variables.size() - 4) + " more";
    return makeError("replacement '" + Opts.With +
                     "' defines device variables the host can reach (" + Names +
                     "): the swapped kernels would use these copies, not the "
                     "code object's (swap-kernels<...;own-variables> accepts "
                     "that)");
  }
  for (auto [I, J] : Todo) {
    const KernelInfo &K = R.Kernels[I];
    const PoolStub *Stub = stubOf(K);
    if (Stub && FR.Kernels[J].needsDualStub(R.Target) != Stub->Dual)
      return makeError(
          "kernel '" + K.Name + "' cannot be swapped: its " +
          (Stub->Dual ? "dual (512-byte)" : "single (256-byte)") + " stub at " +
          hex(Stub->Addr) + " cannot enter the kernel of '" + Opts.With +
          "', which " + (Stub->Dual ? "does not preload" : "preloads") +
          " kernel arguments (the firmware enters a preloading kernel at "
          "+256)");
  }
  return Error::success();
}

/// Where FILE's image is in the object, as the delta from its own
/// addresses: one already there (an earlier swap of other kernels), else a
/// new one appended.
static Expected<uint64_t> placeImage(Object &Obj,
                                     SwapKernelsPass::Replacement &F,
                                     const KernelsAnalysis::Result &R,
                                     ArrayRef<std::pair<size_t, size_t>> Pairs,
                                     const SwapOptions &Opts,
                                     PassContext &Ctx) {
  const KernelsAnalysis::Result &FR = *F.Kernels;
  for (auto [I, J] : Pairs) {
    uint64_t D = R.Kernels[I].CodeEntry - FR.Kernels[J].CodeEntry;
    if (imageIntactAt(Obj, F, D)) {
      Ctx.Stats.add(SwapKernelsPass::Name, "images-reused",
                    "images of the file already in the object used again");
      return D;
    }
  }
  Expected<std::vector<SwapRecord>> Records = readSwapRecords(Obj);
  if (!Records)
    return Records.takeError();
  for (const SwapRecord &Rec : *Records) {
    if (Rec.FromMD5 != F.MD5 || Rec.Image.empty())
      continue;
    uint64_t D = Rec.Image.front().Addr - F.Loads.front().VAddr;
    if (imageIntactAt(Obj, F, D)) {
      Ctx.Stats.add(SwapKernelsPass::Name, "images-reused",
                    "images of the file already in the object used again");
      return D;
    }
  }
  Expected<uint64_t> D = appendImage(Obj, F, Opts.With);
  if (!D)
    return D.takeError();
  Ctx.Stats.add(SwapKernelsPass::Name, "images", "images of the file appended");
  return *D;
}

namespace {
/// One stub encoder per stub prologue (stubs keep theirs).
class StubEncoders {
public:
  StubEncoders(const Object &Obj, TargetAnalysis::Result &Target)
      : Obj(Obj), Target(Target) {}
  Expected<StubEncoder &> forStub(const PoolStub &S) {
    Expected<ArrayRef<uint8_t>> P = Obj.bytesAt(S.Addr, S.Decoded.PrologueSize);
    if (!P)
      return P.takeError();
    std::vector<uint8_t> Prologue(P->begin(), P->end());
    auto It = Encoders.find(Prologue);
    if (It != Encoders.end())
      return *It->second;
    TargetAnalysis::Result &TA = Target;
    Expected<std::unique_ptr<StubEncoder>> E =
        StubEncoder::create(TA.info(), [&TA]() { return TA.mc(); }, Prologue);
    if (!E)
      return E.takeError();
    return *Encoders.emplace(std::move(Prologue), std::move(*E)).first->second;
  }

private:
  const Object &Obj;
  TargetAnalysis::Result &Target;
  std::map<std::vector<uint8_t>, std::unique_ptr<StubEncoder>> Encoders;
};

/// What retargeting a kernel's stub decided for its descriptor.
struct StubEntry {
  uint64_t Entry;
  /// The scratch pair's floor for the metadata .sgpr_count.
  std::optional<uint64_t> SGPRCountFloor;
};
} // namespace

/// Points \p Stub (kernel \p K's) at \p Code: it keeps its slot and
/// prologue; only its jump changes, in the form it has when the new code is
/// in reach, else in the long form on a scratch pair the replacement's
/// descriptor \p KD allows. When the kernel already enters through it, the
/// descriptor does so still, as patch-descriptors would have it (\p KD is
/// adjusted); a pending stub is left to patch-descriptors.
static Expected<StubEntry>
retargetStub(const KernelInfo &K, const PoolStub &Stub, uint64_t Code,
             KernelDescriptor &KD, const TargetInfo &T, StubEncoders &Encoders,
             PassContext &Ctx) {
  auto Bad = [&](const Twine &What) {
    return makeError("kernel '" + K.Name + "' cannot be swapped: " + What);
  };
  Expected<StubEncoder &> Enc = Encoders.forStub(Stub);
  if (!Enc)
    return prefixError("kernel '" + K.Name + "'", Enc.takeError());
  StubSpec Spec;
  Spec.StubAddr = Stub.Addr;
  Spec.Target = Code;
  Spec.Dual = Stub.Dual;
  bool Short =
      Stub.Decoded.Form == StubSpec::Short &&
      Enc->shortFormReaches(Spec.StubAddr, Spec.Target) &&
      (!Spec.Dual || Enc->shortFormReaches(Spec.StubAddr + StubSlotSize,
                                           Spec.Target + StubSlotSize));
  if (Short) {
    Spec.Form = StubSpec::Short;
  } else {
    Expected<ScratchChoice> SC = chooseScratch(T, KD);
    if (!SC)
      return Bad("its stub at " + hex(Stub.Addr) +
                 " cannot reach the new code at " + hex(Code) + ": " +
                 toString(SC.takeError()));
    Spec.Form = SC->UseVCC ? StubSpec::VCC : StubSpec::SGPRPair;
    Spec.SGPR = SC->SGPR;
  }
  Expected<std::vector<uint8_t>> Bytes = Enc->encode(Spec);
  if (!Bytes)
    return prefixError("kernel '" + K.Name + "'", Bytes.takeError());
  if (Error E = Stub.Sec->overwrite(Stub.Addr - Stub.Sec->Addr, *Bytes))
    return prefixError("kernel '" + K.Name + "'", std::move(E));
  Ctx.Stats.add(SwapKernelsPass::Name, "stubs", "stubs retargeted");
  if (!K.EntryStub)
    return StubEntry{Code, std::nullopt};

  StubEntry Out{Stub.Addr, std::nullopt};
  unsigned Max = static_cast<unsigned>(Stub.size() / 128);
  if (T.InstPrefWidth && KD.instPrefSize(T) > Max)
    KD.setInstPrefSize(T, Max);
  const unsigned Specials = kernelSpecialSGPRs(T, KD);
  Expected<std::optional<unsigned>> G =
      Spec.Form == StubSpec::SGPRPair
          ? granuleForPair(T, KD, Spec.SGPR, Specials)
      : Spec.Form == StubSpec::VCC
          ? granuleForVCC(T, KD, Specials)
          : Expected<std::optional<unsigned>>(std::nullopt);
  if (!G)
    return Bad(toString(G.takeError()));
  if (*G) {
    KD.setSGPRGranule(**G);
    Ctx.Stats.add(SwapKernelsPass::Name, "granule-raised",
                  "SGPR granules raised for a stub's scratch pair");
  }
  if (Spec.Form == StubSpec::SGPRPair)
    Out.SGPRCountFloor = sgprCountCoveringPair(T, Spec.SGPR, Specials);
  Ctx.Stats.add(SwapKernelsPass::Name, "through-stub",
                "kernels swapped through their stub");
  return Out;
}

/// The metadata values the runtime reads take FILE's (\p RK's), in place
/// (.sgpr_count at least \p SGPRCountFloor). Sets \p Changed when one did.
static Error takeMetadata(KernelsAnalysis::Result &R, const KernelInfo &K,
                          const KernelInfo &RK,
                          std::optional<uint64_t> SGPRCountFloor,
                          const SwapOptions &Opts, PassContext &Ctx,
                          bool &Changed) {
  for (KernelField Field : TakenFields) {
    std::optional<uint64_t> Have = K.MD->get(Field), Want = RK.MD->get(Field);
    if (Want && Field == KernelField::SGPRCount && SGPRCountFloor)
      Want = std::max(*Want, *SGPRCountFloor);
    if (Have == Want)
      continue;
    auto Bad = [&](const Twine &What) {
      return makeError("kernel '" + K.Name + "' cannot be swapped: " + What);
    };
    if (!Have || !Want)
      return Bad("metadata '" + kernelFieldKey(Field) + "' is " +
                 valueText(Have) + " in the code object, " + valueText(Want) +
                 " in '" + Opts.With +
                 "' (a key cannot be added or removed in place)");
    if (Error E = R.Metadata->setField(K.KDSymbol, Field, *Want))
      return Bad(toString(std::move(E)));
    Changed = true;
    Ctx.Stats.add(SwapKernelsPass::Name, "metadata",
                  "metadata values rewritten");
  }
  return Error::success();
}

/// `<kernel>.swap` at \p Code, the replacement \p RK's code, unless there
/// is one already.
static void addSwapSymbol(Object &Obj, const KernelInfo &K,
                          const KernelInfo &RK, uint64_t Code,
                          const SwapKernelsPass::Replacement &F,
                          PassContext &Ctx) {
  SymbolTable *ST = Obj.symtab();
  if (!ST) {
    Ctx.Stats.add(SwapKernelsPass::Name, "no-symtab",
                  "kernels swapped without a .swap symbol (no .symtab)");
    return;
  }
  if (swapSymbolAt(Obj, K, Code))
    return;
  Symbol S;
  S.Name = K.Name + SwapSymbolSuffix.str();
  S.Binding = ELF::STB_GLOBAL;
  S.Type = ELF::STT_FUNC;
  S.Other = ELF::STV_DEFAULT;
  S.Sec = Obj.sectionForAddress(Code);
  S.Value = Code;
  auto FI = F.Functions.find(RK.Name);
  if (FI != F.Functions.end() && FI->second.first == RK.CodeEntry)
    S.Size = FI->second.second;
  ST->add(std::move(S));
  Ctx.Stats.add(SwapKernelsPass::Name, "symbols",
                "<kernel>.swap symbols added");
}

/// Writes the metadata note with the values set, the same size: one that
/// would have to grow names the kernel and the field.
static Error rewriteMetadataNote(KernelsAnalysis::Result &R) {
  Expected<NoteRewrite> NR = R.Metadata->rewrite();
  if (!NR)
    return handleErrors(NR.takeError(), [&](const NoteGrowthError &G) {
      std::string Kernel = G.Symbol;
      std::optional<uint64_t> Old;
      for (const KernelInfo &K : R.Kernels)
        if (K.KDSymbol == G.Symbol) {
          Kernel = K.Name;
          if (K.MD)
            Old = K.MD->get(G.Field);
        }
      return makeError("kernel '" + Kernel +
                       "' cannot be swapped: "
                       "metadata '" +
                       kernelFieldKey(G.Field) + "' cannot change from " +
                       valueText(Old) + " to " + std::to_string(G.Value) +
                       " in place: the note at offset " + hex(G.NoteOffset) +
                       " would have to grow, and it is loaded memory");
    });
  if (NR->Bytes.size() != R.MetadataSection->size())
    return makeError("metadata: the rewritten note section changed size");
  R.MetadataSection->setContents(std::move(NR->Bytes));
  return Error::success();
}

Expected<PreservedAnalyses>
SwapKernelsPass::runOnKernels(Object &Obj, KernelsAnalysis::Result &R,
                              AnalysisManager &AM, PassContext &Ctx) {
  Expected<Replacement &> FOr = replacement();
  if (!FOr)
    return FOr.takeError();
  Replacement &F = *FOr;
  F.IntactAt.clear();
  const KernelsAnalysis::Result &FR = *F.Kernels;
  const TargetInfo &T = R.Target;
  std::vector<std::pair<size_t, size_t>> Pairs = selected(R, F), Todo;
  for (auto [I, J] : Pairs)
    if (!isSwapped(Obj, R, R.Kernels[I], FR.Kernels[J]))
      Todo.push_back({I, J});
  if (Todo.empty())
    return PreservedAnalyses::all();
  if (Error E = checkSwaps(R, F, Todo, Opts))
    return std::move(E);
  Expected<uint64_t> Delta = placeImage(Obj, F, R, Pairs, Opts, Ctx);
  if (!Delta)
    return Delta.takeError();
  std::vector<SwapSegment> Image;
  for (const SwapKernelsPass::Replacement::Load &L : F.Loads)
    Image.push_back({L.VAddr + *Delta, L.FileSize, L.MemSize, md5Hex(L.Bytes)});

  auto TA = AM.getResult<TargetAnalysis>(Obj);
  if (!TA)
    return TA.takeError();
  StubEncoders Encoders(Obj, *TA);
  std::vector<SwapRecord> NewRecords;
  bool MetadataChanged = false;
  for (auto [I, J] : Todo) {
    const KernelInfo &K = R.Kernels[I], &RK = FR.Kernels[J];
    const uint64_t Code = RK.CodeEntry + *Delta;
    KernelDescriptor KD = RK.KD;
    StubEntry Enter{Code, std::nullopt};
    if (const PoolStub *Stub = stubOf(K)) {
      Expected<StubEntry> SE =
          retargetStub(K, *Stub, Code, KD, T, Encoders, Ctx);
      if (!SE)
        return SE.takeError();
      Enter = *SE;
    }
    if (!KD.setEntryAddress(K.KDAddr, Enter.Entry))
      return makeError("kernel '" + K.Name + "' cannot be swapped: the entry " +
                       hex(Enter.Entry) +
                       " is not reachable from the descriptor at " +
                       hex(K.KDAddr) + " with a signed 64-bit offset");
    std::array<uint8_t, kd::Size> KDBytes;
    KD.write(KDBytes);
    if (Error E = K.KDSection->overwrite(K.KDAddr - K.KDSection->Addr, KDBytes))
      return prefixError("kernel '" + K.Name + "'", std::move(E));
    if (Error E = takeMetadata(R, K, RK, Enter.SGPRCountFloor, Opts, Ctx,
                               MetadataChanged))
      return std::move(E);
    addSwapSymbol(Obj, K, RK, Code, F, Ctx);
    NewRecords.push_back(
        {K.Name, Opts.With, F.MD5, RK.KDAddr + *Delta, Code, Image});
    Ctx.Stats.add(name(), "swapped", "kernels swapped");
  }
  if (MetadataChanged)
    if (Error E = rewriteMetadataNote(R))
      return std::move(E);
  if (Error E = appendSwapRecords(Obj, NewRecords))
    return std::move(E);
  PreservedAnalyses PA = PreservedAnalyses::none();
  PA.preserve<TargetAnalysis>();
  return PA;
}
