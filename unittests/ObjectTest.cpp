//===- unittests/ObjectTest.cpp - ELF model, reader and writer ------------===//
//
// Inputs are built in memory with yaml2obj. Outputs are checked with
// llvm::object::ELFFile (an independent reader) wherever it accepts them, and
// byte by byte against the input for everything that must not move.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Object/Object.h"
#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Writer.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include "TestUtil.h"

#include <cstring>

using namespace llvm;
using namespace llvm::ELF;
using namespace hotswap;
using namespace hotswap::unittest;

namespace {

using ELFT = object::ELF64LE;

// gfx90a code object v6, shaped like ld.lld output: PT_PHDR, a read-only
// PT_LOAD (.note, .dynsym, .dynstr, .rodata), an executable PT_LOAD (.text),
// PT_NOTE; .comment, .symtab, .strtab, .shstrtab are not loaded. Loaded
// memory ends at 0x1018.
constexpr const char *KernelYAML = R"(
--- !ELF
FileHeader:
  Class:      ELFCLASS64
  Data:       ELFDATA2LSB
  OSABI:      ELFOSABI_AMDGPU_HSA
  ABIVersion: 0x4
  Type:       ET_DYN
  Machine:    EM_AMDGPU
  Flags:      [ EF_AMDGPU_MACH_AMDGCN_GFX90A ]
ProgramHeaders:
  - Type:     PT_PHDR
    Flags:    [ PF_R ]
    VAddr:    0x40
    Offset:   0x40
    FileSize: 0xe0
    MemSize:  0xe0
    Align:    0x8
  - Type:     PT_LOAD
    Flags:    [ PF_R ]
    Offset:   0x0
    FirstSec: .note
    LastSec:  .rodata
    Align:    0x1000
  - Type:     PT_LOAD
    Flags:    [ PF_R, PF_X ]
    FirstSec: .text
    LastSec:  .text
    VAddr:    0x1000
    Align:    0x1000
  - Type:     PT_NOTE
    Flags:    [ PF_R ]
    FirstSec: .note
    LastSec:  .note
    VAddr:    0x200
    Align:    0x4
Sections:
  - Name:         .note
    Type:         SHT_NOTE
    Flags:        [ SHF_ALLOC ]
    Address:      0x200
    Offset:       0x200
    AddressAlign: 0x4
    Notes:
      - Name: GNU
        Type: 0x3
        Desc: 0123456789abcdef
  - Name:         .dynsym
    Type:         SHT_DYNSYM
    Flags:        [ SHF_ALLOC ]
    Address:      0x300
    Offset:       0x300
    AddressAlign: 0x8
  - Name:         .dynstr
    Type:         SHT_STRTAB
    Flags:        [ SHF_ALLOC ]
    AddressAlign: 0x1
  - Name:         .rodata
    Type:         SHT_PROGBITS
    Flags:        [ SHF_ALLOC ]
    Address:      0x400
    Offset:       0x400
    AddressAlign: 0x40
    Content:      00000000000000000000000000000000000C00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
  - Name:         .text
    Type:         SHT_PROGBITS
    Flags:        [ SHF_ALLOC, SHF_EXECINSTR ]
    Address:      0x1000
    Offset:       0x1000
    AddressAlign: 0x100
    Content:      "0000000000000000000081BF0000000000000000000081BF"
  - Name:         .comment
    Type:         SHT_PROGBITS
    Flags:        [ SHF_MERGE, SHF_STRINGS ]
    EntSize:      0x1
    Content:      "68656C6C6F00"
Symbols:
  - Name:    local_sym
    Section: .text
    Value:   0x1004
  - Name:    k
    Type:    STT_FUNC
    Section: .text
    Binding: STB_GLOBAL
    Value:   0x1000
    Size:    0x18
  - Name:    k.kd
    Type:    STT_OBJECT
    Section: .rodata
    Binding: STB_GLOBAL
    Value:   0x400
    Size:    0x40
DynamicSymbols:
  - Name:    k.kd
    Type:    STT_OBJECT
    Section: .rodata
    Binding: STB_GLOBAL
    Value:   0x400
    Size:    0x40
...
)";

/// Whether \p E holds a value; reports the error otherwise.
template <typename T> bool ok(Expected<T> &E) {
  if (E)
    return true;
  ADD_FAILURE() << toString(E.takeError());
  return false;
}

std::unique_ptr<Object> read(const std::vector<uint8_t> &Bytes) {
  Expected<std::unique_ptr<Object>> Obj =
      readObject(MemoryBufferRef(toStringRef(Bytes), "test.co"));
  EXPECT_TRUE(ok(Obj));
  return Obj ? std::move(*Obj) : nullptr;
}

std::vector<uint8_t> write(const Object &Obj) {
  Expected<std::unique_ptr<MemoryBuffer>> Out = writeObjectToBuffer(Obj);
  EXPECT_TRUE(ok(Out));
  if (!Out)
    return {};
  StringRef B = (*Out)->getBuffer();
  return std::vector<uint8_t>(B.bytes_begin(), B.bytes_end());
}

/// Expects every byte that a PT_LOAD of \p Obj maps from \p In to be at the
/// same offset in \p Out, except the four ELF header fields that locate and
/// count the tables (e_phoff, e_shoff, e_phnum, e_shnum).
void expectLoadedBytesKept(const Object &Obj, const std::vector<uint8_t> &In,
                           const std::vector<uint8_t> &Out) {
  auto IsTableField = [](uint64_t O) {
    return (O >= 32 && O < 48) || (O >= 56 && O < 58) || (O >= 60 && O < 62);
  };
  for (const auto &P : Obj.segments()) {
    if (P->IsNew || P->Type != PT_LOAD)
      continue;
    ASSERT_LE(P->Offset + P->FileSize, Out.size());
    for (uint64_t O = P->Offset; O < P->Offset + P->FileSize; ++O)
      if (!IsTableField(O))
        ASSERT_EQ(Out[O], In[O]) << "loaded byte at offset " << O;
  }
}

