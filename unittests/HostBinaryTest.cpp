//===- unittests/HostBinaryTest.cpp - HIP host binaries -------------------===//
//
// Hosts are built in memory with yaml2obj from a description (HostSpec)
// shaped like what the linkers write (see test/FatBinary/Inputs/fatbin.py
// for the facts): a read-only PT_LOAD with .dynsym, .dynstr, .rela.dyn,
// .relr.dyn and .hip_fatbin; a read-write PT_LOAD with .data, the wrappers
// in .hipFatBinSegment, .dynamic and .bss. Outputs are read back with
// llvm::object::ELFFile (an independent reader) and with analyze(), and
// compared byte by byte with the input wherever they must not change.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/HostBinary.h"
#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Bundle/OffloadBundle.h"
#include "hotswap/Object/Object.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Writer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

#include <string>
#include <vector>

using namespace llvm;
using namespace llvm::ELF;
using namespace hotswap;
using namespace hotswap::bundle;
using namespace hotswap::unittest;

namespace {

using ELFT = object::ELF64LE;
using Bytes = std::vector<uint8_t>;

std::string hx(uint64_t V) { return "0x" + utohexstr(V, /*LowerCase=*/true); }

//===----------------------------------------------------------------------===//
// Bundles and hosts
//===----------------------------------------------------------------------===//

/// A HIP-shaped plain bundle: the empty host entry, then one device entry
/// of \p Size bytes derived from \p Seed, 4096-aligned.
Bytes makeBundle(uint8_t Seed, size_t Size = 0x180) {
  Bytes Payload(Size);
  for (size_t I = 0; I < Size; ++I)
    Payload[I] = uint8_t(Seed + I * 13);
  std::string Target = "hipv4-amdgcn-amd-amdhsa--gfx90a";
  OffloadBundleInput In[] = {{"host-x86_64-unknown-linux-gnu-", {}},
                             {Target, Payload}};
  Expected<Bytes> B = buildOffloadBundle(In, 0x1000);
  EXPECT_TRUE(bool(B)) << toString(B.takeError());
  return B ? *B : Bytes();
}

/// How a wrapper's pointer is stored.
enum class How {
  Rela,        // R_X86_64_RELATIVE, 0 in place (lld)
  RelaInPlace, // R_X86_64_RELATIVE, the value in place too (GNU ld)
  Relr,        // a .relr.dyn address entry, the value in place
  RelrBitmap,  // a .relr.dyn bitmap bit, the value in place
  Absolute,    // nothing but the value in place (ET_EXEC)
  Symbol,      // R_X86_64_64 against __hip_fatbin_abc, 0 in place (lld)
  SymbolInPlace,
};

struct WrapperSpec {
  How H = How::Rela;
  /// The bundle of HostSpec::Bundles it points to.
  size_t Bundle = 0;
  /// Added to the pointer.
  int64_t Skew = 0;
  uint32_t Magic = HostWrapperMagic;
  uint32_t Version = HostWrapperVersion;
};

struct HostSpec {
  uint16_t Type = ET_DYN;
  uint64_t Base = 0;
  bool Interp = false;
  bool FlagsPie = false;
  /// A PT_PHDR (lld writes one for a library, GNU ld does not).
  bool Phdr = true;
  /// Laid out back to back in .hip_fatbin, each 4096-aligned, followed by
  /// FatbinTrailing zero bytes.
  std::vector<Bytes> Bundles;
  uint64_t FatbinTrailing = 0;
  std::vector<WrapperSpec> Wrappers;
  /// More relocation entries of .rela.dyn (YAML list items) and words of
  /// .relr.dyn.
  std::string ExtraRela;
  std::vector<uint64_t> ExtraRelr;
  uint64_t BssSize = 0x3000;
  /// Replaces the wrapper section's contents (hex) when set.
  std::optional<std::string> WrapperContent;
  /// sh_type of .rela.dyn.
  std::string RelaType = "SHT_RELA";
  /// Used as the contents of .rela.dyn instead of Relocations when set.
  std::optional<std::string> RelaContent;
};

/// Where things are, from HostSpec (offsets are addresses minus Base).
struct HostLayout {
  uint64_t Fatbin = 0x1000;
  std::vector<uint64_t> BundleOffsets; // in .hip_fatbin
  uint64_t FatbinSize = 0;
  uint64_t Data = 0;     // .data (16 bytes)
  uint64_t Wrappers = 0; // .hipFatBinSegment
  uint64_t Dynamic = 0;
  uint64_t Bss = 0;

  explicit HostLayout(const HostSpec &S) {
    uint64_t Size = 0;
    for (const Bytes &B : S.Bundles) {
      Size = alignTo(Size, 0x1000);
      BundleOffsets.push_back(Size);
      Size += B.size();
    }
    FatbinSize = Size + S.FatbinTrailing;
    Data = alignTo(Fatbin + FatbinSize, 0x1000);
    Wrappers = Data + 0x10;
    Dynamic = Data + 0x200;
    Bss = Data + 0x400;
  }
  uint64_t bundleAddr(const HostSpec &S, size_t I) const {
    return S.Base + Fatbin + BundleOffsets[I];
  }
  uint64_t wrapperAddr(const HostSpec &S, size_t I) const {
    return S.Base + Wrappers + 24 * I;
  }
};

std::string hexOf(ArrayRef<uint8_t> B) { return toHex(B, /*LowerCase=*/true); }

std::string le(uint64_t V, unsigned N) {
  uint8_t B[8];
  support::endian::write64le(B, V);
  return hexOf(ArrayRef<uint8_t>(B, N));
}

std::string hostYAML(const HostSpec &S) {
  HostLayout L(S);
  const uint64_t B = S.Base;
  auto addr = [&](uint64_t Off) { return hx(B + Off); };
  unsigned NumPhdrs = 3 + (S.Phdr ? 1 : 0) + (S.Interp ? 1 : 0);

  std::string Fatbin;
  for (size_t I = 0; I < S.Bundles.size(); ++I) {
    Fatbin.append(2 * (L.BundleOffsets[I] - Fatbin.size() / 2), '0');
    Fatbin += hexOf(S.Bundles[I]);
  }
  Fatbin.append(2 * S.FatbinTrailing, '0');

  std::string Wrappers, Rela, Relr;
  Rela += "      - Offset: " + addr(L.Data) +
          "\n        Type: R_X86_64_RELATIVE\n        Addend: 0x1234\n";
  for (size_t I = 0; I < S.Wrappers.size(); ++I) {
    const WrapperSpec &W = S.Wrappers[I];
    uint64_t Ptr = S.Bundles.empty() ? B + L.Fatbin : L.bundleAddr(S, W.Bundle);
    Ptr += W.Skew;
    uint64_t Slot = L.wrapperAddr(S, I) + 8;
    bool InPlace = W.H != How::Rela && W.H != How::Symbol;
    Wrappers +=
        le(W.Magic, 4) + le(W.Version, 4) + le(InPlace ? Ptr : 0, 8) + le(0, 8);
    switch (W.H) {
    case How::Rela:
    case How::RelaInPlace:
      Rela += "      - Offset: " + hx(Slot) +
              "\n        Type: R_X86_64_RELATIVE\n        Addend: " + hx(Ptr) +
              "\n";
      break;
    case How::Symbol:
    case How::SymbolInPlace:
      Rela += "      - Offset: " + hx(Slot) +
              "\n        Symbol: __hip_fatbin_abc\n        Type: R_X86_64_64"
              "\n        Addend: " +
              std::to_string(int64_t(Ptr - (B + L.Fatbin))) + "\n";
      break;
    case How::Relr:
      Relr += "      - " + hx(Slot) + "\n";
      break;
    case How::RelrBitmap: {
      // An address entry for .data, then a bitmap from .data + 8.
      uint64_t Bit = (Slot - (B + L.Data + 8)) / 8 + 1;
      Relr += "      - " + addr(L.Data) + "\n      - " +
              hx((uint64_t(1) << Bit) | 1) + "\n";
      break;
    }
    case How::Absolute:
      break;
    }
  }
  Rela += S.ExtraRela;
  for (uint64_t W : S.ExtraRelr)
    Relr += "      - " + hx(W) + "\n";

  std::string Y = R"(--- !ELF
FileHeader:
  Class:   ELFCLASS64
  Data:    ELFDATA2LSB
  Type:    )" + std::string(S.Type == ET_EXEC ? "ET_EXEC" : "ET_DYN") +
                  R"(
  Machine: EM_X86_64
ProgramHeaders:
)";
  if (S.Phdr)
    Y += R"(  - Type:     PT_PHDR
    Flags:    [ PF_R ]
    Offset:   0x40
    VAddr:    )" +
         addr(0x40) +
         R"(
    FileSize: )" +
         hx(NumPhdrs * 56) +
         R"(
    MemSize:  )" +
         hx(NumPhdrs * 56) +
         R"(
    Align:    0x8
)";
  if (S.Interp)
    Y += R"(  - Type:     PT_INTERP
    Flags:    [ PF_R ]
    FirstSec: .interp
    LastSec:  .interp
    VAddr:    )" +
         addr(0x2a0) + "\n";
  Y += R"(  - Type:     PT_LOAD
    Flags:    [ PF_R ]
    Offset:   0x0
    VAddr:    )" +
       addr(0) + R"(
    FirstSec: .dynsym
    LastSec:  .hip_fatbin
    Align:    0x1000
  - Type:     PT_LOAD
    Flags:    [ PF_R, PF_W ]
    VAddr:    )" +
       addr(L.Data) + R"(
    FirstSec: .data
    LastSec:  .bss
    Align:    0x1000
  - Type:     PT_DYNAMIC
    Flags:    [ PF_R, PF_W ]
    VAddr:    )" +
       addr(L.Dynamic) + R"(
    FirstSec: .dynamic
    LastSec:  .dynamic
    Align:    0x8
