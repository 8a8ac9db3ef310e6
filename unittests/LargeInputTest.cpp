//===- unittests/LargeInputTest.cpp - What large inputs rely on -----------===//
//
// Issue 45: a Tensile object has 1.8M symbols and 14k kernels spread over
// 250 MB of code. Symbols read from a file borrow their names from its
// string table, added ones are copied into their table; the kernels
// analysis hands back the input bytes it read at each kernel entry
// (Object::releaseInput) a 2 MiB block at a time, and only bytes of the
// input; a scan of a large symbol table hands its records back behind it
// and its names at its end.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Object/Object.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/Kernels.h"

#include "llvm/Object/ELFTypes.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::unittest;

namespace {

std::unique_ptr<Object> readBytes(const std::vector<uint8_t> &B) {
  Expected<std::unique_ptr<Object>> O = readObject(MemoryBufferRef(
      StringRef(reinterpret_cast<const char *>(B.data()), B.size()), ""));
  if (!O) {
    ADD_FAILURE() << toString(O.takeError());
    return nullptr;
  }
  return std::move(*O);
}

bool inside(ArrayRef<uint8_t> Part, ArrayRef<uint8_t> Whole) {
  return Part.data() >= Whole.data() &&
         Part.data() + Part.size() <= Whole.data() + Whole.size();
}

TEST(LargeInput, SymbolNamesBorrowTheInput) {
  std::vector<uint8_t> B =
      yamlToBytes(embeddedInput("concurrency-gfx900.yaml"));
  std::unique_ptr<Object> Obj = readBytes(B);
  ASSERT_TRUE(Obj);
  ASSERT_TRUE(Obj->symtab());
  size_t Named = 0;
  for (const Symbol &S : Obj->symtab()->symbols()) {
    if (S.Name.empty())
      continue;
    ++Named;
    EXPECT_TRUE(inside(arrayRefFromStringRef(S.Name), Obj->input()))
        << S.Name.str();
    // NUL-terminated in the input, as the string table has it.
    EXPECT_EQ(S.Name.data()[S.Name.size()], '\0');
  }
  EXPECT_GT(Named, 0u);
}

TEST(LargeInput, AddedSymbolNamesAreCopied) {
  std::vector<uint8_t> B =
      yamlToBytes(embeddedInput("concurrency-gfx900.yaml"));
  std::unique_ptr<Object> Obj = readBytes(B);
  ASSERT_TRUE(Obj);
  SymbolTable *T = Obj->symtab();
  ASSERT_TRUE(T);
  const size_t Before = T->size();
  {
    std::string Name = "transient.stub";
    Symbol S;
    S.Name = Name;
    S.Binding = ELF::STB_GLOBAL;
    S.Type = ELF::STT_FUNC;
    const Symbol &Added = T->add(S);
    EXPECT_NE(Added.Name.data(), Name.data());
    // The caller's string changes and goes: the table's name does not.
    Name.assign(Name.size(), 'x');
  }
  // Many more: the table grows, names stay where they were copied to.
  const char *First = T->symbols().back().Name.data();
  for (int I = 0; I < 1000; ++I) {
    std::string N = "local." + std::to_string(I);
    Symbol S;
    S.Name = N;
    T->add(S); // locals go before the globals
  }
  ASSERT_EQ(T->size(), Before + 1001);
  EXPECT_EQ(T->symbols().back().Name, "transient.stub");
  EXPECT_EQ(T->symbols().back().Name.data(), First);
  EXPECT_TRUE(T->find("local.999"));
  EXPECT_TRUE(T->find("local.0"));
  // An empty name stays empty.
  Symbol E;
  E.Binding = ELF::STB_GLOBAL;
  EXPECT_TRUE(T->add(E).Name.empty());
}

/// An ELF64 shared object with no segments and a .symtab of \p N local
/// symbols (each named "s", STT_NOTYPE but every tenth STT_FUNC).
std::vector<uint8_t> manySymbols(size_t N) {
  using ELFT = object::ELF64LE;
  const char ShStr[] = "\0.symtab\0.strtab\0.shstrtab";
  const char Str[] = "\0s";
  const size_t SymOff = sizeof(ELFT::Ehdr);
  const size_t SymSize = (N + 1) * sizeof(ELFT::Sym);
  const size_t StrOff = SymOff + SymSize, ShStrOff = StrOff + sizeof(Str);
  const size_t ShOff = alignTo(ShStrOff + sizeof(ShStr), 8);
  std::vector<uint8_t> B(ShOff + 4 * sizeof(ELFT::Shdr));
  auto &H = *reinterpret_cast<ELFT::Ehdr *>(B.data());
  std::memcpy(H.e_ident, ELF::ElfMagic, 4);
  H.e_ident[ELF::EI_CLASS] = ELF::ELFCLASS64;
  H.e_ident[ELF::EI_DATA] = ELF::ELFDATA2LSB;
  H.e_ident[ELF::EI_VERSION] = ELF::EV_CURRENT;
  H.e_ident[ELF::EI_OSABI] = ELF::ELFOSABI_AMDGPU_HSA;
  H.e_ident[ELF::EI_ABIVERSION] = ELF::ELFABIVERSION_AMDGPU_HSA_V5;
  H.e_type = ELF::ET_DYN;
  H.e_machine = ELF::EM_AMDGPU;
  H.e_version = ELF::EV_CURRENT;
  H.e_flags = ELF::EF_AMDGPU_MACH_AMDGCN_GFX900;
  H.e_ehsize = sizeof(ELFT::Ehdr);
  H.e_shentsize = sizeof(ELFT::Shdr);
  H.e_shoff = ShOff;
  H.e_shnum = 4;
  H.e_shstrndx = 3;
  auto *Syms = reinterpret_cast<ELFT::Sym *>(B.data() + SymOff);
  for (size_t I = 1; I <= N; ++I) {
    Syms[I].st_name = 1;
    Syms[I].setBindingAndType(ELF::STB_LOCAL,
                              I % 10 == 0 ? ELF::STT_FUNC : ELF::STT_NOTYPE);
  }
  std::memcpy(B.data() + StrOff, Str, sizeof(Str));
  std::memcpy(B.data() + ShStrOff, ShStr, sizeof(ShStr));
  auto *Sh = reinterpret_cast<ELFT::Shdr *>(B.data() + ShOff);
  Sh[1] = {};
  Sh[1].sh_name = 1; // .symtab
  Sh[1].sh_type = ELF::SHT_SYMTAB;
  Sh[1].sh_offset = SymOff;
  Sh[1].sh_size = SymSize;
  Sh[1].sh_link = 2;
  Sh[1].sh_info = N + 1; // every symbol local
  Sh[1].sh_addralign = 8;
  Sh[1].sh_entsize = sizeof(ELFT::Sym);
  Sh[2].sh_name = 9; // .strtab
  Sh[2].sh_type = ELF::SHT_STRTAB;
  Sh[2].sh_offset = StrOff;
  Sh[2].sh_size = sizeof(Str);
  Sh[2].sh_addralign = 1;
  Sh[3].sh_name = 17; // .shstrtab
  Sh[3].sh_type = ELF::SHT_STRTAB;
  Sh[3].sh_offset = ShStrOff;
  Sh[3].sh_size = sizeof(ShStr);
  Sh[3].sh_addralign = 1;
  return B;
}

TEST(LargeInput, ScansOfALargeSymbolTableHandItsBytesBack) {
  // 800 000 records (18.3 MiB): over SymbolTable::ReleaseFrom.
  std::vector<uint8_t> B = manySymbols(800000);
  std::unique_ptr<Object> Obj = readBytes(B);
  ASSERT_TRUE(Obj);
  SymbolTable *T = Obj->symtab();
  ASSERT_TRUE(T);
  const ArrayRef<uint8_t> Records = T->section().contents().drop_front(
      sizeof(object::ELF64LE::Sym)); // (the null entry is not scanned)
  const ArrayRef<uint8_t> Names = T->stringTable().contents();
  ASSERT_GE(Records.size(), SymbolTable::ReleaseFrom);
  std::vector<ArrayRef<uint8_t>> Released;
  Obj->setInputReleaser(
      [&Released](ArrayRef<uint8_t> R) { Released.push_back(R); });
  // The records behind the scan, in order, a step (whole records) at a
  // time, then the names: every record once.
  auto CheckWhole = [&](const char *Scan) {
    SCOPED_TRACE(Scan);
    ASSERT_GE(Released.size(), 3u);
    const uint8_t *At = Records.data();
    for (size_t I = 0; I + 1 != Released.size(); ++I) {
      EXPECT_EQ(Released[I].data(), At);
      if (I + 2 != Released.size())
        EXPECT_EQ(Released[I].size(), alignDown(SymbolTable::ReleaseFrom,
                                                sizeof(object::ELF64LE::Sym)));
      At = Released[I].end();
    }
    EXPECT_EQ(At, Records.end());
    EXPECT_EQ(Released.back().data(), Names.data());
    EXPECT_EQ(Released.back().size(), Names.size());
    Released.clear();
  };
  size_t Seen = 0;
  T->forEach([&](const Symbol &) { ++Seen; });
  EXPECT_EQ(Seen, 800000u);
  CheckWhole("forEach");
  Seen = 0;
  T->forEachOfType(ELF::STT_FUNC, [&](const Symbol &) { ++Seen; });
  EXPECT_EQ(Seen, 80000u);
  CheckWhole("forEachOfType");
  // A search that stops early hands back what it read.
  std::optional<Symbol> Tenth =
      T->findIf([](const Symbol &S) { return S.Type == ELF::STT_FUNC; });
  ASSERT_TRUE(Tenth);
  ASSERT_EQ(Released.size(), 2u);
  EXPECT_EQ(Released[0].data(), Records.data());
  EXPECT_EQ(Released[0].size(), 10 * sizeof(object::ELF64LE::Sym));
  EXPECT_EQ(Released[1].data(), Names.data());
  Released.clear();
  // Made whole: the same, once.
  EXPECT_EQ(T->symbols().size(), 800000u);
  CheckWhole("symbols");
  T->forEach([&](const Symbol &) {});
  EXPECT_TRUE(Released.empty());
}

TEST(LargeInput, ScansOfASmallSymbolTableHandNothingBack) {
  std::vector<uint8_t> B = manySymbols(1000); // (the object borrows it)
  std::unique_ptr<Object> Obj = readBytes(B);
  ASSERT_TRUE(Obj);
  std::vector<ArrayRef<uint8_t>> Released;
  Obj->setInputReleaser(
      [&Released](ArrayRef<uint8_t> R) { Released.push_back(R); });
  size_t Seen = 0;
  Obj->symtab()->forEach([&](const Symbol &) { ++Seen; });
  EXPECT_EQ(Seen, 1000u);
  EXPECT_TRUE(Released.empty());
}

TEST(LargeInput, KernelsAnalysisReleasesEntryBytesOfTheInput) {
  std::vector<uint8_t> B =
      yamlToBytes(embeddedInput("concurrency-gfx900.yaml"));
  // Blocks are 2 MiB of address space, so where the bytes lie decides how
  // many blocks the entries touch: the input is placed at the start of an
  // aligned block, where a heap vector may straddle two.
  constexpr size_t Block = 2u << 20;
  ASSERT_LT(B.size(), Block);
  std::unique_ptr<uint8_t, decltype(&std::free)> Aligned(
      static_cast<uint8_t *>(std::aligned_alloc(Block, Block)), &std::free);
  ASSERT_TRUE(Aligned);
  std::memcpy(Aligned.get(), B.data(), B.size());
  Expected<std::unique_ptr<Object>> Read = readObject(MemoryBufferRef(
      StringRef(reinterpret_cast<const char *>(Aligned.get()), B.size()), ""));
  ASSERT_TRUE(bool(Read)) << toString(Read.takeError());
  std::unique_ptr<Object> Obj = std::move(*Read);
  std::vector<ArrayRef<uint8_t>> Released;
  Obj->setInputReleaser(
      [&Released](ArrayRef<uint8_t> R) { Released.push_back(R); });
  AnalysisManager AM;
  Expected<KernelsAnalysis::Result &> R = AM.getResult<KernelsAnalysis>(*Obj);
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  ASSERT_FALSE(R->Kernels.empty());
  // The metadata note, once parsed (the whole section: it is smaller than
  // a step), and the entries: a small object's share one 2 MiB block, one
  // release after the last, covering every entry that has a slot's bytes
  // after it.
  ASSERT_EQ(Released.size(), 2u);
  for (ArrayRef<uint8_t> X : Released)
    EXPECT_TRUE(inside(X, Obj->input()));
  ASSERT_TRUE(R->MetadataSection);
  const ArrayRef<uint8_t> Note = R->MetadataSection->contents();
  const bool NoteFirst = Released[0].data() == Note.data();
  EXPECT_EQ(Released[NoteFirst ? 0 : 1].data(), Note.data());
  EXPECT_EQ(Released[NoteFirst ? 0 : 1].size(), Note.size());
  const ArrayRef<uint8_t> Entries = Released[NoteFirst ? 1 : 0];
  for (const KernelInfo &K : R->Kernels) {
    std::optional<ArrayRef<uint8_t>> Slot =
        Obj->bytesIfAt(K.Entry, amdgpu::StubSlotSize);
    if (!Slot)
      continue;
    EXPECT_TRUE(inside(*Slot, Entries)) << K.Name;
  }
  // The bytes stay readable (the releaser is a hint), and an object
  // without one releases nothing.
  std::unique_ptr<Object> Plain = readBytes(B);
  AnalysisManager AM2;
  EXPECT_TRUE(bool(AM2.getResult<KernelsAnalysis>(*Plain)));
}

} // namespace