/// A new executable section of \p Size bytes at \p Addr covered by a new
/// PT_LOAD, as synth-trampolines makes it.
Section &addLoadedCode(Object &Obj, uint64_t Addr, size_t Size) {
  auto Sec = std::make_unique<Section>();
  Sec->Name = ".hotswap.text";
  Sec->Type = SHT_PROGBITS;
  Sec->Flags = SHF_ALLOC | SHF_EXECINSTR;
  Sec->Addr = Addr;
  Sec->AddrAlign = 0x100;
  std::vector<uint8_t> Code(Size);
  for (size_t I = 0; I < Size; ++I)
    Code[I] = static_cast<uint8_t>(I * 7 + 1);
  Sec->setContents(std::move(Code));
  Section &S = Obj.addSection(std::move(Sec));
  auto Seg = std::make_unique<Segment>();
  Seg->Type = PT_LOAD;
  Seg->Flags = PF_R | PF_X;
  Seg->VAddr = Seg->PAddr = Addr;
  Seg->Align = 0x1000;
  Seg->Members.push_back(&S);
  Obj.addSegment(std::move(Seg));
  return S;
}

/// A global function symbol "k.stub" at \p Value of \p Text, as stub-syms
/// adds.
Symbol stubSymbolAt(Section *Text, uint64_t Value) {
  Symbol G;
  G.Name = "k.stub";
  G.Binding = STB_GLOBAL;
  G.Type = STT_FUNC;
  G.Sec = Text;
  G.Value = Value;
  return G;
}

class ObjectTest : public ::testing::Test {
protected:
  void SetUp() override {
    Input = yamlToBytes(KernelYAML);
    ASSERT_FALSE(Input.empty());
    Obj = read(Input);
    ASSERT_TRUE(Obj);
  }
  std::vector<uint8_t> Input;
  std::unique_ptr<Object> Obj;
};

// Sections an earlier run appended can be taken out again; anything that
// names them or a later one by index refuses it, changing nothing.
TEST_F(ObjectTest, RemoveSectionsRefusesWhatIsNamed) {
  const size_t N = Obj->sections().size();
  // .text is held by symbols (and sections after it are symbol tables).
  Error E = Obj->removeSections({5});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("cannot remove section 5 ('.text')"),
            std::string::npos);
  EXPECT_EQ(Obj->sections().size(), N);
  for (uint32_t Bad : {uint32_t(0), uint32_t(N)}) {
    E = Obj->removeSections({Bad});
    EXPECT_TRUE(bool(E));
    consumeError(std::move(E));
  }

  // Two appended sections; a new symbol in the second pins both.
  Section &A = addLoadedCode(*Obj, 0x100000, 0x10);
  auto B = std::make_unique<Section>();
  B->Name = ".hotswap.note";
  B->Type = SHT_NOTE;
  B->setContents(std::vector<uint8_t>(8, 1));
  Section &BS = Obj->addSection(std::move(B));
  Obj->removeSegment(Obj->segments().size() - 1); // (A's segment)
  Symbol Sym;
  Sym.Name = "in_b";
  Sym.Sec = &BS;
  Symbol &Added = Obj->symtab()->add(Sym);
  E = Obj->removeSections({A.index()});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("symbol 'in_b'"), std::string::npos);
  EXPECT_EQ(Obj->sections().size(), N + 2);
  Added.Sec = nullptr;
  Added.Shndx = SHN_ABS;

  // Nothing names them: both go, the table is as it was.
  ASSERT_FALSE(bool(Obj->removeSections({uint32_t(N + 1), uint32_t(N)})));
  ASSERT_EQ(Obj->sections().size(), N);
  for (uint32_t I = 0; I < N; ++I)
    EXPECT_EQ(Obj->sections()[I]->index(), I);
  EXPECT_EQ(Obj->sectionForAddress(0x100000), nullptr);
}