Sections:
  - Name:         .dynsym
    Type:         SHT_DYNSYM
    Flags:        [ SHF_ALLOC ]
    Address:      )" +
       addr(0x200) + R"(
    Offset:       0x200
    AddressAlign: 0x8
  - Name:         .dynstr
    Type:         SHT_STRTAB
    Flags:        [ SHF_ALLOC ]
    Address:      )" +
       addr(0x260) + R"(
    Offset:       0x260
    AddressAlign: 0x1
)";
  if (S.Interp)
    Y += R"(  - Name:         .interp
    Type:         SHT_PROGBITS
    Flags:        [ SHF_ALLOC ]
    Address:      )" +
         addr(0x2a0) + R"(
    Offset:       0x2a0
    AddressAlign: 0x1
    Content:      2f6c696236342f6c642d6c696e75782d7838362d36342e736f2e3200
)";
  Y += R"(  - Name:         .rela.dyn
    Type:         )" +
       S.RelaType + R"(
    Flags:        [ SHF_ALLOC ]
    Address:      )" +
       addr(0x400) + R"(
    Offset:       0x400
    Link:         .dynsym
    AddressAlign: 0x8
)";
  if (S.RelaContent)
    Y += "    EntSize:      0x18\n    Content:      " + *S.RelaContent + "\n";
  else
    Y += "    Relocations:\n" + Rela;
  if (!Relr.empty())
    Y += R"(  - Name:         .relr.dyn
    Type:         SHT_RELR
    Flags:        [ SHF_ALLOC ]
    Address:      )" +
         addr(0x600) + R"(
    Offset:       0x600
    AddressAlign: 0x8
    Entries:
)" + Relr;
  Y += R"(  - Name:         .hip_fatbin
    Type:         SHT_PROGBITS
    Flags:        [ SHF_ALLOC ]
    Address:      )" +
       addr(L.Fatbin) + R"(
    Offset:       )" +
       hx(L.Fatbin) + R"(
    AddressAlign: 0x1000
    Content:      ")" +
       Fatbin + R"("
  - Name:         .data
    Type:         SHT_PROGBITS
    Flags:        [ SHF_ALLOC, SHF_WRITE ]
    Address:      )" +
       addr(L.Data) + R"(
    Offset:       )" +
       hx(L.Data) + R"(
    AddressAlign: 0x8
    Content:      "00000000000000000000000000000000"
  - Name:         .hipFatBinSegment
    Type:         SHT_PROGBITS
    Flags:        [ SHF_ALLOC, SHF_WRITE ]
    Address:      )" +
       addr(L.Wrappers) + R"(
    Offset:       )" +
       hx(L.Wrappers) + R"(
    AddressAlign: 0x8
    Content:      ")" +
       S.WrapperContent.value_or(Wrappers) + R"("
  - Name:         .dynamic
    Type:         SHT_DYNAMIC
    Flags:        [ SHF_ALLOC, SHF_WRITE ]
    Address:      )" +
       addr(L.Dynamic) + R"(
    Offset:       )" +
       hx(L.Dynamic) + R"(
    Link:         .dynstr
    AddressAlign: 0x8
    Entries:
)";
  if (S.FlagsPie)
    Y += "      - Tag: DT_FLAGS_1\n        Value: 0x8000000\n";
  Y += R"(      - Tag: DT_NULL
        Value: 0
  - Name:         .bss
    Type:         SHT_NOBITS
    Flags:        [ SHF_ALLOC, SHF_WRITE ]
    Address:      )" +
       addr(L.Bss) + R"(
    Offset:       )" +
       hx(L.Bss) + R"(
    AddressAlign: 0x8
    Size:         )" +
       hx(S.BssSize) + R"(
  - Name:         .comment
    Type:         SHT_PROGBITS
    Content:      "6869707000"
Symbols:
  - Name:    __hip_fatbin_wrapper
    Type:    STT_OBJECT
    Section: .hipFatBinSegment
    Value:   )" +
       addr(L.Wrappers) + R"(
    Size:    24
DynamicSymbols:
  - Name:    __hip_fatbin_abc
    Type:    STT_OBJECT
    Section: .hip_fatbin
    Binding: STB_GLOBAL
    Value:   )" +
       addr(L.Fatbin) + R"(
  - Name:    undefined_sym
    Binding: STB_GLOBAL
...
)";
  return Y;
}

Expected<std::unique_ptr<Object>> readHost(const Bytes &B) {
  ReadOptions Opts;
  Opts.AllowHost = true;
  return readObject(MemoryBufferRef(toStringRef(B), "host"), Opts);
}

Bytes write(const Object &Obj) {
  Expected<std::unique_ptr<MemoryBuffer>> Out = writeObjectToBuffer(Obj);
  EXPECT_TRUE(bool(Out)) << toString(Out.takeError());
  if (!Out)
    return {};
  StringRef S = (*Out)->getBuffer();
  return Bytes(S.bytes_begin(), S.bytes_end());
}

/// The message of an analysis of \p S, or "<success>".
std::string analyzeError(const HostSpec &S) {
  Bytes In = yamlToBytes(hostYAML(S));
  Expected<std::unique_ptr<Object>> Obj = readHost(In);
  if (!Obj)
    return "read: " + toString(Obj.takeError());
  Expected<HostBinary> HB = HostBinary::analyze(**Obj);
  if (!HB)
    return toString(HB.takeError());
  return "<success>";
}

/// A host, read and analyzed.
struct Host {
  HostSpec Spec;
  Bytes In;
  std::unique_ptr<Object> Obj;
  std::optional<HostBinary> HB;

  explicit Host(HostSpec S) : Spec(std::move(S)) {
    In = yamlToBytes(hostYAML(Spec));
    Expected<std::unique_ptr<Object>> O = readHost(In);
    if (!O) {
      ADD_FAILURE() << toString(O.takeError());
      return;
    }
    Obj = std::move(*O);
    Expected<HostBinary> H = HostBinary::analyze(*Obj);
    if (!H) {
      ADD_FAILURE() << toString(H.takeError());
      return;
    }
    HB.emplace(std::move(*H));
  }
  bool ok() const { return Obj && HB; }
  HostLayout layout() const { return HostLayout(Spec); }
};

