//===- unittests/LargeInputTest.cpp - What large inputs rely on -----------===//
//
// Issue 45: a Tensile object has 1.8M symbols and 14k kernels spread over
// 250 MB of code. Symbols read from a file borrow their names from its
// string table, added ones are copied into their table; the kernels
// analysis hands back the input bytes it read at each kernel entry
// (Object::releaseInput) a 2 MiB block at a time, and only bytes of the
// input.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Object/Object.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Pass/AnalysisManager.h"
#include "hotswap/Passes/Kernels.h"

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