TEST_F(ObjectTest, ReadsValidObject) {
  EXPECT_EQ(Obj->Header.Type, ET_DYN);
  EXPECT_EQ(Obj->Header.Machine, EM_AMDGPU);
  EXPECT_EQ(Obj->Header.osABI(), ELFOSABI_AMDGPU_HSA);
  EXPECT_EQ(Obj->Header.abiVersion(), ELFABIVERSION_AMDGPU_HSA_V6);
  EXPECT_EQ(Obj->Header.Flags & EF_AMDGPU_MACH,
            unsigned(EF_AMDGPU_MACH_AMDGCN_GFX90A));

  ASSERT_EQ(Obj->segments().size(), 4u);
  EXPECT_EQ(Obj->segments()[0]->Type, PT_PHDR);
  EXPECT_EQ(Obj->segments()[2]->Type, PT_LOAD);
  EXPECT_EQ(Obj->segments()[2]->VAddr, 0x1000u);
  EXPECT_EQ(Obj->segments()[2]->FileSize, 0x18u);

  // null, .note, .dynsym, .dynstr, .rodata, .text, .comment, .symtab,
  // .strtab, .shstrtab
  ASSERT_EQ(Obj->sections().size(), 10u);
  Section *Text = Obj->findSection(".text");
  ASSERT_TRUE(Text);
  EXPECT_EQ(Text->index(), 5u);
  EXPECT_EQ(Text->Addr, 0x1000u);
  EXPECT_EQ(Text->size(), 0x18u);
  EXPECT_FALSE(Text->isNew());
  EXPECT_FALSE(Text->isDirty());
  EXPECT_EQ(Obj->sectionNames(), Obj->findSection(".shstrtab"));

  SymbolTable *Sym = Obj->symtab();
  ASSERT_TRUE(Sym);
  EXPECT_EQ(&Sym->stringTable(), Obj->findSection(".strtab"));
  ASSERT_EQ(Sym->size(), 3u); // entry 0 is not stored
  EXPECT_EQ(Sym->symbols()[0].Name, "local_sym");
  EXPECT_EQ(Sym->firstNonLocal(), 2u);
  std::optional<Symbol> KD = Sym->find("k.kd");
  ASSERT_TRUE(KD);
  EXPECT_EQ(KD->Sec, Obj->findSection(".rodata"));
  EXPECT_EQ(KD->Value, 0x400u);
  EXPECT_EQ(KD->Type, STT_OBJECT);
  ASSERT_TRUE(Obj->dynsym());
  EXPECT_TRUE(Obj->dynsym()->find("k.kd"));

  EXPECT_EQ(Obj->sectionForAddress(0x1010), Text);
  EXPECT_EQ(Obj->sectionForAddress(0x1018), nullptr);
  EXPECT_EQ(Obj->loadSegmentFor(0x400, 0x40), Obj->segments()[1].get());
  EXPECT_EQ(Obj->loadSegmentFor(0x1010, 0x10), nullptr);
  Expected<ArrayRef<uint8_t>> KDBytes = Obj->bytesAt(0x400, 64);
  ASSERT_TRUE(ok(KDBytes));
  EXPECT_EQ((*KDBytes)[17], 0x0c);
}

TEST_F(ObjectTest, UnchangedObjectRoundTripsByteForByte) {
  EXPECT_EQ(write(*Obj), Input);
}

TEST_F(ObjectTest, InPlaceEditKeepsLayout) {
  // Same-size edit of a loaded section: only those bytes differ.
  Section *RO = Obj->findSection(".rodata");
  ASSERT_FALSE(errorToBool(RO->overwrite(0, {0xAA})));
  EXPECT_TRUE(RO->isDirty());
  std::vector<uint8_t> Out = write(*Obj);
  ASSERT_EQ(Out.size(), Input.size());
  for (size_t I = 0; I < Out.size(); ++I)
    if (I != 0x400)
      ASSERT_EQ(Out[I], Input[I]) << "byte " << I;
  EXPECT_EQ(Out[0x400], 0xAA);
}

TEST_F(ObjectTest, FirstFreeAddress) {
  // Loaded memory ends at 0x1018 (.text).
  EXPECT_EQ(Obj->firstFreeAddress(), 0x2000u);
  EXPECT_EQ(Obj->firstFreeAddress(0x100), 0x1100u);
  EXPECT_EQ(Obj->firstFreeAddress(0x10000), 0x10000u);
  // A NOBITS section extends loaded memory even with no file bytes.
  auto Bss = std::make_unique<Section>();
  Bss->Name = ".bss";
  Bss->Type = SHT_NOBITS;
  Bss->Flags = SHF_ALLOC | SHF_WRITE;
  Bss->Addr = 0x2000;
  Bss->setNoBitsSize(0x1001);
  Obj->addSection(std::move(Bss));
  EXPECT_EQ(Obj->firstFreeAddress(), 0x4000u);
  // Non-allocated sections do not count.
  EXPECT_EQ(Obj->findSection(".comment")->Addr, 0u);
}

TEST_F(ObjectTest, SymbolTableAddPartitionsAndDerivesInfo) {
  SymbolTable *T = Obj->symtab();
  Section *Text = Obj->findSection(".text");
  T->add(stubSymbolAt(Text, 0x1000));
  Symbol L;
  L.Name = "new_local";
  L.Type = STT_FUNC;
  L.Sec = Text;
  L.Value = 0x1008;
  T->add(L);
  EXPECT_TRUE(T->isModified());
  // Model order: local_sym, new_local, k, k.kd, k.stub.
  ASSERT_EQ(T->size(), 5u);
  EXPECT_EQ(T->symbols()[1].Name, "new_local");
  EXPECT_EQ(T->firstNonLocal(), 3u);

  std::vector<uint8_t> Out = write(*Obj);
  Expected<object::ELFFile<ELFT>> EF =
      object::ELFFile<ELFT>::create(toStringRef(Out));
  ASSERT_TRUE(ok(EF));
  auto Secs = EF->sections();
  ASSERT_TRUE(ok(Secs));
  const ELFT::Shdr *SymSec = nullptr;
  for (const ELFT::Shdr &S : *Secs)
    if (S.sh_type == SHT_SYMTAB)
      SymSec = &S;
  ASSERT_TRUE(SymSec);
  EXPECT_EQ(SymSec->sh_info, 3u); // null + 2 locals
  auto Syms = EF->symbols(SymSec);
  ASSERT_TRUE(ok(Syms));
  auto Str = EF->getStringTableForSymtab(*SymSec);
  ASSERT_TRUE(ok(Str));
  std::vector<std::string> Names;
  for (size_t I = 0; I < Syms->size(); ++I) {
    const ELFT::Sym &S = (*Syms)[I];
    auto N = S.getName(*Str);
    ASSERT_TRUE(ok(N));
    Names.push_back(N->str());
    // Every local precedes every global.
    EXPECT_EQ(S.getBinding() == STB_LOCAL, I < SymSec->sh_info) << N->str();
  }
  EXPECT_EQ(Names, (std::vector<std::string>{"", "local_sym", "new_local", "k",
                                             "k.kd", "k.stub"}));
  EXPECT_EQ((*Syms)[5].st_shndx, 5u);
  EXPECT_EQ((*Syms)[5].st_value, 0x1000u);

  // Our reader agrees.
  std::unique_ptr<Object> Back = read(Out);
  ASSERT_TRUE(Back);
  EXPECT_EQ(Back->symtab()->section().Info, 3u);
  EXPECT_EQ(Back->symtab()->firstNonLocal(), 3u);
}