/// Bundle I replaced by makeBundle(Seed + I, bigger) for every I.
std::vector<std::optional<Bytes>> newBundles(size_t N, uint8_t Seed = 0x80) {
  std::vector<std::optional<Bytes>> New;
  for (size_t I = 0; I < N; ++I)
    New.push_back(makeBundle(uint8_t(Seed + I), 0x1200 + 0x10 * I));
  return New;
}

/// What an output must be, checked with LLVM's ELF reader: the new PT_LOAD
/// last, read-only, above everything, starting with the program header
/// table (and PT_PHDR) at an address congruent to the end of the input's
/// loaded file bytes, where GNU strip puts it again; every input PT_LOAD as
/// it was; e_phnum one more.
void checkSegments(const Bytes &In, const Bytes &Out, bool Executable) {
  Expected<object::ELFFile<ELFT>> IF =
      object::ELFFile<ELFT>::create(toStringRef(In));
  Expected<object::ELFFile<ELFT>> OF =
      object::ELFFile<ELFT>::create(toStringRef(Out));
  ASSERT_TRUE(bool(IF)) << toString(IF.takeError());
  ASSERT_TRUE(bool(OF)) << toString(OF.takeError());
  auto IP = IF->program_headers();
  auto OP = OF->program_headers();
  ASSERT_TRUE(bool(IP)) << toString(IP.takeError());
  ASSERT_TRUE(bool(OP)) << toString(OP.takeError());
  ASSERT_EQ(OP->size(), IP->size() + 1);
  const auto &New = OP->back();
  EXPECT_EQ(New.p_type, PT_LOAD);
  EXPECT_EQ(New.p_flags, unsigned(PF_R));
  EXPECT_EQ(New.p_offset % New.p_align, New.p_vaddr % New.p_align);
  EXPECT_EQ(New.p_filesz, New.p_memsz);
  EXPECT_LE(New.p_offset + New.p_filesz, Out.size());
  const object::ELFFile<ELFT>::Elf_Phdr *FirstLoad = nullptr;
  for (size_t I = 0; I < IP->size(); ++I) {
    const auto &A = (*IP)[I], &B = (*OP)[I];
    if (A.p_type == PT_LOAD) {
      if (!FirstLoad)
        FirstLoad = &B;
      EXPECT_GE(New.p_vaddr, A.p_vaddr + A.p_memsz);
    }
    if (A.p_type == PT_PHDR) {
      // Moved with the table, inside the new segment.
      EXPECT_EQ(B.p_offset, OF->getHeader().e_phoff);
      EXPECT_EQ(B.p_filesz, OP->size() * sizeof(Elf64_Phdr));
      EXPECT_EQ(B.p_memsz, B.p_filesz);
      EXPECT_GE(B.p_offset, New.p_offset);
      EXPECT_LE(B.p_offset + B.p_filesz, New.p_offset + New.p_filesz);
      EXPECT_EQ(B.p_vaddr - B.p_offset, New.p_vaddr - New.p_offset);
      EXPECT_EQ(B.p_paddr, B.p_vaddr);
      continue;
    }
    EXPECT_EQ(memcmp(&A, &B, sizeof(A)), 0) << "program header " << I;
  }
  ASSERT_TRUE(FirstLoad);
  uint64_t PhOff = OF->getHeader().e_phoff;
  EXPECT_EQ(PhOff, uint64_t(New.p_offset));
  uint64_t LoadedEnd = 0;
  for (const auto &A : *IP)
    if (A.p_type == PT_LOAD && A.p_filesz)
      LoadedEnd = std::max<uint64_t>(LoadedEnd, A.p_offset + A.p_filesz);
  EXPECT_EQ(New.p_vaddr % New.p_align, alignDown(LoadedEnd, 8) % New.p_align);
  EXPECT_LE(PhOff + OP->size() * sizeof(Elf64_Phdr),
            New.p_offset + New.p_filesz);
  if (Executable)
    EXPECT_EQ(New.p_vaddr - New.p_offset,
              FirstLoad->p_vaddr - FirstLoad->p_offset);
  // The old table is still there, unchanged (it is loaded).
  uint64_t OldOff = IF->getHeader().e_phoff;
  EXPECT_EQ(memcmp(In.data() + OldOff, Out.data() + OldOff,
                   IP->size() * sizeof(Elf64_Phdr)),
            0);
}

/// Expects every byte a PT_LOAD of the input maps to be the same in \p Out
/// except in \p Changed ([offset, offset + size) ranges) and the ELF header's
/// table fields.
void expectLoadedBytesKept(
    const Object &Obj, const Bytes &In, const Bytes &Out,
    std::vector<std::pair<uint64_t, uint64_t>> Changed = {}) {
  auto Allowed = [&](uint64_t O) {
    if ((O >= 32 && O < 48) || (O >= 56 && O < 58) || (O >= 60 && O < 62))
      return true;
    for (auto [Off, Size] : Changed)
      if (O >= Off && O < Off + Size)
        return true;
    return false;
  };
  for (const auto &P : Obj.segments()) {
    if (P->IsNew || P->Type != PT_LOAD)
      continue;
    ASSERT_LE(P->Offset + P->FileSize, Out.size());
    for (uint64_t O = P->Offset; O < P->Offset + P->FileSize; ++O)
      if (!Allowed(O))
        ASSERT_EQ(Out[O], In[O]) << "loaded byte at offset " << hx(O);
  }
}

/// The wrappers and bundles of \p Out, analyzed anew.
struct Reanalyzed {
  std::unique_ptr<Object> Obj;
  std::optional<HostBinary> HB;
};
Reanalyzed reanalyze(const Bytes &Out) {
  Reanalyzed R;
  Expected<std::unique_ptr<Object>> O = readHost(Out);
  if (!O) {
    ADD_FAILURE() << toString(O.takeError());
    return R;
  }
  R.Obj = std::move(*O);
  Expected<HostBinary> H = HostBinary::analyze(*R.Obj);
  if (!H) {
    ADD_FAILURE() << toString(H.takeError());
    return R;
  }
  R.HB.emplace(std::move(*H));
  return R;
}

//===----------------------------------------------------------------------===//
// analyze
//===----------------------------------------------------------------------===//

HostSpec oneWrapper(How H, uint16_t Type = ET_DYN) {
  HostSpec S;
  S.Type = Type;
  S.Base = Type == ET_EXEC ? 0x400000 : 0;
  S.Bundles = {makeBundle(1)};
  S.Wrappers = {{H, 0}};
  return S;
}

TEST(HostBinaryAnalyze, EachPointerKind) {
  struct Case {
    How H;
    uint16_t Type;
    PointerKind Kind;
    bool InPlace;
  } Cases[] = {
      {How::Rela, ET_DYN, PointerKind::Relative, false},
      {How::RelaInPlace, ET_DYN, PointerKind::Relative, true},
      {How::Relr, ET_DYN, PointerKind::Relr, true},
      {How::RelrBitmap, ET_DYN, PointerKind::Relr, true},
      {How::Absolute, ET_EXEC, PointerKind::Absolute, true},
      {How::Symbol, ET_DYN, PointerKind::Symbol, false},
      {How::SymbolInPlace, ET_DYN, PointerKind::Symbol, true},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(static_cast<int>(C.H));
    Host H(oneWrapper(C.H, C.Type));
    ASSERT_TRUE(H.ok());
    HostLayout L = H.layout();
    ASSERT_EQ(H.HB->wrappers().size(), 1u);
    ASSERT_EQ(H.HB->bundles().size(), 1u);
    const HostWrapper &W = H.HB->wrappers()[0];
    EXPECT_EQ(W.Addr, L.wrapperAddr(H.Spec, 0));
    EXPECT_EQ(W.Kind, C.Kind);
    EXPECT_EQ(W.InPlace, C.InPlace);
    EXPECT_EQ(W.BundleAddr, L.bundleAddr(H.Spec, 0));
    EXPECT_EQ(W.Bundle, 0u);
    if (C.Kind == PointerKind::Symbol) {
      EXPECT_EQ(W.SymbolName, "__hip_fatbin_abc");
      EXPECT_EQ(W.SymbolValue, H.Spec.Base + L.Fatbin);
    }
    const HostBundle &B = H.HB->bundles()[0];
    EXPECT_EQ(B.Addr, W.BundleAddr);
    EXPECT_FALSE(B.Compressed);
    EXPECT_EQ(B.Bytes, ArrayRef<uint8_t>(H.Spec.Bundles[0]));
  }
}

