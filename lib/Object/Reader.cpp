//===- lib/Object/Reader.cpp - Validating ELF reader ----------------------===//
//
// Reads ELF64 little-endian EM_AMDGPU objects (and EM_X86_64 hosts when
// ReadOptions::AllowHost is set) into the model, through LLVM's ELF64LE
// record types (object::ELF64LE::Ehdr, Phdr, Shdr, Sym: little-endian fields
// that may sit at any alignment). Nothing from the file is trusted: every
// position is checked against the file size with overflow-safe arithmetic
// before a record is read, and the work is linear in every count the file
// declares (sections are matched to PT_LOADs by binary search; the bytes
// of all names together are bounded by the file's size).
//
//===----------------------------------------------------------------------===//

#include "hotswap/Object/Reader.h"
#include "hotswap/Object/BundleMagic.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/Record.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;
using namespace llvm::ELF;

namespace hotswap {

namespace {

using Elf_Ehdr = object::ELF64LE::Ehdr;
using Elf_Phdr = object::ELF64LE::Phdr;
using Elf_Shdr = object::ELF64LE::Shdr;
using Elf_Sym = object::ELF64LE::Sym;

Error err(const Twine &Msg) { return makeError(Msg); }

/// [Off, Off+Size) inside a file of FileSize bytes, without overflow.
bool inFile(uint64_t Off, uint64_t Size, uint64_t FileSize) {
  return Off <= FileSize && Size <= FileSize - Off;
}

/// Names are measured (and section names copied) into the model: however a
/// string table makes names share bytes (N names of N bytes, each a suffix
/// of the next), their total stays within a multiple of the file's size.
constexpr uint64_t NameBytesPerFileByte = 4;
constexpr uint64_t NameBytesAlways = 1 << 20;

} // namespace

class Reader {
public:
  Reader(ArrayRef<uint8_t> Bytes, Object &Obj, const ReadOptions &Opts)
      : B(Bytes), Obj(Obj), Opts(Opts) {
    Obj.Input = Bytes;
  }
  Error read();
  /// Makes \p Obj keep the buffer its bytes come from alive.
  static void adopt(Object &Obj, std::unique_ptr<MemoryBuffer> Buffer) {
    Obj.OwnedInput = std::move(Buffer);
  }

private:
  Error readIdent();
  Error readHeader();
  Error checkHeaderTables();
  Error readSegments();
  Error checkLoadsDisjoint() const;
  Error readSections();
  Error readSectionNames(ArrayRef<uint8_t> &Names) const;
  Error createSections(ArrayRef<uint8_t> Names);
  Error checkSectionContents();
  Error checkLoadedSections() const;
  Error checkLoadedSection(const Section &S,
                           ArrayRef<const Segment *> Loads) const;
  Error readSymbolTables();
  Error readSymbolTable(Section &Sec);
  Error checkPartition(const Section &Sec, SymbolTable &T) const;
  Error chargeName(size_t Size);
  std::string secName(uint32_t I) const;