TEST_F(ObjectTest, SymbolTableKeepsInputRecordsUntilAskedForStructs) {
  SymbolTable *T = Obj->symtab();
  Section *Text = Obj->findSection(".text");
  auto Names = [&] {
    std::vector<std::string> N;
    T->forEach([&](const Symbol &S) { N.push_back(S.Name.str()); });
    return N;
  };
  auto NamesOf = [&](uint8_t Type) {
    std::vector<std::string> N;
    T->forEachOfType(Type, [&](const Symbol &S) {
      EXPECT_EQ(S.Type, Type) << S.Name.str();
      N.push_back(S.Name.str());
    });
    return N;
  };
  using Names_ = std::vector<std::string>;
  // As read: the input's records, no structs.
  ASSERT_TRUE(T->appendedOnly());
  EXPECT_TRUE(T->appendedOnly()->empty());
  EXPECT_EQ(T->size(), 3u);
  EXPECT_EQ(Names(), (std::vector<std::string>{"local_sym", "k", "k.kd"}));
  EXPECT_EQ(T->firstNonLocal(), 2u);
  std::optional<Symbol> K = T->find("k");
  ASSERT_TRUE(K);
  EXPECT_EQ(K->Sec, Text);
  EXPECT_EQ(K->Binding, STB_GLOBAL);
  EXPECT_FALSE(T->find("k.stub"));

  // A global goes after them, and the table stays as records.
  T->add(stubSymbolAt(Text, 0x1000));
  ASSERT_TRUE(T->appendedOnly());
  ASSERT_EQ(T->appendedOnly()->size(), 1u);
  EXPECT_EQ(T->size(), 4u);
  EXPECT_EQ(Names(),
            (std::vector<std::string>{"local_sym", "k", "k.kd", "k.stub"}));
  EXPECT_EQ(T->firstNonLocal(), 2u);
  ASSERT_TRUE(T->findIf([](const Symbol &S) { return S.Value == 0x1000; }));
  // By type: the input's records and the global added after them.
  EXPECT_EQ(NamesOf(STT_FUNC), (Names_{"k", "k.stub"}));
  EXPECT_EQ(NamesOf(STT_OBJECT), (Names_{"k.kd"}));
  EXPECT_EQ(NamesOf(STT_NOTYPE), (Names_{"local_sym"}));
  EXPECT_EQ(NamesOf(STT_SECTION), Names_{});

  // Written: the input's records byte for byte, the global after them.
  const Section &SymSec = T->section();
  std::vector<uint8_t> In(SymSec.contents().begin(), SymSec.contents().end());
  std::vector<uint8_t> Out = write(*Obj);
  std::unique_ptr<Object> Back = read(Out);
  ASSERT_TRUE(Back);
  ArrayRef<uint8_t> Written = Back->symtab()->section().contents();
  ASSERT_EQ(Written.size(), In.size() + sizeof(ELFT::Sym));
  EXPECT_TRUE(std::equal(In.begin(), In.end(), Written.begin()));
  EXPECT_EQ(Back->symtab()->section().Info, 2u);
  EXPECT_EQ(Back->symtab()->find("k.stub")->Value, 0x1000u);

  // Asked for structs: the same symbols; a local then goes before the
  // globals.
  ASSERT_EQ(T->symbols().size(), 4u);
  EXPECT_FALSE(T->appendedOnly());
  EXPECT_EQ(T->symbols()[1].Sec, Text);
  EXPECT_EQ(Names(),
            (std::vector<std::string>{"local_sym", "k", "k.kd", "k.stub"}));
  Symbol L;
  L.Name = "new_local";
  T->add(L);
  EXPECT_EQ(Names(), (std::vector<std::string>{"local_sym", "new_local", "k",
                                               "k.kd", "k.stub"}));
  EXPECT_EQ(T->firstNonLocal(), 3u);
  // By type, from the structs.
  EXPECT_EQ(NamesOf(STT_FUNC), (Names_{"k", "k.stub"}));
  EXPECT_EQ(NamesOf(STT_NOTYPE), (Names_{"local_sym", "new_local"}));
}