TEST(HostBinaryAnalyze, NoWrapperSectionMeansNoBundles) {
  HostSpec S = oneWrapper(How::Rela);
  S.Wrappers.clear();
  Host H(S);
  ASSERT_TRUE(H.ok());
  EXPECT_TRUE(H.HB->wrappers().empty());
  EXPECT_TRUE(H.HB->bundles().empty());
  // And replacing nothing writes the input back.
  ASSERT_FALSE(bool(H.HB->replaceBundles(*H.Obj, {})));
  EXPECT_EQ(write(*H.Obj), H.In);
}

TEST(HostBinaryAnalyze, SharedAndSeparateBundles) {
  // -fgpu-rdc with lld: a RELATIVE and an R_X86_64_64 to one bundle; then
  // a non-RDC multi-TU layout: three bundles back to back.
  HostSpec S;
  S.Bundles = {makeBundle(1)};
  S.Wrappers = {{How::Rela, 0}, {How::Symbol, 0}};
  Host Rdc(S);
  ASSERT_TRUE(Rdc.ok());
  ASSERT_EQ(Rdc.HB->wrappers().size(), 2u);
  ASSERT_EQ(Rdc.HB->bundles().size(), 1u);
  EXPECT_EQ(Rdc.HB->wrappers()[1].Bundle, 0u);

  S.Bundles = {makeBundle(1), makeBundle(2, 0x2100), makeBundle(3)};
  S.Wrappers = {{How::Rela, 0}, {How::Rela, 1}, {How::Rela, 2}};
  Host Multi(S);
  ASSERT_TRUE(Multi.ok());
  HostLayout L = Multi.layout();
  ASSERT_EQ(Multi.HB->bundles().size(), 3u);
  for (size_t I = 0; I < 3; ++I) {
    EXPECT_EQ(Multi.HB->wrappers()[I].Bundle, I);
    EXPECT_EQ(Multi.HB->bundles()[I].Addr, L.bundleAddr(S, I));
    EXPECT_EQ(Multi.HB->bundles()[I].Bytes, ArrayRef<uint8_t>(S.Bundles[I]));
  }
  // The caller is told of each bundle once, in order, when analyze is done
  // reading it (a wrapper to a bundle seen before adds nothing).
  S.Wrappers = {{How::Rela, 0}, {How::Rela, 1}, {How::Rela, 0}, {How::Rela, 2}};
  Host Told(S);
  ASSERT_TRUE(Told.ok());
  std::vector<ArrayRef<uint8_t>> Read;
  Expected<HostBinary> Again = HostBinary::analyze(
      *Told.Obj, [&](ArrayRef<uint8_t> B) { Read.push_back(B); });
  ASSERT_TRUE(bool(Again)) << toString(Again.takeError());
  ASSERT_EQ(Read.size(), 3u);
  for (size_t I = 0; I < 3; ++I) {
    EXPECT_EQ(Read[I].data(), Again->bundles()[I].Bytes.data());
    EXPECT_EQ(Read[I].size(), Again->bundles()[I].Bytes.size());
  }
}

TEST(HostBinaryAnalyze, SizedAsHipSizesThem) {
  // librocrand: .hip_fatbin one zero byte longer than the bundle.
  HostSpec S = oneWrapper(How::RelaInPlace);
  S.FatbinTrailing = 1;
  Host H(S);
  ASSERT_TRUE(H.ok());
  EXPECT_EQ(H.HB->bundles()[0].Bytes.size(), S.Bundles[0].size());

  // CCOB v2 and v3: the total-size field.
  for (uint16_t V : {2, 3}) {
    Expected<Bytes> C =
        compressBundle(makeBundle(5), V, CompressionMethod::Zlib);
    ASSERT_TRUE(bool(C)) << toString(C.takeError());
    HostSpec CS = oneWrapper(How::Rela);
    CS.Bundles = {*C};
    CS.FatbinTrailing = 0x20;
    Host CH(CS);
    ASSERT_TRUE(CH.ok());
    EXPECT_TRUE(CH.HB->bundles()[0].Compressed);
    EXPECT_EQ(CH.HB->bundles()[0].Bytes, ArrayRef<uint8_t>(*C));
  }
}

TEST(HostBinaryAnalyze, ExecutablesAndLibraries) {
  // Only PIC files need a relocation.
  EXPECT_EQ(analyzeError(oneWrapper(How::Absolute, ET_DYN)),
            "wrapper at 0x3010: bundle pointer at 0x3018 has no dynamic "
            "relocation, but the file is position-independent (ET_DYN)");
  EXPECT_EQ(analyzeError(oneWrapper(How::Rela, ET_EXEC)), "<success>");
}

TEST(HostBinaryAnalyze, BadHeaders) {
  Host H(oneWrapper(How::Rela));
  ASSERT_TRUE(H.ok());
  auto ErrorWith = [&](auto Change) {
    Expected<std::unique_ptr<Object>> O = readHost(H.In);
    EXPECT_TRUE(bool(O));
    if (!O)
      return toString(O.takeError());
    Change((*O)->Header);
    Expected<HostBinary> HB = HostBinary::analyze(**O);
    return HB ? std::string("<success>") : toString(HB.takeError());
  };
  EXPECT_EQ(ErrorWith([](FileHeader &F) { F.Machine = EM_AMDGPU; }),
            "this is an AMDGPU code object, not a host binary (e_machine "
            "EM_AMDGPU)");
  EXPECT_EQ(ErrorWith([](FileHeader &F) { F.Machine = EM_AARCH64; }),
            "host binary e_machine is 183, not EM_X86_64 (62)");
  // The test host has a .hip_fatbin section: the message says so.
  EXPECT_EQ(ErrorWith([](FileHeader &F) { F.Type = ET_REL; }),
            "relocatable object with a '.hip_fatbin' section: link the "
            "program or library first (its wrappers are only resolved then)");
  EXPECT_EQ(ErrorWith([](FileHeader &F) { F.Type = ET_CORE; }),
            "host binary e_type is 4, not ET_EXEC or ET_DYN");
  EXPECT_EQ(ErrorWith([](FileHeader &F) { F.Ident[EI_CLASS] = ELFCLASS32; }),
            "host binary is not ELF64 little-endian");
  EXPECT_EQ(ErrorWith([](FileHeader &F) { F.Ident[EI_DATA] = ELFDATA2MSB; }),
            "host binary is not ELF64 little-endian");

  // What the reader says before analyze() is reached.
  Bytes B = H.In;
  B[EI_CLASS] = ELFCLASS32;
  EXPECT_EQ(toString(readHost(B).takeError()),
            "32-bit ELF is not supported (a host binary must be ELF64 "
            "little-endian x86-64)");
  B = H.In;
  support::endian::write16le(B.data() + 18, EM_AARCH64);
  EXPECT_EQ(toString(readHost(B).takeError()),
            "e_machine is 183, neither EM_X86_64 (62) nor EM_AMDGPU (224)");
  // Without AllowHost, the code-object reader's message is unchanged.
  EXPECT_EQ(
      toString(readObject(MemoryBufferRef(toStringRef(H.In), "h")).takeError()),
      "e_machine is 62, not EM_AMDGPU (224); for a host binary, extract "
      "its device code objects with 'llvm-objdump --offloading'");
}

