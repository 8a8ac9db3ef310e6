//===- lib/Object/Reader.cpp - Validating ELF reader ----------------------===//
//
// Reads ELF64 little-endian EM_AMDGPU objects (and EM_X86_64 hosts when
// ReadOptions::AllowHost is set) into the model. Nothing from the file is
// trusted: every position is checked against the file size with
// overflow-safe arithmetic before any byte is read.
//
//===----------------------------------------------------------------------===//

#include "hotswap/Object/Reader.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;
using namespace llvm::ELF;
using namespace llvm::support;

namespace hotswap {

namespace {

template <typename T> T rd(ArrayRef<uint8_t> B, uint64_t Off) {
  return endian::read<T, llvm::endianness::little>(B.data() + Off);
}

Error err(const Twine &Msg) { return makeError(Msg); }

/// [Off, Off+Size) inside a file of FileSize bytes, without overflow.
bool inFile(uint64_t Off, uint64_t Size, uint64_t FileSize) {
  return Off <= FileSize && Size <= FileSize - Off;
}
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
  Error readHeader();
  Error readSegments();
  Error readSections();
  Error readSymbolTable(Section &Sec);
  std::string secName(uint32_t I) const;

  ArrayRef<uint8_t> B;
  Object &Obj;
  ReadOptions Opts;
  uint64_t PhOff = 0, ShOff = 0;
  uint16_t PhNum = 0, ShNum = 0, ShStrNdx = 0;
  std::vector<uint32_t> RawLinks;
};

std::string Reader::secName(uint32_t I) const {
  std::string S = "section " + std::to_string(I);
  if (I < Obj.Sections.size() && !Obj.Sections[I]->Name.empty())
    S += " ('" + Obj.Sections[I]->Name + "')";
  return S;
}

/// Containers people mistake for code objects: say what the file is.
static std::optional<std::string> describeContainer(ArrayRef<uint8_t> B) {
  StringRef S(reinterpret_cast<const char *>(B.data()), B.size());
  if (S.starts_with("__CLANG_OFFLOAD_BUNDLE__"))
    return std::string(
        "this is a clang offload bundle, not a code object; extract one with "
        "'clang-offload-bundler --unbundle --type=o --input=FILE "
        "--targets=hipv4-amdgcn-amd-amdhsa--gfxNNN --output=OUT'");
  if (S.starts_with("CCOB"))
    return std::string(
        "this is a compressed clang offload bundle, not a code object; "
        "extract one with 'clang-offload-bundler --unbundle --type=o ...'");
  return std::nullopt;
}

Error Reader::readHeader() {
  if (std::optional<std::string> C = describeContainer(B))
    return err(*C);
  if (B.size() < sizeof(Elf64_Ehdr)) {
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
  H.Type = rd<uint16_t>(B, 16);
  H.Machine = rd<uint16_t>(B, 18);
  H.Version = rd<uint32_t>(B, 20);
  H.Entry = rd<uint64_t>(B, 24);
  PhOff = rd<uint64_t>(B, 32);
  ShOff = rd<uint64_t>(B, 40);
  H.Flags = rd<uint32_t>(B, 48);
  H.EhSize = rd<uint16_t>(B, 52);
  H.PhEntSize = rd<uint16_t>(B, 54);
  PhNum = rd<uint16_t>(B, 56);
  H.ShEntSize = rd<uint16_t>(B, 58);
  ShNum = rd<uint16_t>(B, 60);
  ShStrNdx = rd<uint16_t>(B, 62);

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
  if (H.EhSize != sizeof(Elf64_Ehdr))
    return err("e_ehsize is " + Twine(H.EhSize) + ", expected 64");
  if (PhNum == PN_XNUM)
    return err("extended program header numbering (PN_XNUM) is not "
               "supported");
  if (PhNum != 0 && H.PhEntSize != sizeof(Elf64_Phdr))
    return err("e_phentsize is " + Twine(H.PhEntSize) + ", expected 56");
  if (ShOff != 0 && ShNum == 0)
    return err("extended section numbering (e_shnum 0 with e_shoff " +
               hex(ShOff) + ") is not supported");
  if (ShNum != 0 && H.ShEntSize != sizeof(Elf64_Shdr))
    return err("e_shentsize is " + Twine(H.ShEntSize) + ", expected 64");
  if (ShStrNdx == SHN_XINDEX)
    return err("extended section numbering (e_shstrndx SHN_XINDEX) is not "
               "supported");
  if (ShNum != 0 && ShStrNdx >= ShNum)
    return err("e_shstrndx " + Twine(ShStrNdx) + " is out of range (" +
               Twine(ShNum) + " sections)");
  if (PhNum != 0 &&
      !inFile(PhOff, uint64_t(PhNum) * sizeof(Elf64_Phdr), B.size()))
    return err("program header table at offset " + hex(PhOff) + " with " +
               Twine(PhNum) + " entries extends past end of file (size " +
               hex(B.size()) + ")");
  if (ShNum != 0 &&
      !inFile(ShOff, uint64_t(ShNum) * sizeof(Elf64_Shdr), B.size()))
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
    uint64_t O = PhOff + uint64_t(I) * sizeof(Elf64_Phdr);
    auto P = std::make_unique<Segment>();
    P->Type = rd<uint32_t>(B, O + 0);
    P->Flags = rd<uint32_t>(B, O + 4);
    P->Offset = rd<uint64_t>(B, O + 8);
    P->VAddr = rd<uint64_t>(B, O + 16);
    P->PAddr = rd<uint64_t>(B, O + 24);
    P->FileSize = rd<uint64_t>(B, O + 32);
    P->MemSize = rd<uint64_t>(B, O + 40);
    P->Align = rd<uint64_t>(B, O + 48);
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

Error Reader::readSections() {
  if (ShNum == 0)
    return Error::success();
  struct Raw {
    uint32_t Name, Type;
    uint64_t Flags, Addr, Offset, Size;
    uint32_t Link, Info;
    uint64_t Align, EntSize;
  };
  std::vector<Raw> Hdrs(ShNum);
  for (unsigned I = 0; I != ShNum; ++I) {
    uint64_t O = ShOff + uint64_t(I) * sizeof(Elf64_Shdr);
    Raw &R = Hdrs[I];
    R.Name = rd<uint32_t>(B, O + 0);
    R.Type = rd<uint32_t>(B, O + 4);
    R.Flags = rd<uint64_t>(B, O + 8);
    R.Addr = rd<uint64_t>(B, O + 16);
    R.Offset = rd<uint64_t>(B, O + 24);
    R.Size = rd<uint64_t>(B, O + 32);
    R.Link = rd<uint32_t>(B, O + 40);
    R.Info = rd<uint32_t>(B, O + 44);
    R.Align = rd<uint64_t>(B, O + 48);
    R.EntSize = rd<uint64_t>(B, O + 56);
  }
  if (Hdrs[0].Type != SHT_NULL)
    return err("section 0 is not SHT_NULL");

  // Section names first, so that later messages can name sections.
  const Raw &SR = Hdrs[ShStrNdx];
  ArrayRef<uint8_t> Names;
  if (ShStrNdx != 0) {
    if (SR.Type != SHT_STRTAB)
      return err("section name string table (section " + Twine(ShStrNdx) +
                 ") is not SHT_STRTAB");
    if (!inFile(SR.Offset, SR.Size, B.size()))
      return err("section name string table (section " + Twine(ShStrNdx) +
                 ") at offset " + hex(SR.Offset) + " with size " +
                 hex(SR.Size) + " extends past end of file (size " +
                 hex(B.size()) + ")");
    Names = B.slice(SR.Offset, SR.Size);
    if (Names.empty() || Names.back() != 0)
      return err("section name string table (section " + Twine(ShStrNdx) +
                 ") is empty or not NUL-terminated");
  }

  for (unsigned I = 0; I != ShNum; ++I) {
    const Raw &R = Hdrs[I];
    auto S = std::make_unique<Section>();
    if (R.Name != 0 && ShStrNdx == 0)
      return err("section " + Twine(I) + " has name offset " + hex(R.Name) +
                 " but there is no section name string table (e_shstrndx "
                 "is 0)");
    if (ShStrNdx != 0) {
      if (R.Name >= Names.size())
        return err("section " + Twine(I) + " name offset " + hex(R.Name) +
                   " is past the end of the section name string table "
                   "(size " +
                   hex(Names.size()) + ")");
      S->Name = reinterpret_cast<const char *>(Names.data() + R.Name);
    }
    S->Type = R.Type;
    S->Flags = R.Flags;
    S->Addr = R.Addr;
    S->AddrAlign = R.Align;
    S->EntSize = R.EntSize;
    S->Info = R.Info;
    S->Orig = Section::Origin{R.Name, R.Offset, R.Size, R.Link};
    S->Index = I;
    Obj.Sections.push_back(std::move(S));
  }

  for (unsigned I = 1; I != ShNum; ++I) {
    const Raw &R = Hdrs[I];
    Section &S = *Obj.Sections[I];
    if (R.Align > 1 && !isPowerOf2_64(R.Align))
      return err(secName(I) + " alignment " + hex(R.Align) +
                 " is not a power of two");
    if (R.Type == SHT_NOBITS) {
      S.NoBitsSize = R.Size;
    } else {
      if (!inFile(R.Offset, R.Size, B.size()))
        return err(secName(I) + " at offset " + hex(R.Offset) + " with size " +
                   hex(R.Size) + " extends past end of file (size " +
                   hex(B.size()) + ")");
      S.Borrowed = B.slice(R.Offset, R.Size);
    }
    if (S.isAlloc()) {
      if (R.Size > UINT64_MAX - R.Addr)
        return err(secName(I) + " address range " + hex(R.Addr) + " + " +
                   hex(R.Size) + " overflows");
    }
    if (R.Link != 0) {
      if (R.Link >= ShNum)
        return err(secName(I) + " sh_link " + Twine(R.Link) +
                   " is out of range (" + Twine(ShNum) + " sections)");
      S.Link = Obj.Sections[R.Link].get();
    }
  }
  Obj.SectionNames = ShStrNdx ? Obj.Sections[ShStrNdx].get() : nullptr;

  // Loaded sections must lie inside a loaded segment, entirely.
  for (unsigned I = 1; I != ShNum; ++I) {
    Section &S = *Obj.Sections[I];
    if (!S.isAlloc() || S.isNoBits() || S.size() == 0 || Obj.Segments.empty())
      continue;
    bool Covered = false, Partial = false;
    for (size_t PI = 0; PI != Obj.Segments.size(); ++PI) {
      const Segment *P = Obj.Segments[PI].get();
      if (P->Type != PT_LOAD)
        continue;
      uint64_t SOff = S.Orig->Offset, SEnd = SOff + S.size();
      uint64_t POff = P->Offset, PEnd = P->Offset + P->FileSize;
      if (SOff >= POff && SEnd <= PEnd) {
        // The loader puts these bytes at p_vaddr + (offset - p_offset); an
        // sh_addr that disagrees would make every address lookup read the
        // wrong bytes. No overflow: SOff - POff < p_filesz <= p_memsz.
        uint64_t Mapped = P->VAddr + (SOff - POff);
        if (S.Addr != Mapped)
          return err(secName(I) + " at offset " + hex(SOff) + " has address " +
                     hex(S.Addr) + ", but program header " + Twine(PI) +
                     " loads that offset at " + hex(Mapped));
        Covered = true;
        break;
      }
      if (SOff < PEnd && POff < SEnd)
        Partial = true;
    }
    if (Partial && !Covered)
      return err(secName(I) + " at offset " + hex(S.Orig->Offset) +
                 " straddles the boundary of a loaded segment");
  }

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

Error Reader::readSymbolTable(Section &Sec) {
  uint32_t I = Sec.index();
  if (Sec.EntSize != sizeof(Elf64_Sym))
    return err(secName(I) + " has sh_entsize " + Twine(Sec.EntSize) +
               ", expected 24");
  if (Sec.size() % sizeof(Elf64_Sym) != 0)
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
  uint64_t Count = Sec.size() / sizeof(Elf64_Sym);
  if (Sec.Info > Count)
    return err(secName(I) + " sh_info " + Twine(Sec.Info) +
               " is larger than the number of symbols (" + Twine(Count) + ")");
  auto T = std::make_unique<SymbolTable>(Sec, *Sec.Link);
  ArrayRef<uint8_t> D = Sec.contents();
  T->Symbols.reserve(Count ? Count - 1 : 0);
  for (uint64_t K = 1; K < Count; ++K) {
    uint64_t O = K * sizeof(Elf64_Sym);
    Symbol S;
    uint32_t NameOff = rd<uint32_t>(D, O + 0);
    uint8_t Info = D[O + 4];
    S.Other = D[O + 5];
    uint16_t Shndx = rd<uint16_t>(D, O + 6);
    S.Value = rd<uint64_t>(D, O + 8);
    S.Size = rd<uint64_t>(D, O + 16);
    S.Binding = Info >> 4;
    S.Type = Info & 0xf;
    if (NameOff != 0 || !Str.empty()) {
      if (NameOff >= Str.size())
        return err(secName(I) + " symbol " + Twine(K) + " name offset " +
                   hex(NameOff) +
                   " is past the end of the string table "
                   "(size " +
                   hex(Str.size()) + ")");
      S.Name = reinterpret_cast<const char *>(Str.data() + NameOff);
    }
    S.OrigNameOffset = NameOff;
    if (Shndx == SHN_XINDEX)
      return err(secName(I) + " symbol " + Twine(K) + " ('" + S.Name +
                 "') uses extended section index SHN_XINDEX (not supported)");
    S.Shndx = Shndx;
    if (Shndx != SHN_UNDEF && Shndx < SHN_LORESERVE) {
      if (Shndx >= Obj.Sections.size())
        return err(secName(I) + " symbol " + Twine(K) + " ('" + S.Name +
                   "') section index " + Twine(Shndx) + " is out of range (" +
                   Twine(Obj.Sections.size()) + " sections)");
      S.Sec = Obj.Sections[Shndx].get();
    }
    T->Symbols.push_back(std::move(S));
  }
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