TEST_F(ObjectTest, StringTablesAppendAndKeepOffsets) {
  SymbolTable *T = Obj->symtab();
  ArrayRef<uint8_t> OldStr = T->stringTable().contents();
  std::vector<uint8_t> OldStrBytes(OldStr.begin(), OldStr.end());
  std::vector<uint32_t> OldOffsets;
  for (const Symbol &S : T->symbols())
    OldOffsets.push_back(*S.OrigNameOffset);
  ArrayRef<uint8_t> OldShStr = Obj->sectionNames()->contents();
  std::vector<uint8_t> OldShStrBytes(OldShStr.begin(), OldShStr.end());

  Symbol G;
  G.Name = "brand_new";
  G.Binding = STB_GLOBAL;
  T->add(G);
  // A name that is a suffix of an existing one is still appended whole, not
  // merged into the old bytes.
  Symbol G2;
  G2.Name = "kd";
  G2.Binding = STB_GLOBAL;
  T->add(G2);
  auto C = std::make_unique<Section>();
  C->Name = ".note.hotswap";
  C->Type = SHT_NOTE;
  C->AddrAlign = 4;
  C->setContents(std::vector<uint8_t>(12, 0));
  Obj->addSection(std::move(C));

  std::vector<uint8_t> Out = write(*Obj);
  Expected<object::ELFFile<ELFT>> EF =
      object::ELFFile<ELFT>::create(toStringRef(Out));
  ASSERT_TRUE(ok(EF));
  auto Secs = EF->sections();
  ASSERT_TRUE(ok(Secs));
  ASSERT_EQ(Secs->size(), 11u);

  // .strtab: the old bytes are a prefix; the new names follow.
  const ELFT::Shdr &StrSec = (*Secs)[8];
  auto StrBytes = EF->getSectionContents(StrSec);
  ASSERT_TRUE(ok(StrBytes));
  ASSERT_GT(StrBytes->size(), OldStrBytes.size());
  EXPECT_TRUE(
      std::equal(OldStrBytes.begin(), OldStrBytes.end(), StrBytes->begin()));
  EXPECT_EQ(toStringRef(StrBytes->drop_front(OldStrBytes.size())).str(),
            std::string("brand_new\0kd\0", 13));

  // Existing symbols keep their st_name.
  auto Syms = EF->symbols(&(*Secs)[7]);
  ASSERT_TRUE(ok(Syms));
  ASSERT_EQ(Syms->size(), 6u);
  for (size_t I = 0; I < OldOffsets.size(); ++I)
    EXPECT_EQ((*Syms)[I + 1].st_name, OldOffsets[I]);
  EXPECT_EQ((*Syms)[4].st_name, OldStrBytes.size());

  // .shstrtab: old names keep their offsets, the new one is appended.
  const ELFT::Shdr &ShStr = (*Secs)[9];
  auto ShStrBytes = EF->getSectionContents(ShStr);
  ASSERT_TRUE(ok(ShStrBytes));
  EXPECT_TRUE(std::equal(OldShStrBytes.begin(), OldShStrBytes.end(),
                         ShStrBytes->begin()));
  for (unsigned I = 1; I < 10; ++I) {
    auto Name = EF->getSectionName((*Secs)[I]);
    ASSERT_TRUE(ok(Name));
    EXPECT_EQ(Name->str(), Obj->sections()[I]->Name);
    EXPECT_EQ((*Secs)[I].sh_name, Obj->sections()[I]->Orig->NameOffset);
  }
  EXPECT_EQ((*Secs)[10].sh_name, OldShStrBytes.size());
  auto NewName = EF->getSectionName((*Secs)[10]);
  ASSERT_TRUE(ok(NewName));
  EXPECT_EQ(NewName->str(), ".note.hotswap");
}

TEST_F(ObjectTest, NewSegmentLeavesLoadedBytesInPlace) {
  uint64_t Addr = Obj->firstFreeAddress();
  ASSERT_EQ(Addr, 0x2000u);
  // Grow a non-loaded section too, so that the tail is repacked.
  Obj->findSection(".comment")
      ->setContents({'h', 'e', 'l', 'l', 'o', ' ', 'a', 'g', 'a', 'i', 'n', 0});
  addLoadedCode(*Obj, Addr, 0x300);

  std::vector<uint8_t> Out = write(*Obj);
  Expected<object::ELFFile<ELFT>> EF =
      object::ELFFile<ELFT>::create(toStringRef(Out));
  ASSERT_TRUE(ok(EF));
  auto Phdrs = EF->program_headers();
  ASSERT_TRUE(ok(Phdrs));
  ASSERT_EQ(Phdrs->size(), 5u);

  // The new PT_LOAD is last, above every other address, congruent.
  const ELFT::Phdr &New = (*Phdrs)[4];
  EXPECT_EQ(New.p_type, PT_LOAD);
  EXPECT_EQ(New.p_flags, unsigned(PF_R | PF_X));
  EXPECT_EQ(New.p_vaddr, 0x2000u);
  EXPECT_EQ(New.p_filesz, 0x300u);
  EXPECT_EQ(New.p_memsz, 0x300u);
  EXPECT_EQ(New.p_offset % 0x1000, New.p_vaddr % 0x1000);
  for (size_t I = 0; I + 1 < Phdrs->size(); ++I)
    if ((*Phdrs)[I].p_type == PT_LOAD)
      EXPECT_LE((*Phdrs)[I].p_vaddr + (*Phdrs)[I].p_memsz, New.p_vaddr);
  ASSERT_LE(New.p_offset + New.p_filesz, Out.size());
  ArrayRef<uint8_t> NewBytes(Out.data() + New.p_offset, New.p_filesz);
  EXPECT_EQ(NewBytes, Obj->findSection(".hotswap.text")->contents());

  // Every byte loaded from the input is at the same offset, unchanged
  // (including the old program header table, which was moved away).
  expectLoadedBytesKept(*Obj, Input, Out);

  // The table grew past its slot: it moved after the new segment, and
  // PT_PHDR (which described the old position) became PT_NULL.
  uint64_t PhOff = read64(Out, 32);
  EXPECT_GE(PhOff, New.p_offset + New.p_filesz);
  EXPECT_EQ(PhOff % 8, 0u);
  EXPECT_EQ((*Phdrs)[0].p_type, PT_NULL);
  EXPECT_EQ((*Phdrs)[0].p_memsz, 0u);
  EXPECT_EQ((*Phdrs)[1].p_type, PT_LOAD);

  // The section header table is last and 8-aligned.
  uint64_t ShOff = read64(Out, 40);
  EXPECT_EQ(ShOff % 8, 0u);
  EXPECT_EQ(ShOff + read16(Out, 60) * sizeof(ELFT::Shdr), Out.size());
  auto Secs = EF->sections();
  ASSERT_TRUE(ok(Secs));
  for (const ELFT::Shdr &S : *Secs)
    if (S.sh_type != SHT_NOBITS)
      EXPECT_LE(S.sh_offset + S.sh_size, ShOff);

  // The new section is named and placed where its segment says.
  const ELFT::Shdr &NewSec = Secs->back();
  auto Name = EF->getSectionName(NewSec);
  ASSERT_TRUE(ok(Name));
  EXPECT_EQ(Name->str(), ".hotswap.text");
  EXPECT_EQ(NewSec.sh_offset, New.p_offset);
  EXPECT_EQ(NewSec.sh_addr, 0x2000u);

  // The grown .comment has its new contents.
  auto Comment = EF->getSectionContents((*Secs)[6]);
  ASSERT_TRUE(ok(Comment));
  EXPECT_EQ(toStringRef(*Comment).str(), std::string("hello again\0", 12));

  // Our reader accepts the output, and writing it again changes nothing.
  std::unique_ptr<Object> Back = read(Out);
  ASSERT_TRUE(Back);
  EXPECT_EQ(write(*Back), Out);
  EXPECT_EQ(Back->firstFreeAddress(), 0x3000u);
}