TEST(HostBinaryAnalyze, BadWrappers) {
  HostSpec S = oneWrapper(How::Rela);
  S.Wrappers[0].Magic = 0x46504948;
  EXPECT_EQ(analyzeError(S), "wrapper at 0x3010: magic is 0x46504948, "
                             "expected 0x48495046 ('HIPF')");
  S = oneWrapper(How::Rela);
  S.Wrappers[0].Version = 2;
  EXPECT_EQ(analyzeError(S), "wrapper at 0x3010: version is 2, expected 1");

  S = oneWrapper(How::Rela);
  S.WrapperContent = "46504948010000000000000000000000000000000000000000";
  EXPECT_EQ(analyzeError(S), "section '.hipFatBinSegment' size 0x19 is not a "
                             "multiple of 24 (the size of a wrapper)");
}

TEST(HostBinaryAnalyze, BadPointers) {
  // Into .bss (loaded, not file-backed).
  HostSpec S = oneWrapper(How::Rela);
  HostLayout L(S);
  S.Wrappers[0].Skew = int64_t(L.Bss - L.Fatbin);
  EXPECT_EQ(analyzeError(S), "wrapper at 0x3010: bundle pointer 0x3400 is "
                             "outside every file-backed PT_LOAD");
  // Past everything.
  S.Wrappers[0].Skew = 0x100000;
  EXPECT_EQ(analyzeError(S), "wrapper at 0x3010: bundle pointer 0x101000 is "
                             "outside every file-backed PT_LOAD");
  // In a gap between sections of a PT_LOAD.
  S.Wrappers[0].Skew = -0x800;
  EXPECT_EQ(analyzeError(S), "wrapper at 0x3010: bundle at 0x800 is not "
                             "inside a section with file contents");
  // Into the bundle, not at its start.
  S.Wrappers[0].Skew = 16;
  EXPECT_EQ(analyzeError(S),
            "wrapper at 0x3010: bundle at 0x1010 (section '.hip_fatbin' + "
            "0x10): no offload bundle there (neither "
            "'__CLANG_OFFLOAD_BUNDLE__' nor 'CCOB')");
}

TEST(HostBinaryAnalyze, BadBundles) {
  // A payload past the end of the section.
  HostSpec S = oneWrapper(How::Rela);
  Bytes &B = S.Bundles[0];
  // The second entry's size field: magic, count, host entry (24 + 30), then
  // the device entry's offset.
  support::endian::write64le(B.data() + 32 + 24 + 30 + 8, 0x100000);
  EXPECT_EQ(analyzeError(S),
            "wrapper at 0x3010: bundle at 0x1000 (section '.hip_fatbin' + "
            "0x0): entry 1 ('hipv4-amdgcn-amd-amdhsa--gfx90a'): payload at "
            "offset 0x1000 of size 0x100000 extends past end of bundle (size "
            "0x1180)");

  // CCOB (a smaller section: the wrappers are at 0x2010): version 1 has
  // no total size; a total past the section.
  Expected<Bytes> C = compressBundle(makeBundle(5), 2, CompressionMethod::Zlib);
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  S = oneWrapper(How::Rela);
  S.Bundles = {*C};
  S.Bundles[0][4] = 1;
  EXPECT_EQ(analyzeError(S),
            "wrapper at 0x2010: bundle at 0x1000 (section '.hip_fatbin' + "
            "0x0): compressed bundle version 1 has no total size, so HIP "
            "cannot size it");
  S.Bundles = {*C};
  support::endian::write32le(S.Bundles[0].data() + 8, 0x10000);
  EXPECT_EQ(analyzeError(S),
            "wrapper at 0x2010: bundle at 0x1000 (section '.hip_fatbin' + "
            "0x0): compressed bundle total size 0x10000 is larger than the " +
                hx(C->size()) + " bytes left in its section");
}

TEST(HostBinaryAnalyze, OverlappingBundles) {
  // A bundle whose payload is another bundle, each with its wrapper.
  Bytes Inner = makeBundle(7);
  OffloadBundleInput In[] = {{"host-x86_64-unknown-linux-gnu-", {}},
                             {"hipv4-amdgcn-amd-amdhsa--gfx90a", Inner}};
  Expected<Bytes> Outer = buildOffloadBundle(In, 0x1000);
  ASSERT_TRUE(bool(Outer));
  HostSpec S;
  S.Bundles = {*Outer};
  S.Wrappers = {{How::Rela, 0}, {How::Rela, 0, 0x1000}};
  EXPECT_EQ(analyzeError(S), "bundles at 0x1000 (size " +
                                 hx(0x1000 + Inner.size()) +
                                 ") and 0x2000 overlap");
}

TEST(HostBinaryAnalyze, BadRelocations) {
  HostSpec S = oneWrapper(How::Rela);
  // Relocated twice.
  S.ExtraRelr = {0x3018};
  EXPECT_EQ(analyzeError(S), "wrapper at 0x3010: bundle pointer at 0x3018 is "
                             "relocated twice (in '.rela.dyn' and "
                             "'.relr.dyn')");
  // Another field of the record relocated.
  S.ExtraRelr = {0x3020};
  EXPECT_EQ(analyzeError(S),
            "wrapper at 0x3010: a dynamic relocation in '.relr.dyn' changes "
            "0x3020 (only the bundle pointer at 0x3018 may be relocated)");
  S.ExtraRelr = {0x300c};
  EXPECT_EQ(analyzeError(S),
            "wrapper at 0x3010: a dynamic relocation in '.relr.dyn' changes "
            "0x300c (only the bundle pointer at 0x3018 may be relocated)");
  // A RELR bitmap with nothing before it.
  S.ExtraRelr = {0x3};
  EXPECT_EQ(analyzeError(S), "section '.relr.dyn' entry at offset 0x0 is a "
                             "bitmap with no address before it");

  // Unsupported relocation types, symbols.
  S = oneWrapper(How::Absolute);
  S.ExtraRela = "      - Offset: 0x3018\n        Symbol: __hip_fatbin_abc\n"
                "        Type: R_X86_64_GLOB_DAT\n";
  EXPECT_EQ(analyzeError(S),
            "wrapper at 0x3010: bundle pointer at 0x3018 is relocated by "
            "R_X86_64_GLOB_DAT (only R_X86_64_RELATIVE and R_X86_64_64 are "
            "supported)");
  S.ExtraRela = "      - Offset: 0x3018\n        Symbol: undefined_sym\n"
                "        Type: R_X86_64_64\n";
  EXPECT_EQ(analyzeError(S),
            "wrapper at 0x3010: its R_X86_64_64 relocation in '.rela.dyn' is "
            "against symbol 'undefined_sym', which is not defined in a "
            "section");
  S.ExtraRela = "      - Offset: 0x3018\n        Type: R_X86_64_64\n";
  EXPECT_EQ(analyzeError(S), "wrapper at 0x3010: its R_X86_64_64 relocation "
                             "in '.rela.dyn' has no symbol");
  S.ExtraRela = "      - Offset: 0x3018\n        Symbol: 9\n"
                "        Type: R_X86_64_64\n";
  EXPECT_EQ(analyzeError(S),
            "wrapper at 0x3010: its R_X86_64_64 relocation in '.rela.dyn' "
            "names symbol 9, but '.dynsym' has 3 symbols");

  // Malformed tables.
  S = oneWrapper(How::Relr);
  S.RelaContent = "00000000000000000000000000000000000000000000000000";
  EXPECT_EQ(analyzeError(S),
            "section '.rela.dyn' size 0x19 is not a multiple of 0x18");
  S.RelaType = "SHT_REL";
  S.RelaContent = "1820000000000000080000000000000000";
  EXPECT_EQ(analyzeError(S),
            "section '.rela.dyn' has sh_entsize 0x18, expected 0x10");
}

//===----------------------------------------------------------------------===//
// replaceBundles
//===----------------------------------------------------------------------===//