  ArrayRef<uint8_t> B;
  Object &Obj;
  ReadOptions Opts;
  uint64_t PhOff = 0, ShOff = 0;
  uint16_t PhNum = 0, ShNum = 0, ShStrNdx = 0;
  uint64_t NameBytes = 0;
};

std::string Reader::secName(uint32_t I) const {
  std::string S = "section " + std::to_string(I);
  if (I < Obj.Sections.size() && !Obj.Sections[I]->Name.empty())
    S += " ('" + Obj.Sections[I]->Name + "')";
  return S;
}

Error Reader::chargeName(size_t Size) {
  NameBytes += Size;
  const uint64_t Limit = NameBytesAlways + NameBytesPerFileByte * B.size();
  if (NameBytes <= Limit)
    return Error::success();
  return err("section and symbol names take more than " + hex(Limit) +
             " bytes (4 times the file's size): its string tables make "
             "names overlap");
}

Error Reader::readIdent() {
  StringRef S(reinterpret_cast<const char *>(B.data()), B.size());
  // Containers that hold code objects (a caller of readObject may mistake
  // them for one; hotswap-opt and runPipeline read them as they are).
  if (startsAsBundle(S))
    return err("this is a clang offload bundle, not a single code object; "
               "runPipeline (hotswap-opt) rewrites bundles as they are");
  if (B.size() < sizeof(Elf_Ehdr)) {
    if (B.size() >= 4 && memcmp(B.data(), ElfMagic, 4) != 0)
      return err("not an ELF file (bad magic)");
    return err("file is too small for an ELF header (" + Twine(B.size()) +
               " bytes, need 64)");
  }
  if (memcmp(B.data(), ElfMagic, 4) != 0)
    return err("not an ELF file (bad magic)");
  FileHeader &H = Obj.Header;
  std::copy_n(B.begin(), EI_NIDENT, H.Ident.begin());
  if (H.Ident[EI_CLASS] != ELFCLASS64) {
    if (H.Ident[EI_CLASS] != ELFCLASS32)
      return err("invalid ELF class " + Twine(unsigned(H.Ident[EI_CLASS])));
    return err(Opts.AllowHost
                   ? "32-bit ELF is not supported (a host binary must be ELF64 "
                     "little-endian x86-64)"
                   : "32-bit ELF is not an AMDGPU HSA code object (r600 is not "
                     "supported)");
  }
  if (H.Ident[EI_DATA] != ELFDATA2LSB)
    return err("ELF data encoding is not little-endian");
  if (H.Ident[EI_VERSION] != EV_CURRENT)
    return err("unsupported ELF identification version " +
               Twine(unsigned(H.Ident[EI_VERSION])));
  return Error::success();
}

Error Reader::readHeader() {
  if (Error E = readIdent())
    return E;
  const Elf_Ehdr &E = recordAt<Elf_Ehdr>(B, 0);
  FileHeader &H = Obj.Header;
  H.Type = E.e_type;
  H.Machine = E.e_machine;
  H.Version = E.e_version;
  H.Entry = E.e_entry;
  H.Flags = E.e_flags;
  H.EhSize = E.e_ehsize;
  H.PhEntSize = E.e_phentsize;
  H.ShEntSize = E.e_shentsize;
  PhOff = E.e_phoff;
  ShOff = E.e_shoff;
  PhNum = E.e_phnum;
  ShNum = E.e_shnum;
  ShStrNdx = E.e_shstrndx;

  if (Opts.AllowHost && H.Machine != EM_AMDGPU && H.Machine != EM_X86_64)
    return err("e_machine is " + Twine(H.Machine) +
               ", neither EM_X86_64 (62) nor EM_AMDGPU (224)");
  if (H.Machine != EM_AMDGPU && !(Opts.AllowHost && H.Machine == EM_X86_64))
    return err("e_machine is " + Twine(H.Machine) + ", not EM_AMDGPU (224)" +
               (H.Machine == EM_X86_64
                    ? Twine("; for a host binary, extract its device code "
                            "objects with 'llvm-objdump --offloading'")
                    : Twine("")));
  if (H.Version != EV_CURRENT)
    return err("unsupported e_version " + Twine(H.Version));
  if (H.Type != ET_DYN && H.Type != ET_REL && H.Type != ET_EXEC)
    return err("unsupported e_type " + Twine(H.Type) +
               " (expected ET_REL, ET_EXEC or ET_DYN)");
  if (H.EhSize != sizeof(Elf_Ehdr))
    return err("e_ehsize is " + Twine(H.EhSize) + ", expected 64");
  return checkHeaderTables();
}

Error Reader::checkHeaderTables() {
  const FileHeader &H = Obj.Header;
  if (PhNum == PN_XNUM)
    return err("extended program header numbering (PN_XNUM) is not "
               "supported");
  if (PhNum != 0 && H.PhEntSize != sizeof(Elf_Phdr))
    return err("e_phentsize is " + Twine(H.PhEntSize) + ", expected 56");
  if (ShOff != 0 && ShNum == 0)
    return err("extended section numbering (e_shnum 0 with e_shoff " +
               hex(ShOff) + ") is not supported");
  if (ShNum != 0 && H.ShEntSize != sizeof(Elf_Shdr))
    return err("e_shentsize is " + Twine(H.ShEntSize) + ", expected 64");
  if (ShStrNdx == SHN_XINDEX)
    return err("extended section numbering (e_shstrndx SHN_XINDEX) is not "
               "supported");
  if (ShNum != 0 && ShStrNdx >= ShNum)
    return err("e_shstrndx " + Twine(ShStrNdx) + " is out of range (" +
               Twine(ShNum) + " sections)");
  if (PhNum != 0 &&
      !inFile(PhOff, uint64_t(PhNum) * sizeof(Elf_Phdr), B.size()))
    return err("program header table at offset " + hex(PhOff) + " with " +
               Twine(PhNum) + " entries extends past end of file (size " +
               hex(B.size()) + ")");
  if (ShNum != 0 &&
      !inFile(ShOff, uint64_t(ShNum) * sizeof(Elf_Shdr), B.size()))
    return err("section header table at offset " + hex(ShOff) + " with " +
               Twine(ShNum) + " entries extends past end of file (size " +
               hex(B.size()) + ")");
  if (ShNum == 0 && H.Type != ET_REL && PhNum == 0)
    return err("object has neither program nor section headers");
  Obj.InTables = InputTables{PhOff, ShOff, PhNum, ShNum};
  return Error::success();
}

Error Reader::readSegments() {
  for (unsigned I = 0; I != PhNum; ++I) {
    const Elf_Phdr &R = recordAt<Elf_Phdr>(B, PhOff + I * sizeof(Elf_Phdr));
    auto P = std::make_unique<Segment>();
    P->Type = R.p_type;
    P->Flags = R.p_flags;
    P->Offset = R.p_offset;
    P->VAddr = R.p_vaddr;
    P->PAddr = R.p_paddr;
    P->FileSize = R.p_filesz;
    P->MemSize = R.p_memsz;
    P->Align = R.p_align;
    std::string Name = "program header " + std::to_string(I);
    if (!inFile(P->Offset, P->FileSize, B.size()))
      return err(Name + " at offset " + hex(P->Offset) + " with file size " +
                 hex(P->FileSize) + " extends past end of file (size " +
                 hex(B.size()) + ")");
    if (P->Type == PT_LOAD) {
      if (P->FileSize > P->MemSize)
        return err(Name + " (PT_LOAD) has p_filesz " + hex(P->FileSize) +
                   " larger than p_memsz " + hex(P->MemSize));
      if (P->MemSize > UINT64_MAX - P->VAddr)
        return err(Name + " (PT_LOAD) address range " + hex(P->VAddr) + " + " +
                   hex(P->MemSize) + " overflows");
      if (P->Align > 1) {
        if (!isPowerOf2_64(P->Align))
          return err(Name + " (PT_LOAD) alignment " + hex(P->Align) +
                     " is not a power of two");
        if (P->Offset % P->Align != P->VAddr % P->Align)
          return err(Name + " (PT_LOAD) offset " + hex(P->Offset) +
                     " and address " + hex(P->VAddr) +
                     " are not congruent modulo the alignment " +
                     hex(P->Align));
      }
    }
    Obj.Segments.push_back(std::move(P));
  }
  return checkLoadsDisjoint();
}

Error Reader::checkLoadsDisjoint() const {
  // Loaded segments must not overlap in memory.
  std::vector<const Segment *> Loads;
  for (const auto &P : Obj.Segments)
    if (P->Type == PT_LOAD && P->MemSize != 0)
      Loads.push_back(P.get());
  llvm::stable_sort(Loads, [](const Segment *A, const Segment *B) {
    return A->VAddr < B->VAddr;
  });
  for (size_t I = 1; I < Loads.size(); ++I)
    if (Loads[I - 1]->VAddr + Loads[I - 1]->MemSize > Loads[I]->VAddr)
      return err("loaded segments overlap: [" + hex(Loads[I - 1]->VAddr) +
                 ", " + hex(Loads[I - 1]->VAddr + Loads[I - 1]->MemSize) +
                 ") and [" + hex(Loads[I]->VAddr) + ", " +
                 hex(Loads[I]->VAddr + Loads[I]->MemSize) + ")");
  return Error::success();
}

Error Reader::readSectionNames(ArrayRef<uint8_t> &Names) const {
  if (ShStrNdx == 0)
    return Error::success();
  const Elf_Shdr &SR =
      recordAt<Elf_Shdr>(B, ShOff + ShStrNdx * sizeof(Elf_Shdr));
  const std::string Which =
      "section name string table (section " + std::to_string(ShStrNdx) + ")";
  if (SR.sh_type != SHT_STRTAB)
    return err(Which + " is not SHT_STRTAB");
  if (!inFile(SR.sh_offset, SR.sh_size, B.size()))
    return err(Which + " at offset " + hex(SR.sh_offset) + " with size " +
               hex(SR.sh_size) + " extends past end of file (size " +
               hex(B.size()) + ")");
  Names = B.slice(SR.sh_offset, SR.sh_size);
  if (Names.empty() || Names.back() != 0)
    return err(Which + " is empty or not NUL-terminated");
  return Error::success();
}

Error Reader::createSections(ArrayRef<uint8_t> Names) {
  for (unsigned I = 0; I != ShNum; ++I) {
    const Elf_Shdr &R = recordAt<Elf_Shdr>(B, ShOff + I * sizeof(Elf_Shdr));
    if (I == 0 && R.sh_type != SHT_NULL)
      return err("section 0 is not SHT_NULL");
    auto S = std::make_unique<Section>();
    if (R.sh_name != 0 && ShStrNdx == 0)
      return err("section " + Twine(I) + " has name offset " + hex(R.sh_name) +
                 " but there is no section name string table (e_shstrndx "
                 "is 0)");
    if (ShStrNdx != 0) {
      if (R.sh_name >= Names.size())
        return err("section " + Twine(I) + " name offset " + hex(R.sh_name) +
                   " is past the end of the section name string table "
                   "(size " +
                   hex(Names.size()) + ")");
      S->Name = reinterpret_cast<const char *>(Names.data() + R.sh_name);
      if (Error E = chargeName(S->Name.size()))
        return E;
    }
    S->Type = R.sh_type;
    S->Flags = R.sh_flags;
    S->Addr = R.sh_addr;
    S->AddrAlign = R.sh_addralign;
    S->EntSize = R.sh_entsize;
    S->Info = R.sh_info;
    S->Orig = Section::Origin{R.sh_name, R.sh_offset, R.sh_size, R.sh_link};
    S->Index = I;
    Obj.Sections.push_back(std::move(S));
  }
  return Error::success();
}

Error Reader::checkSectionContents() {
  for (unsigned I = 1; I != ShNum; ++I) {
    Section &S = *Obj.Sections[I];
    const Section::Origin &R = *S.Orig;
    if (S.AddrAlign > 1 && !isPowerOf2_64(S.AddrAlign))
      return err(secName(I) + " alignment " + hex(S.AddrAlign) +
                 " is not a power of two");
    if (S.Type == SHT_NOBITS) {
      S.NoBitsSize = R.Size;
    } else {
      if (!inFile(R.Offset, R.Size, B.size()))
        return err(secName(I) + " at offset " + hex(R.Offset) + " with size " +
                   hex(R.Size) + " extends past end of file (size " +
                   hex(B.size()) + ")");
      S.Borrowed = B.slice(R.Offset, R.Size);
    }
    if (S.isAlloc() && R.Size > UINT64_MAX - S.Addr)
      return err(secName(I) + " address range " + hex(S.Addr) + " + " +
                 hex(R.Size) + " overflows");
    if (R.RawLink != 0) {
      if (R.RawLink >= ShNum)
        return err(secName(I) + " sh_link " + Twine(R.RawLink) +
                   " is out of range (" + Twine(ShNum) + " sections)");
      S.Link = Obj.Sections[R.RawLink].get();
    }
  }
  return Error::success();
}

/// Loaded sections lie inside a PT_LOAD: in its memory, and for sections
/// with file contents at the file offset the loader maps to their address,
/// inside its file part. (TLS NOBITS sections describe a template, not
/// memory of their own.)
Error Reader::checkLoadedSection(const Section &S,
                                 ArrayRef<const Segment *> Loads) const {
  const uint64_t Addr = S.Addr, Size = S.size();
  // The last PT_LOAD starting at or below Addr (memory ranges are disjoint).
  auto It = llvm::upper_bound(
      Loads, Addr, [](uint64_t A, const Segment *P) { return A < P->VAddr; });
  const Segment *P = It == Loads.begin() ? nullptr : *std::prev(It);
  const bool InMemory = P && Addr - P->VAddr < P->MemSize &&
                        Size <= P->MemSize - (Addr - P->VAddr);
  const std::string Name = secName(S.index());
  auto IndexOf = [&](const Segment *Q) {
    return llvm::find_if(Obj.Segments,
                         [&](const auto &X) { return X.get() == Q; }) -
           Obj.Segments.begin();
  };
  if (!InMemory && !S.isNoBits()) {
    // Its bytes may be loaded, somewhere else than its address says.
    const uint64_t Off = S.Orig->Offset;
    for (const Segment *Q : Loads)
      if (Off >= Q->Offset && Off - Q->Offset < Q->FileSize)
        return err(Name + " at offset " + hex(Off) + " has address " +
                   hex(Addr) + ", but program header " + Twine(IndexOf(Q)) +
                   " loads that offset at " +
                   hex(Q->VAddr + (Off - Q->Offset)));
  }
  if (!InMemory) {
    if ((P && Addr - P->VAddr < P->MemSize) ||
        (It != Loads.end() && (*It)->VAddr - Addr < Size))
      return err(Name + " at address " + hex(Addr) +
                 " straddles the boundary of a loaded segment");
    return err(Name + " at address " + hex(Addr) +
               " is loaded (SHF_ALLOC) but no PT_LOAD maps it");
  }
  if (S.isNoBits())
    return Error::success();
  // The loader puts file offset O at p_vaddr + (O - p_offset).
  const uint64_t Off = S.Orig->Offset;
  if (Off - P->Offset != Addr - P->VAddr || Off < P->Offset) {
    const size_t PI = IndexOf(P);
    if (Off >= P->Offset && Off - P->Offset < P->FileSize)
      return err(Name + " at offset " + hex(Off) + " has address " + hex(Addr) +
                 ", but program header " + Twine(PI) +
                 " loads that offset at " + hex(P->VAddr + (Off - P->Offset)));
    return err(Name + " at offset " + hex(Off) + " and address " + hex(Addr) +
               " is not where program header " + Twine(PI) +
               " loads that address from");
  }
  if (Addr - P->VAddr + Size > P->FileSize)
    return err(Name + " at offset " + hex(Off) +
               " straddles the boundary of a loaded segment");
  return Error::success();
}

Error Reader::checkLoadedSections() const {
  std::vector<const Segment *> Loads;
  for (const auto &P : Obj.Segments)
    if (P->Type == PT_LOAD && P->MemSize != 0)
      Loads.push_back(P.get());
  if (Loads.empty() && Obj.Segments.empty())
    return Error::success(); // nothing is loaded (ET_REL, or no headers)
  llvm::sort(Loads, [](const Segment *A, const Segment *B) {
    return A->VAddr < B->VAddr;
  });
  for (unsigned I = 1; I != ShNum; ++I) {
    const Section &S = *Obj.Sections[I];
    if (!S.isAlloc() || S.size() == 0 || (S.isNoBits() && (S.Flags & SHF_TLS)))
      continue;
    if (Error E = checkLoadedSection(S, Loads))
      return E;
  }
  return Error::success();
}

Error Reader::readSections() {
  if (ShNum == 0)
    return Error::success();
  ArrayRef<uint8_t> Names;
  if (Error E = readSectionNames(Names))
    return E;
  if (Error E = createSections(Names))
    return E;
  if (Error E = checkSectionContents())
    return E;
  Obj.SectionNames = ShStrNdx ? Obj.Sections[ShStrNdx].get() : nullptr;
  if (Error E = checkLoadedSections())
    return E;
  return readSymbolTables();
}

Error Reader::readSymbolTables() {
  int SymTabs = 0, DynSyms = 0;
  for (unsigned I = 1; I != ShNum; ++I) {
    Section &S = *Obj.Sections[I];
    if (S.Type == SHT_SYMTAB_SHNDX)
      return err(secName(I) +
                 ": extended section indices (SHT_SYMTAB_SHNDX) are not "
                 "supported");
    if (S.Type != SHT_SYMTAB && S.Type != SHT_DYNSYM)
      continue;
    if ((S.Type == SHT_SYMTAB ? ++SymTabs : ++DynSyms) > 1)
      return err("more than one " +
                 Twine(S.Type == SHT_SYMTAB ? "SHT_SYMTAB" : "SHT_DYNSYM") +
                 " section");
    if (Error E = readSymbolTable(S))
      return E;
  }
  return Error::success();
}

/// A symbol table must have its locals first and sh_info right, as verify
/// requires of every output. A loaded one (.dynsym) is never rewritten, so
/// it must be so already; a non-loaded one (.symtab) is rewritten
/// partitioned whenever the object is laid out anew, unless a relocation
/// section refers to its symbols by index, which would then be wrong.
Error Reader::checkPartition(const Section &Sec, SymbolTable &T) const {
  std::optional<std::string> Problem;
  std::optional<size_t> FirstGlobal;
  const size_t N = T.inputCount();
  for (size_t I = 0; I < N && !Problem; ++I) {
    const Elf_Sym &R = recordAt<Elf_Sym>(T.InputRecords, I * sizeof(Elf_Sym));
    if (R.getBinding() != STB_LOCAL) {
      if (!FirstGlobal)
        FirstGlobal = I;
    } else if (FirstGlobal) {
      Problem = ("local symbol '" + T.inputSymbol(I).Name + "' (index " +
                 Twine(I + 1) + ") follows a global symbol ('" +
                 T.inputSymbol(*FirstGlobal).Name + "', index " +
                 Twine(*FirstGlobal + 1) + ")")
                    .str();
    }
  }
  T.InputFirstNonLocal = static_cast<uint32_t>(FirstGlobal.value_or(N) + 1);
  const uint32_t First = T.firstNonLocal();
  if (!Problem && Sec.Info != First)
    Problem = "sh_info is " + std::to_string(Sec.Info) +
              " but the first non-local symbol is " + std::to_string(First);
  if (!Problem)
    return Error::success();
  T.InputPartitioned = false;
  if (Sec.isAlloc())
    return err("symbol table '" + Sec.Name + "': " + *Problem);
  for (const auto &R : Obj.Sections)
    if ((R->Type == SHT_RELA || R->Type == SHT_REL) && R->Link == &Sec)
      return err("symbol table '" + Sec.Name + "': " + *Problem + ", and '" +
                 R->Name +
                 "' refers to its symbols by index: it cannot be written "
                 "back partitioned");
  return Error::success();
}

Error Reader::readSymbolTable(Section &Sec) {
  uint32_t I = Sec.index();
  if (Sec.EntSize != sizeof(Elf_Sym))
    return err(secName(I) + " has sh_entsize " + Twine(Sec.EntSize) +
               ", expected 24");
  if (Sec.size() % sizeof(Elf_Sym) != 0)
    return err(secName(I) + " size " + hex(Sec.size()) +
               " is not a multiple of 24");
  if (!Sec.Link || Sec.Link->Type != SHT_STRTAB)
    return err(secName(I) + " sh_link does not name a string table");
  ArrayRef<uint8_t> Str = Sec.Link->contents();
  if (Sec.Link->isNoBits())
    return err(secName(I) + " string table has no file contents");
  if (!Str.empty() && Str.back() != 0)
    return err(secName(Sec.Link->index()) +
               " (string table) is not NUL-terminated");
  uint64_t Count = Sec.size() / sizeof(Elf_Sym);
  if (Sec.Info > Count)
    return err(secName(I) + " sh_info " + Twine(Sec.Info) +
               " is larger than the number of symbols (" + Twine(Count) + ")");
  auto T = std::make_unique<SymbolTable>(Sec, *Sec.Link);
  ArrayRef<uint8_t> D = Sec.contents();
  // Every record is checked here; the table keeps the records and makes a
  // Symbol of one when asked (SymbolTable::inputSymbol).
  for (uint64_t K = 1; K < Count; ++K) {
    const Elf_Sym &R = recordAt<Elf_Sym>(D, K * sizeof(Elf_Sym));
    const uint32_t NameOff = R.st_name;
    StringRef Name;
    if (NameOff != 0 || !Str.empty()) {
      if (NameOff >= Str.size())
        return err(secName(I) + " symbol " + Twine(K) + " name offset " +
                   hex(NameOff) +
                   " is past the end of the string table "
                   "(size " +
                   hex(Str.size()) + ")");
      // NUL-terminated (checked above): the name borrows the input's bytes.
      Name = StringRef(reinterpret_cast<const char *>(Str.data() + NameOff));
      if (Error E = chargeName(Name.size()))
        return E;
    }
    const uint16_t Shndx = R.st_shndx;
    if (Shndx == SHN_XINDEX)
      return err(secName(I) + " symbol " + Twine(K) + " ('" + Name +
                 "') uses extended section index SHN_XINDEX (not supported)");
    if (Shndx != SHN_UNDEF && Shndx < SHN_LORESERVE &&
        Shndx >= Obj.Sections.size())
      return err(secName(I) + " symbol " + Twine(K) + " ('" + Name +
                 "') section index " + Twine(Shndx) + " is out of range (" +
                 Twine(Obj.Sections.size()) + " sections)");
  }
  T->InputRecords = D.slice(std::min<uint64_t>(Count, 1) * sizeof(Elf_Sym),
                            (Count ? Count - 1 : 0) * sizeof(Elf_Sym));
  T->InputStr = Str;
  T->Owner = &Obj;
  T->InputSections.reserve(Obj.Sections.size());
  for (const auto &S : Obj.Sections)
    T->InputSections.push_back(S.get());
  T->Materialized = false;
  T->InputCount = Count ? Count - 1 : 0;
  if (Error E = checkPartition(Sec, *T))
    return E;
  Sec.Symbols = T.get();
  Obj.SymbolTables.push_back(std::move(T));
  return Error::success();
}

Error Reader::read() {
  if (Error E = readHeader())
    return E;
  if (Error E = readSegments())
    return E;
  return readSections();
}

Expected<std::unique_ptr<Object>> readObject(MemoryBufferRef Buffer,
                                             const ReadOptions &Opts) {
  auto Obj = std::make_unique<Object>();
  ArrayRef<uint8_t> Bytes(
      reinterpret_cast<const uint8_t *>(Buffer.getBufferStart()),
      Buffer.getBufferSize());
  Reader R(Bytes, *Obj, Opts);
  if (Error E = R.read())
    return std::move(E);
  return std::move(Obj);
}

Expected<std::unique_ptr<Object>>
readObject(std::unique_ptr<MemoryBuffer> Buffer, const ReadOptions &Opts) {
  auto ObjOrErr = readObject(Buffer->getMemBufferRef(), Opts);
  if (!ObjOrErr)
    return ObjOrErr.takeError();
  Reader::adopt(**ObjOrErr, std::move(Buffer));
  return ObjOrErr;
}

} // namespace hotswap