TEST_F(ObjectTest, NewSegmentReusesFreedPhdrSlot) {
  // Dropping PT_NOTE leaves room: the table stays in place and PT_PHDR
  // stays.
  Obj->removeSegment(3);
  addLoadedCode(*Obj, Obj->firstFreeAddress(), 0x100);
  std::vector<uint8_t> Out = write(*Obj);
  EXPECT_EQ(read64(Out, 32), 0x40u);
  Expected<object::ELFFile<ELFT>> EF =
      object::ELFFile<ELFT>::create(toStringRef(Out));
  ASSERT_TRUE(ok(EF));
  auto Phdrs = EF->program_headers();
  ASSERT_TRUE(ok(Phdrs));
  ASSERT_EQ(Phdrs->size(), 4u);
  EXPECT_EQ((*Phdrs)[0].p_type, PT_PHDR);
  EXPECT_EQ((*Phdrs)[3].p_type, PT_LOAD);
  EXPECT_EQ((*Phdrs)[3].p_vaddr, 0x2000u);
}

TEST_F(ObjectTest, ReadOptionsAllowHost) {
  auto ReadAs = [&](uint16_t Machine, uint8_t Class, bool AllowHost) {
    std::vector<uint8_t> B = Input;
    support::endian::write16le(B.data() + 18, Machine);
    B[EI_CLASS] = Class;
    ReadOptions Opts;
    Opts.AllowHost = AllowHost;
    return errorOf(readObject(MemoryBufferRef(toStringRef(B), "x"), Opts));
  };
  // Code-object reads keep their messages.
  EXPECT_EQ(ReadAs(EM_X86_64, ELFCLASS64, false),
            "e_machine is 62, not EM_AMDGPU (224); for a host binary, "
            "extract its device code objects with 'llvm-objdump "
            "--offloading'");
  EXPECT_EQ(ReadAs(EM_AARCH64, ELFCLASS64, false),
            "e_machine is 183, not EM_AMDGPU (224)");
  EXPECT_EQ(ReadAs(EM_AMDGPU, ELFCLASS32, false),
            "32-bit ELF is not an AMDGPU HSA code object (r600 is not "
            "supported)");
  // Host reads take x86-64 and AMDGPU, validated the same way.
  EXPECT_EQ(ReadAs(EM_X86_64, ELFCLASS64, true), "<success>");
  EXPECT_EQ(ReadAs(EM_AMDGPU, ELFCLASS64, true), "<success>");
  EXPECT_EQ(ReadAs(EM_AARCH64, ELFCLASS64, true),
            "e_machine is 183, neither EM_X86_64 (62) nor EM_AMDGPU (224)");
  EXPECT_EQ(ReadAs(EM_X86_64, ELFCLASS32, true),
            "32-bit ELF is not supported (a host binary must be ELF64 "
            "little-endian x86-64)");
}

TEST_F(ObjectTest, NewSegmentHoldsProgramHeaders) {
  // What a host binary needs: the grown table at the start of the new
  // PT_LOAD (where GNU strip keeps it), its members after it, with PT_PHDR
  // describing it there.
  addLoadedCode(*Obj, 0x2400, 0x301);
  Segment &Seg = *Obj->segments().back();
  Seg.VAddr = Seg.PAddr = 0x2000;
  Seg.HoldsProgramHeaders = true;
  std::vector<uint8_t> Out = write(*Obj);
  Expected<object::ELFFile<ELFT>> EF =
      object::ELFFile<ELFT>::create(toStringRef(Out));
  ASSERT_TRUE(ok(EF));
  auto Phdrs = EF->program_headers();
  ASSERT_TRUE(ok(Phdrs));
  ASSERT_EQ(Phdrs->size(), 5u);
  const ELFT::Phdr &New = (*Phdrs)[4];
  const ELFT::Phdr &Phdr = (*Phdrs)[0];
  uint64_t PhOff = read64(Out, 32);
  EXPECT_EQ(New.p_vaddr, 0x2000u);
  EXPECT_EQ(PhOff, uint64_t(New.p_offset));
  EXPECT_EQ(New.p_filesz, 0x701u);
  EXPECT_EQ(New.p_memsz, New.p_filesz);
  EXPECT_EQ(Phdr.p_type, PT_PHDR);
  EXPECT_EQ(Phdr.p_offset, PhOff);
  EXPECT_EQ(Phdr.p_vaddr, 0x2000u);
  EXPECT_EQ(Phdr.p_paddr, 0x2000u);
  EXPECT_EQ(Phdr.p_filesz, 5 * sizeof(ELFT::Phdr));
  EXPECT_EQ(Phdr.p_memsz, 5 * sizeof(ELFT::Phdr));
  EXPECT_EQ(Phdr.p_align, 8u);
  // The section follows at its address; nothing loaded moved.
  EXPECT_EQ(memcmp(Out.data() + New.p_offset + 0x400,
                   Obj->findSection(".hotswap.text")->contents().data(), 0x301),
            0);
  expectLoadedBytesKept(*Obj, Input, Out);
  std::unique_ptr<Object> Back = read(Out);
  ASSERT_TRUE(Back);
  EXPECT_EQ(write(*Back), Out);
  EXPECT_EQ(Back->firstFreeAddress(), 0x3000u);
}