TEST(HostBinaryReplace, NothingSetChangesNothing) {
  for (How K : {How::Rela, How::RelaInPlace, How::Relr, How::Symbol}) {
    Host H(oneWrapper(K));
    ASSERT_TRUE(H.ok());
    // No slots, unset slots, the same bytes.
    ASSERT_FALSE(bool(H.HB->replaceBundles(*H.Obj, {})));
    std::vector<std::optional<Bytes>> Unset(1);
    ASSERT_FALSE(bool(H.HB->replaceBundles(*H.Obj, Unset)));
    std::vector<std::optional<Bytes>> Same = {H.Spec.Bundles[0]};
    HostRewriteOptions Zero;
    Zero.ZeroOldBundles = true;
    ASSERT_FALSE(bool(H.HB->replaceBundles(*H.Obj, Same, Zero)));
    EXPECT_FALSE(H.Obj->needsNewLayout());
    EXPECT_EQ(write(*H.Obj), H.In);
  }
}

/// Replaces every bundle of \p S and checks everything the output must be.
/// Returns the output.
Bytes replaceAndCheck(const HostSpec &S, bool Executable,
                      HostRewriteOptions Opts = {}) {
  Host H(S);
  EXPECT_TRUE(H.ok());
  if (!H.ok())
    return {};
  HostLayout L = H.layout();
  std::vector<std::optional<Bytes>> New = newBundles(S.Bundles.size());
  Error E = H.HB->replaceBundles(*H.Obj, New, Opts);
  EXPECT_FALSE(bool(E)) << toString(std::move(E));
  Bytes Out = write(*H.Obj);
  checkSegments(H.In, Out, Executable);

  // The only loaded bytes that changed: pointers in place, addends, and
  // the old bundles when zeroed.
  std::vector<std::pair<uint64_t, uint64_t>> Changed;
  for (size_t I = 0; I < S.Wrappers.size(); ++I) {
    Changed.push_back({L.Wrappers + 24 * I + 8, 8});
  }
  Changed.push_back({0x400, 0x200}); // .rela.dyn addends (checked below)
  if (Opts.ZeroOldBundles)
    Changed.push_back({L.Fatbin, L.FatbinSize});
  expectLoadedBytesKept(*H.Obj, H.In, Out, Changed);

  // Read back: each wrapper points at its new bundle, sharing kept.
  Reanalyzed R = reanalyze(Out);
  EXPECT_TRUE(R.HB);
  if (!R.HB)
    return Out;
  EXPECT_EQ(R.HB->bundles().size(), H.HB->bundles().size());
  for (size_t I = 0; I < S.Wrappers.size(); ++I) {
    const HostWrapper &Old = H.HB->wrappers()[I];
    const HostWrapper &W = R.HB->wrappers()[I];
    EXPECT_EQ(W.Addr, Old.Addr);
    EXPECT_EQ(W.Kind, Old.Kind);
    EXPECT_EQ(W.InPlace, Old.InPlace);
    EXPECT_EQ(W.Bundle, Old.Bundle);
    EXPECT_EQ(W.SymbolValue, Old.SymbolValue);
    EXPECT_EQ(R.HB->bundles()[W.Bundle].Bytes,
              ArrayRef<uint8_t>(*New[Old.Bundle]));
    // In place: the value where the linker wrote one, 0 elsewhere.
    uint64_t Stored = read64(Out, L.Wrappers + 24 * I + 8);
    EXPECT_EQ(Stored, W.InPlace ? W.BundleAddr : 0);
  }
  // The new section, and the old one renamed; .dynsym untouched.
  const Section *NewSec = R.Obj->sections().back().get();
  EXPECT_EQ(NewSec->Name, ".hip_fatbin");
  EXPECT_EQ(NewSec->Flags, uint64_t(SHF_ALLOC));
  EXPECT_EQ(NewSec->AddrAlign, 0x1000u);
  // After the program header table at the segment's start.
  EXPECT_EQ(NewSec->Addr,
            alignTo(R.Obj->segments().back()->VAddr +
                        R.Obj->segments().size() * sizeof(Elf64_Phdr),
                    0x1000));
  const Section *OldSec = R.Obj->sectionForAddress(S.Base + L.Fatbin);
  EXPECT_TRUE(OldSec && OldSec->Name == ".hotswap.old_fatbin");
  if (OldSec && !Opts.ZeroOldBundles)
    for (size_t I = 0; I < S.Bundles.size(); ++I)
      EXPECT_EQ(
          OldSec->contents().slice(L.BundleOffsets[I], S.Bundles[I].size()),
          ArrayRef<uint8_t>(S.Bundles[I]));
  // Idempotent: the output analyzed and given nothing is written back.
  EXPECT_FALSE(bool(R.HB->replaceBundles(*R.Obj, {})));
  EXPECT_EQ(write(*R.Obj), Out);
  return Out;
}

TEST(HostBinaryReplace, RelativeLld) {
  HostSpec S = oneWrapper(How::Rela);
  Bytes Out = replaceAndCheck(S, false);
  ASSERT_FALSE(Out.empty());
  // The addend is the new address; the unrelated relocation is as it was.
  Reanalyzed R = reanalyze(Out);
  ASSERT_TRUE(R.HB);
  uint64_t NewAddr = R.HB->bundles()[0].Addr;
  EXPECT_EQ(NewAddr % 0x1000, 0u);
  EXPECT_EQ(read64(Out, 0x400 + 16), 0x1234u);
  EXPECT_EQ(read64(Out, 0x418 + 16), NewAddr);
  // A library with PT_PHDR: on the first page above .bss and the input's
  // end, with the first PT_LOAD's p_vaddr - p_offset (0), as patchelf
  // expects of PT_PHDR.
  Host H(S);
  ASSERT_TRUE(H.ok());
  const Segment &Seg = *R.Obj->segments().back();
  HostLayout L(S);
  EXPECT_EQ(Seg.VAddr, Seg.Offset);
  EXPECT_EQ(
      alignDown(Seg.VAddr, 0x1000),
      alignTo(std::max<uint64_t>(L.Bss + S.BssSize, H.In.size()), 0x1000));
  // Without PT_PHDR (GNU ld): in the first page after the input.
  S.Phdr = false;
  Bytes Out2 = replaceAndCheck(S, false);
  Reanalyzed R2 = reanalyze(Out2);
  ASSERT_TRUE(R2.HB);
  Host H2(S);
  ASSERT_TRUE(H2.ok());
  const Segment &Seg2 = *R2.Obj->segments().back();
  EXPECT_EQ(alignDown(Seg2.Offset, 0x1000), alignTo(H2.In.size(), 0x1000));
  EXPECT_EQ(alignDown(Seg2.VAddr, 0x1000), alignTo(L.Bss + S.BssSize, 0x1000));
}

TEST(HostBinaryReplace, RelativeGnuLd) {
  replaceAndCheck(oneWrapper(How::RelaInPlace), false);
}

TEST(HostBinaryReplace, Relr) {
  replaceAndCheck(oneWrapper(How::Relr), false);
  Bytes Out = replaceAndCheck(oneWrapper(How::RelrBitmap), false);
  // .relr.dyn itself never changes.
  Host H(oneWrapper(How::RelrBitmap));
  ASSERT_TRUE(H.ok());
  EXPECT_EQ(ArrayRef<uint8_t>(Out).slice(0x600, 0x10),
            ArrayRef<uint8_t>(H.In).slice(0x600, 0x10));
}

TEST(HostBinaryReplace, AbsoluteInExecutable) {
  HostSpec S = oneWrapper(How::Absolute, ET_EXEC);
  Bytes Out = replaceAndCheck(S, true);
  Reanalyzed R = reanalyze(Out);
  ASSERT_TRUE(R.HB);
  // p_vaddr - p_offset of the first PT_LOAD (0x400000): the file has a gap
  // as large as the .bss and page gaps.
  const Segment &Seg = *R.Obj->segments().back();
  EXPECT_EQ(Seg.VAddr - Seg.Offset, 0x400000u);
  HostLayout L(S);
  EXPECT_EQ(alignDown(Seg.VAddr, 0x1000),
            alignTo(0x400000 + L.Bss + S.BssSize, 0x1000));
}

TEST(HostBinaryReplace, PositionIndependentExecutables) {
  // PT_INTERP, or DF_1_PIE without it (static PIE): executables.
  HostSpec S = oneWrapper(How::Rela);
  S.Interp = true;
  replaceAndCheck(S, true);
  S = oneWrapper(How::Rela);
  S.FlagsPie = true;
  replaceAndCheck(S, true);
  // A huge .bss: the file of an executable, or of a library with PT_PHDR,
  // grows by it; that of a library without PT_PHDR does not.
  S = oneWrapper(How::Rela);
  S.BssSize = 0x100000;
  Bytes Lib = replaceAndCheck(S, false);
  S.Phdr = false;
  Bytes LibNoPhdr = replaceAndCheck(S, false);
  S.Phdr = true;
  S.Interp = true;
  Bytes Exe = replaceAndCheck(S, true);
  EXPECT_GT(Lib.size(), 0x100000u);
  EXPECT_LT(LibNoPhdr.size(), 0x10000u);
  EXPECT_GT(Exe.size(), 0x100000u);
}

TEST(HostBinaryReplace, SymbolAddendRelativeToTheSymbol) {
  HostSpec S = oneWrapper(How::Symbol);
  Bytes Out = replaceAndCheck(S, false);
  Reanalyzed R = reanalyze(Out);
  ASSERT_TRUE(R.HB);
  HostLayout L(S);
  uint64_t NewAddr = R.HB->bundles()[0].Addr;
  // Entry 1 of .rela.dyn; .dynsym unchanged.
  EXPECT_EQ(read64(Out, 0x418 + 16), NewAddr - (S.Base + L.Fatbin));
  Host H(S);
  ASSERT_TRUE(H.ok());
  EXPECT_EQ(ArrayRef<uint8_t>(Out).slice(0x200, 0x48),
            ArrayRef<uint8_t>(H.In).slice(0x200, 0x48));
  replaceAndCheck(oneWrapper(How::SymbolInPlace), false);
}

TEST(HostBinaryReplace, SharedBundleStaysShared) {
  HostSpec S;
  S.Bundles = {makeBundle(1)};
  S.Wrappers = {{How::Rela, 0}, {How::Symbol, 0}, {How::SymbolInPlace, 0}};
  Bytes Out = replaceAndCheck(S, false);
  Reanalyzed R = reanalyze(Out);
  ASSERT_TRUE(R.HB);
  ASSERT_EQ(R.HB->bundles().size(), 1u);
  // One copy in the new section.
  const Section *NewSec = R.Obj->sections().back().get();
  EXPECT_EQ(NewSec->size(), R.HB->bundles()[0].Bytes.size());
}

TEST(HostBinaryReplace, SeveralBundles) {
  HostSpec S;
  S.Bundles = {makeBundle(1), makeBundle(2, 0x2100), makeBundle(3)};
  S.Wrappers = {{How::Rela, 0}, {How::RelaInPlace, 1}, {How::Rela, 2}};
  Bytes Out = replaceAndCheck(S, false);
  Reanalyzed R = reanalyze(Out);
  ASSERT_TRUE(R.HB);
  // Back to back in bundle order, each 4096-aligned.
  uint64_t Prev = 0;
  for (const HostBundle &B : R.HB->bundles()) {
    EXPECT_EQ(B.Addr % 0x1000, 0u);
    EXPECT_GT(B.Addr, Prev);
    Prev = B.Addr;
  }
}

TEST(HostBinaryReplace, SomeBundlesOnly) {
  HostSpec S;
  S.Bundles = {makeBundle(1), makeBundle(2), makeBundle(3)};
  S.Wrappers = {{How::Rela, 0}, {How::Rela, 1}, {How::Rela, 2}};
  Host H(S);
  ASSERT_TRUE(H.ok());
  HostLayout L = H.layout();
  std::vector<std::optional<Bytes>> New(3);
  New[1] = makeBundle(9, 0x3000);
  HostRewriteOptions Zero;
  Zero.ZeroOldBundles = true;
  ASSERT_FALSE(bool(H.HB->replaceBundles(*H.Obj, New, Zero)));
  Bytes Out = write(*H.Obj);
  checkSegments(H.In, Out, false);
  Reanalyzed R = reanalyze(Out);
  ASSERT_TRUE(R.HB);
  EXPECT_EQ(R.HB->bundles()[0].Addr, L.bundleAddr(S, 0));
  EXPECT_EQ(R.HB->bundles()[2].Addr, L.bundleAddr(S, 2));
  EXPECT_EQ(R.HB->bundles()[1].Bytes, ArrayRef<uint8_t>(*New[1]));
  // The old section still holds live bundles: it keeps its name; only the
  // replaced bundle is zeroed.
  const Section *Old = R.Obj->sectionForAddress(L.bundleAddr(S, 0));
  ASSERT_TRUE(Old);
  EXPECT_EQ(Old->Name, ".hip_fatbin");
  EXPECT_EQ(R.Obj->sections().back()->Name, ".hip_fatbin");
  EXPECT_EQ(Old->contents().slice(L.BundleOffsets[0], S.Bundles[0].size()),
            ArrayRef<uint8_t>(S.Bundles[0]));
  EXPECT_EQ(Old->contents().slice(L.BundleOffsets[2], S.Bundles[2].size()),
            ArrayRef<uint8_t>(S.Bundles[2]));
  ArrayRef<uint8_t> Zeroed =
      Old->contents().slice(L.BundleOffsets[1], S.Bundles[1].size());
  EXPECT_TRUE(llvm::all_of(Zeroed, [](uint8_t B) { return B == 0; }));
}

TEST(HostBinaryReplace, ZeroOldBundles) {
  HostSpec S = oneWrapper(How::RelaInPlace);
  S.FatbinTrailing = 1;
  HostRewriteOptions Zero;
  Zero.ZeroOldBundles = true;
  Bytes Out = replaceAndCheck(S, false, Zero);
  HostLayout L(S);
  ArrayRef<uint8_t> Old =
      ArrayRef<uint8_t>(Out).slice(L.Fatbin, S.Bundles[0].size());
  EXPECT_TRUE(llvm::all_of(Old, [](uint8_t B) { return B == 0; }));
}

TEST(HostBinaryReplace, ZeroOldBundlesLeavesHolesToTheCaller) {
  // Bundles 0 and 1 replaced, 1 left as a hole by the caller: only 0 is
  // zeroed in the model; 1 keeps its bytes there (the pipeline takes them
  // out of its output), 2 is not replaced.
  HostSpec S;
  S.Bundles = {makeBundle(1), makeBundle(2), makeBundle(3)};
  S.Wrappers = {{How::Rela, 0}, {How::Rela, 1}, {How::Rela, 2}};
  Host H(S);
  ASSERT_TRUE(H.ok());
  HostLayout L = H.layout();
  std::vector<std::optional<Bytes>> New(3);
  New[0] = makeBundle(8, 0x3000);
  New[1] = makeBundle(9, 0x3000);
  HostRewriteOptions Zero;
  Zero.ZeroOldBundles = true;
  Zero.LeftAsHoles = {false, true, false};
  ASSERT_FALSE(bool(H.HB->replaceBundles(*H.Obj, New, Zero)));
  Bytes Out = write(*H.Obj);
  Reanalyzed R = reanalyze(Out);
  ASSERT_TRUE(R.HB);
  const Section *Old = R.Obj->sectionForAddress(L.bundleAddr(S, 0));
  ASSERT_TRUE(Old);
  EXPECT_TRUE(llvm::all_of(
      Old->contents().slice(L.BundleOffsets[0], S.Bundles[0].size()),
      [](uint8_t B) { return B == 0; }));
  EXPECT_EQ(Old->contents().slice(L.BundleOffsets[1], S.Bundles[1].size()),
            ArrayRef<uint8_t>(S.Bundles[1]));
  EXPECT_EQ(Old->contents().slice(L.BundleOffsets[2], S.Bundles[2].size()),
            ArrayRef<uint8_t>(S.Bundles[2]));
}