TEST_F(ObjectTest, NewSegmentWithFixedAddressMinusOffset) {
  // p_vaddr - p_offset as asked: the file offset follows from the address,
  // with zeros before it.
  uint64_t InSize = Input.size();
  uint64_t VAddr = alignTo(InSize, 0x1000) + 0x5000;
  addLoadedCode(*Obj, VAddr + 0x1000, 0x100);
  Segment &Seg = *Obj->segments().back();
  Seg.VAddr = Seg.PAddr = VAddr;
  Seg.HoldsProgramHeaders = true;
  Seg.VAddrMinusOffset = 0x3000;
  std::vector<uint8_t> Out = write(*Obj);
  Expected<object::ELFFile<ELFT>> EF =
      object::ELFFile<ELFT>::create(toStringRef(Out));
  ASSERT_TRUE(ok(EF));
  auto Phdrs = EF->program_headers();
  ASSERT_TRUE(ok(Phdrs));
  const ELFT::Phdr &New = Phdrs->back();
  EXPECT_EQ(New.p_vaddr, VAddr);
  EXPECT_EQ(New.p_offset, VAddr - 0x3000);
  EXPECT_TRUE(
      llvm::all_of(ArrayRef<uint8_t>(Out).slice(InSize, New.p_offset - InSize),
                   [](uint8_t B) { return B == 0; }));
  expectLoadedBytesKept(*Obj, Input, Out);

  // Impossible: before the input's end, or not congruent.
  Seg.VAddrMinusOffset = VAddr;
  EXPECT_EQ(errorOf(writeObjectToBuffer(*Obj)),
            "new segment at address " + hex(VAddr) +
                " cannot have p_vaddr - p_offset " + hex(VAddr) +
                ": its file offset would be before " + hex(InSize));
  Seg.VAddrMinusOffset = 0x10;
  EXPECT_EQ(errorOf(writeObjectToBuffer(*Obj)),
            "new segment at address " + hex(VAddr) +
                " cannot have p_vaddr - p_offset 0x10, which is not a "
                "multiple of its alignment 0x1000");
}

TEST_F(ObjectTest, HoldingProgramHeadersRefusals) {
  Obj->segments()[1]->HoldsProgramHeaders = true;
  EXPECT_EQ(errorOf(writeObjectToBuffer(*Obj)),
            "program header 1 of the input cannot be asked to hold the "
            "program header table");
  Obj->segments()[1]->HoldsProgramHeaders = false;
  addLoadedCode(*Obj, 0x2000, 0x100);
  Obj->segments().back()->HoldsProgramHeaders = true;
  Section &Second = addLoadedCode(*Obj, 0x3000, 0x100);
  Obj->segments().back()->HoldsProgramHeaders = true;
  EXPECT_EQ(errorOf(writeObjectToBuffer(*Obj)),
            "program headers 4 and 5 both hold the program header table");
  Obj->segments().back()->HoldsProgramHeaders = false;
  // A member inside the table, and a table that is not 8-byte aligned.
  Obj->segments()[4]->HoldsProgramHeaders = false;
  Obj->segments().back()->HoldsProgramHeaders = true;
  EXPECT_EQ(errorOf(writeObjectToBuffer(*Obj)),
            "section '.hotswap.text' at address 0x3000 lies inside the "
            "program header table of its segment (0x3000 to 0x3150)");
  Second.Addr += 0x154;
  Obj->segments().back()->VAddr += 0x154;
  EXPECT_EQ(errorOf(writeObjectToBuffer(*Obj)),
            "new segment at address 0x3154 holds the program header table but "
            "is not 8-byte aligned");
}

TEST_F(ObjectTest, GrowingLoadedSectionIsAnError) {
  Obj->findSection(".rodata")->setContents(std::vector<uint8_t>(0x50, 0));
  EXPECT_EQ(errorOf(writeObjectToBuffer(*Obj)),
            "section '.rodata' is loaded and cannot change size (0x40 -> "
            "0x50)");
}