TEST(HostBinaryReplace, CompressedBundles) {
  Expected<Bytes> C = compressBundle(makeBundle(5), 3, CompressionMethod::Zlib);
  ASSERT_TRUE(bool(C));
  HostSpec S = oneWrapper(How::Rela);
  S.Bundles = {*C};
  Host H(S);
  ASSERT_TRUE(H.ok());
  Expected<Bytes> NewC =
      compressBundle(makeBundle(6, 0x5000), 2, CompressionMethod::Zlib);
  ASSERT_TRUE(bool(NewC));
  std::vector<std::optional<Bytes>> New = {*NewC};
  ASSERT_FALSE(bool(H.HB->replaceBundles(*H.Obj, New)));
  Bytes Out = write(*H.Obj);
  checkSegments(H.In, Out, false);
  Reanalyzed R = reanalyze(Out);
  ASSERT_TRUE(R.HB);
  EXPECT_TRUE(R.HB->bundles()[0].Compressed);
  EXPECT_EQ(R.HB->bundles()[0].Bytes, ArrayRef<uint8_t>(*NewC));
}

TEST(HostBinaryReplace, Refusals) {
  Host H(oneWrapper(How::Rela));
  ASSERT_TRUE(H.ok());
  auto ErrorOf = [&](std::vector<std::optional<Bytes>> New) {
    Error E = H.HB->replaceBundles(*H.Obj, New);
    return E ? toString(std::move(E)) : std::string("<success>");
  };
  EXPECT_EQ(ErrorOf(newBundles(2)),
            "replaceBundles was given 2 bundles for a host with 1");
  Bytes Trailing = makeBundle(3);
  Trailing.push_back(0);
  EXPECT_EQ(ErrorOf({Trailing}), "new bundle 0 has 0x1 bytes after its last "
                                 "entry (HIP sizes it as 0x1180 bytes)");
  EXPECT_EQ(ErrorOf({Bytes{1, 2, 3}}),
            "new bundle 0 is neither an offload bundle nor a compressed one");
  Expected<Bytes> C = compressBundle(makeBundle(5), 2, CompressionMethod::Zlib);
  ASSERT_TRUE(bool(C));
  (*C)[4] = 1;
  EXPECT_EQ(ErrorOf({*C}), "new bundle 0 is a compressed bundle of version "
                           "1, which has no total size (HIP cannot size it)");
  Bytes Broken = makeBundle(3);
  Broken.resize(Broken.size() - 1);
  EXPECT_EQ(ErrorOf({Broken}),
            "new bundle 0: entry 1 ('hipv4-amdgcn-amd-amdhsa--gfx90a'): "
            "payload at offset 0x1000 of size 0x180 extends past end of "
            "bundle (size 0x117f)");
  // Nothing was changed by the refusals.
  EXPECT_FALSE(H.Obj->needsNewLayout());
  EXPECT_EQ(write(*H.Obj), H.In);

  // Another object than the one analyzed.
  Expected<std::unique_ptr<Object>> Other = readHost(H.In);
  ASSERT_TRUE(bool(Other));
  Error E = H.HB->replaceBundles(**Other, newBundles(1));
  EXPECT_EQ(toString(std::move(E)),
            "replaceBundles was given an object other than the one analyzed");
}

TEST(HostBinaryReplace, NoAddressSpaceLeft) {
  // A library whose .bss reaches the top of the address space.
  HostSpec S = oneWrapper(How::Rela);
  S.BssSize = 0;
  Host H(S);
  ASSERT_TRUE(H.ok());
  HostLayout L = H.layout();
  for (const auto &Sec : H.Obj->sections())
    if (Sec->Name == ".bss")
      Sec->setNoBitsSize(UINT64_MAX - (S.Base + L.Bss) - 0x10);
  Error E = H.HB->replaceBundles(*H.Obj, newBundles(1));
  EXPECT_EQ(toString(std::move(E)),
            "no address space left for a new segment above " +
                hx(UINT64_MAX - 0x10));
  EXPECT_FALSE(H.Obj->needsNewLayout());
}

//===----------------------------------------------------------------------===//
// Damaged hosts
//===----------------------------------------------------------------------===//

/// Every byte of the headers, the tables, the relocations, the wrappers and
/// the bundle headers of a few hosts, set to 0, 0xff and flipped: reading,
/// analyzing, replacing and writing either fail with an error or give an
/// output that reads back and analyzes to the new bundles. (Under the
/// sanitizer build, also no memory error.)
TEST(HostBinaryDamage, ErrorsOrValidOutputs) {
  std::vector<HostSpec> Specs;
  {
    HostSpec S;
    S.Bundles = {makeBundle(1), makeBundle(2)};
    S.Wrappers = {{How::Rela, 0}, {How::Symbol, 1}, {How::RelrBitmap, 1}};
    Specs.push_back(S);
    S = oneWrapper(How::Absolute, ET_EXEC);
    S.Interp = true;
    Specs.push_back(S);
  }
  size_t Runs = 0, Successes = 0;
  for (const HostSpec &S : Specs) {
    Bytes In = yamlToBytes(hostYAML(S));
    HostLayout L(S);
    std::vector<std::optional<Bytes>> New = newBundles(S.Bundles.size());
    uint64_t PhOff = read64(In, 32), ShOff = read64(In, 40);
    std::vector<std::pair<uint64_t, uint64_t>> Ranges = {
        {0, PhOff + 6 * 56},                     // ELF and program headers
        {0x200, 0x48},                           // .dynsym
        {0x400, 0x78},                           // .rela.dyn
        {0x600, 0x10},                           // .relr.dyn
        {L.Fatbin, 0x60},                        // the first bundle's header
        {L.Data, 0x10 + 24 * S.Wrappers.size()}, // .data, the wrappers
        {L.Dynamic, 0x20},
        {ShOff, In.size() - ShOff}}; // section headers
    for (auto [Begin, Size] : Ranges) {
      for (uint64_t Off = Begin; Off < Begin + Size && Off < In.size(); ++Off) {
        for (uint8_t Value : {uint8_t(0), uint8_t(In[Off] ^ 0x80)}) {
          if (Value == In[Off])
            continue;
          Bytes B = In;
          B[Off] = Value;
          ++Runs;
          Expected<std::unique_ptr<Object>> Obj = readHost(B);
          if (!Obj) {
            consumeError(Obj.takeError());
            continue;
          }
          Expected<HostBinary> HB = HostBinary::analyze(**Obj);
          if (!HB) {
            consumeError(HB.takeError());
            continue;
          }
          ArrayRef<std::optional<Bytes>> Slots(New);
          if (Error E = HB->replaceBundles(
                  **Obj, Slots.take_front(HB->bundles().size()))) {
            consumeError(std::move(E));
            continue;
          }
          // An executable whose .bss grew to gigabytes gets a file as large
          // (VAddrMinusOffset): laid out, not written.
          Expected<Layout> Lay = computeLayout(**Obj);
          if (!Lay) {
            consumeError(Lay.takeError());
            continue;
          }
          if (Lay->FileSize > 0x1000000)
            continue;
          Expected<std::unique_ptr<MemoryBuffer>> Out =
              writeObjectToBuffer(**Obj);
          if (!Out) {
            consumeError(Out.takeError());
            continue;
          }
          ++Successes;
          // A successful output reads back, with the new bundles.
          StringRef O = (*Out)->getBuffer();
          Bytes OutBytes(O.bytes_begin(), O.bytes_end());
          Expected<std::unique_ptr<Object>> Back = readHost(OutBytes);
          ASSERT_TRUE(bool(Back))
              << "byte " << hx(Off) << ": " << toString(Back.takeError());
          Expected<HostBinary> HB2 = HostBinary::analyze(**Back);
          ASSERT_TRUE(bool(HB2))
              << "byte " << hx(Off) << ": " << toString(HB2.takeError());
          ASSERT_EQ(HB2->bundles().size(), HB->bundles().size());
          for (size_t I = 0; I < HB2->bundles().size(); ++I)
            ASSERT_EQ(HB2->bundles()[I].Bytes, ArrayRef<uint8_t>(*New[I]));
        }
      }
    }
  }
  // Most damage is refused, some is harmless (padding, names).
  EXPECT_GT(Runs, 1000u);
  EXPECT_GT(Successes, 0u);
}

} // namespace