TEST_F(ObjectTest, GrownSectionWithHugeAlignmentStaysSmall) {
  // A section that grows moves to the end of the file. A section nothing
  // loads has no address for sh_addralign to constrain: its offset is
  // aligned to at most a page (2^40 or 2^63 once asked for a terabyte-sized
  // file or wrapped offsets), and its header keeps the value.
  Section *C = Obj->findSection(".comment");
  ASSERT_TRUE(C);
  for (uint64_t Align : {uint64_t(1) << 40, uint64_t(1) << 63}) {
    C->AddrAlign = Align;
    C->setContents(std::vector<uint8_t>(C->size() + 1, 'x'));
    auto B = writeObjectToBuffer(*Obj);
    ASSERT_TRUE(bool(B)) << toString(B.takeError());
    EXPECT_LT((*B)->getBufferSize(), size_t(1) << 20);
    auto Back = readObject((*B)->getMemBufferRef());
    ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
    const Section *RC = (*Back)->findSection(".comment");
    ASSERT_TRUE(RC);
    EXPECT_EQ(RC->AddrAlign, Align);
    ASSERT_TRUE(RC->Orig.has_value());
    EXPECT_EQ(RC->Orig->Offset % 0x1000, 0u);
  }
}

TEST_F(ObjectTest, NewSegmentBelowLoadedMemoryIsAnError) {
  addLoadedCode(*Obj, 0x1000, 0x100);
  EXPECT_EQ(errorOf(writeObjectToBuffer(*Obj)),
            "new segment at address 0x1000 would overlap loaded memory "
            "ending at 0x1018");
}

TEST_F(ObjectTest, ChangingLoadedSymbolTableIsAnError) {
  Symbol G;
  G.Name = "x";
  G.Binding = STB_GLOBAL;
  Obj->dynsym()->add(G);
  EXPECT_EQ(errorOf(writeObjectToBuffer(*Obj)),
            "cannot change allocated symbol table '.dynsym' without moving "
            "loaded bytes");
}

/// The input with the section header table moved to an odd offset.
std::vector<uint8_t> misalignShdrs(const std::vector<uint8_t> &In,
                                   unsigned Shift) {
  uint64_t ShOff = read64(In, 40);
  EXPECT_EQ(ShOff + read16(In, 60) * sizeof(ELFT::Shdr), In.size());
  std::vector<uint8_t> Out(In);
  Out.insert(Out.begin() + ShOff, Shift, 0);
  support::endian::write64le(Out.data() + 40, ShOff + Shift);
  return Out;
}

TEST_F(ObjectTest, MisalignedSectionHeaderTableIsReadAndRoundTrips) {
  std::vector<uint8_t> Odd = misalignShdrs(Input, 3);
  std::unique_ptr<Object> O = read(Odd);
  ASSERT_TRUE(O);
  EXPECT_EQ(O->inputTables().ShOff % 8, 3u);
  ASSERT_EQ(O->sections().size(), 10u);
  EXPECT_TRUE(O->symtab()->find("k.kd"));
  // LLVM 22's ELFFile (byte-aligned Elf_Shdr) reads it too; both agree.
  Expected<object::ELFFile<ELFT>> EF =
      object::ELFFile<ELFT>::create(toStringRef(Odd));
  ASSERT_TRUE(ok(EF));
  auto Secs = EF->sections();
  ASSERT_TRUE(ok(Secs));
  ASSERT_EQ(Secs->size(), 10u);
  for (unsigned I = 1; I < 10; ++I) {
    auto Name = EF->getSectionName((*Secs)[I]);
    ASSERT_TRUE(ok(Name));
    EXPECT_EQ(Name->str(), O->sections()[I]->Name);
    EXPECT_EQ((*Secs)[I].sh_offset, O->sections()[I]->Orig->Offset);
  }
  // Written back unchanged: repairing it is RelayoutSectionHeaders' job.
  EXPECT_EQ(write(*O), Odd);
}

TEST_F(ObjectTest, RelayoutSectionHeadersAlignsTheTable) {
  std::vector<uint8_t> Odd = misalignShdrs(Input, 5);
  std::unique_ptr<Object> O = read(Odd);
  ASSERT_TRUE(O);
  O->requestSectionHeadersLast();
  std::vector<uint8_t> Out = write(*O);
  uint64_t ShOff = read64(Out, 40);
  EXPECT_EQ(ShOff % 8, 0u);
  EXPECT_EQ(ShOff + 10 * sizeof(ELFT::Shdr), Out.size());
  // Loaded bytes are untouched.
  expectLoadedBytesKept(*O, Odd, Out);
  // An independent reader sees every section with its old contents.
  Expected<object::ELFFile<ELFT>> EF =
      object::ELFFile<ELFT>::create(toStringRef(Out));
  ASSERT_TRUE(ok(EF));
  auto Secs = EF->sections();
  ASSERT_TRUE(ok(Secs));
  ASSERT_EQ(Secs->size(), 10u);
  for (unsigned I = 1; I < 10; ++I) {
    if ((*Secs)[I].sh_type == SHT_NOBITS)
      continue;
    auto C = EF->getSectionContents((*Secs)[I]);
    ASSERT_TRUE(ok(C));
    EXPECT_EQ(*C, O->sections()[I]->contents()) << "section " << I;
  }
}

TEST(ObjectReaderTest, RejectsSectionAddressThatDisagreesWithSegment) {
  std::vector<uint8_t> Bytes = yamlToBytes(KernelYAML);
  std::unique_ptr<Object> Good = read(Bytes);
  ASSERT_TRUE(Good);
  // sh_addr of .text (section 5) says 0x1100; its PT_LOAD puts it at 0x1000.
  uint64_t ShOff = read64(Bytes, 40);
  support::endian::write64le(Bytes.data() + ShOff + 5 * 64 + 16, 0x1100);
  Expected<std::unique_ptr<Object>> Bad =
      readObject(MemoryBufferRef(toStringRef(Bytes), "bad.co"));
  EXPECT_EQ(errorOf(std::move(Bad)),
            "section 5 ('.text') at offset 0x1000 has address 0x1100, but "
            "program header 2 loads that offset at 0x1000");
}

} // namespace
