//===- lib/Object/Writer.cpp - Serialization ------------------------------===//

#include "hotswap/Object/Writer.h"

#include "hotswap/Support/Error.h"

#include "llvm/Object/ELFTypes.h"

#include <cassert>
#include <cstring>

using namespace llvm;
using namespace llvm::ELF;

namespace hotswap {

using Elf_Ehdr = object::ELF64LE::Ehdr;
using Elf_Phdr = object::ELF64LE::Phdr;
using Elf_Shdr = object::ELF64LE::Shdr;

/// Bytes of the ELF header, the program header table and the section
/// header table.
static uint64_t headerBytes(const Object &Obj, const Layout &L) {
  return sizeof(Elf_Ehdr) + L.Segments.size() * sizeof(Elf_Phdr) +
         Obj.sections().size() * sizeof(Elf_Shdr);
}

/// The ELF header.
static void renderFileHeader(const Object &Obj, const Layout &L, Elf_Ehdr &E) {
  const FileHeader &H = Obj.Header;
  memcpy(E.e_ident, H.Ident.data(), EI_NIDENT);
  E.e_type = H.Type;
  E.e_machine = H.Machine;
  E.e_version = H.Version;
  E.e_entry = H.Entry;
  E.e_phoff = L.PhOff;
  E.e_shoff = L.ShOff;
  E.e_flags = H.Flags;
  E.e_ehsize = H.EhSize;
  E.e_phentsize =
      Obj.segments().empty() && !H.PhEntSize
          ? 0
          : (H.PhEntSize ? H.PhEntSize : uint16_t(sizeof(Elf_Phdr)));
  E.e_phnum = static_cast<uint16_t>(L.Segments.size());
  E.e_shentsize =
      Obj.sections().empty() && !H.ShEntSize
          ? 0
          : (H.ShEntSize ? H.ShEntSize : uint16_t(sizeof(Elf_Shdr)));
  E.e_shnum = static_cast<uint16_t>(Obj.sections().size());
  E.e_shstrndx = static_cast<uint16_t>(
      Obj.sectionNames() ? Obj.sectionNames()->index() : 0);
}

/// The program header table.
static void renderProgramHeaders(const Layout &L,
                                 MutableArrayRef<Elf_Phdr> Out) {
  for (size_t I = 0; I < L.Segments.size(); ++I) {
    const Segment &P = L.Segments[I];
    Elf_Phdr &D = Out[I];
    D.p_type = P.Type;
    D.p_flags = P.Flags;
    D.p_offset = P.Offset;
    D.p_vaddr = P.VAddr;
    D.p_paddr = P.PAddr;
    D.p_filesz = P.FileSize;
    D.p_memsz = P.MemSize;
    D.p_align = P.Align;
  }
}

/// The section header table. Section 0's header is written back as read.
static void renderSectionHeaders(const Object &Obj, const Layout &L,
                                 MutableArrayRef<Elf_Shdr> Out) {
  for (size_t I = 0; I < Obj.sections().size(); ++I) {
    const Section &S = *Obj.sections()[I];
    Elf_Shdr &D = Out[I];
    auto NI = L.SectionNameOffsets.find(&S);
    auto SI = L.SymtabInfo.find(&S);
    const bool Null = I == 0 && S.Orig;
    D.sh_name = NI != L.SectionNameOffsets.end()
                    ? NI->second
                    : (S.Orig ? S.Orig->NameOffset : 0);
    D.sh_type = S.Type;
    D.sh_flags = S.Flags;
    D.sh_addr = S.Addr;
    D.sh_offset = Null ? S.Orig->Offset : L.SectionOffsets[I];
    D.sh_size =
        Null ? S.Orig->Size : (S.isNoBits() ? S.size() : L.outputSize(S));
    D.sh_link = S.Link ? S.Link->index() : Null ? S.Orig->RawLink : 0;
    D.sh_info = SI != L.SymtabInfo.end() ? SI->second : S.Info;
    D.sh_addralign = S.AddrAlign;
    D.sh_entsize = S.EntSize;
  }
}

OutputPieces renderPieces(const Object &Obj, const Layout &L) {
  OutputPieces R;
  const uint64_t Base = L.BaseLength;
  auto put = [&](uint64_t Off, ArrayRef<uint8_t> Bytes) {
    if (!Bytes.empty())
      R.Pieces.push_back({Off, Bytes, std::nullopt});
  };
  if (Base)
    R.Pieces.push_back({0, Obj.input().take_front(Base), uint64_t(0)});
  for (auto [Off, Size] : L.OldTables)
    R.Pieces.push_back({Off, Obj.input().slice(Off, Size), Off});

  // Section contents first: a non-loaded section kept in place may overlap
  // the ELF header or a header table (the reader allows it), and the headers
  // put after them must win over its stale copy of the old ones.
  for (size_t I = 1; I < Obj.sections().size(); ++I) {
    const Section &S = *Obj.sections()[I];
    if (S.isNoBits() || S.hasExternalContents())
      continue;
    const uint64_t At = L.SectionOffsets[I];
    // Bytes of the input (the section as it was, or the part of a rebuilt
    // table it keeps) are copied from it, not from memory.
    auto fromInput = [&](ArrayRef<uint8_t> Bytes) -> std::optional<uint64_t> {
      if (!S.Orig || S.isDirty() || Bytes.data() != S.contents().data())
        return std::nullopt;
      return S.Orig->Offset;
    };
    auto It = L.Rebuilt.find(&S);
    if (It != L.Rebuilt.end()) {
      const Layout::RebuiltTable &T = It->second;
      if (!T.Kept.empty())
        R.Pieces.push_back({At, T.Kept, fromInput(T.Kept)});
      put(At + T.Kept.size(), T.Added);
      continue;
    }
    ArrayRef<uint8_t> C = S.contents();
    // Bytes the base copy already put in place need no second copy.
    bool InBase = S.Orig && !S.isDirty() && At == S.Orig->Offset &&
                  S.Orig->Offset + C.size() <= Base;
    if (!InBase)
      R.Pieces.push_back({At, C, fromInput(C)});
  }

  // The headers, rendered into a buffer of the pieces' own (records of
  // alignment 1: they go anywhere in it).
  std::vector<uint8_t> &Headers = R.Owned.emplace_back(headerBytes(Obj, L));
  uint8_t *H = Headers.data();
  auto *Ehdr = reinterpret_cast<Elf_Ehdr *>(H);
  auto *Phdrs = reinterpret_cast<Elf_Phdr *>(H + sizeof(Elf_Ehdr));
  auto *Shdrs = reinterpret_cast<Elf_Shdr *>(Phdrs + L.Segments.size());
  renderFileHeader(Obj, L, *Ehdr);
  renderProgramHeaders(L, MutableArrayRef(Phdrs, L.Segments.size()));
  renderSectionHeaders(Obj, L, MutableArrayRef(Shdrs, Obj.sections().size()));
  put(0, ArrayRef(H, sizeof(Elf_Ehdr)));
  put(L.PhOff, ArrayRef(reinterpret_cast<const uint8_t *>(Phdrs),
                        L.Segments.size() * sizeof(Elf_Phdr)));
  put(L.ShOff, ArrayRef(reinterpret_cast<const uint8_t *>(Shdrs),
                        Obj.sections().size() * sizeof(Elf_Shdr)));
  return R;
}

void OutputPieces::applyTo(MutableArrayRef<uint8_t> Out) const {
  for (const OutputPiece &P : Pieces) {
    assert(P.Offset <= Out.size() && P.Bytes.size() <= Out.size() - P.Offset &&
           "piece outside the output");
    if (!P.Bytes.empty())
      memcpy(Out.data() + P.Offset, P.Bytes.data(), P.Bytes.size());
  }
}

void OutputPieces::append(OutputPieces Sub, uint64_t At,
                          std::optional<uint64_t> SubInputAt) {
  for (OutputPiece &P : Sub.Pieces) {
    P.Offset += At;
    if (P.InputOffset)
      P.InputOffset =
          SubInputAt ? std::optional<uint64_t>(*SubInputAt + *P.InputOffset)
                     : std::nullopt;
    Pieces.push_back(P);
  }
  // The buffers move with their bytes: pointers into them stay valid.
  for (std::vector<uint8_t> &B : Sub.Owned)
    Owned.push_back(std::move(B));
}

void writeObject(const Object &Obj, const Layout &L,
                 MutableArrayRef<uint8_t> Out) {
  // Only what follows the base needs clearing (gaps between relaid-out
  // parts); the base piece comes first.
  memset(Out.data() + L.BaseLength, 0, Out.size() - L.BaseLength);
  renderPieces(Obj, L).applyTo(Out);
}

Expected<std::unique_ptr<MemoryBuffer>> writeObjectToBuffer(const Object &Obj) {
  Expected<Layout> L = computeLayout(Obj);
  if (!L)
    return L.takeError();
  auto Buf = WritableMemoryBuffer::getNewUninitMemBuffer(L->FileSize);
  if (!Buf)
    return makeError("cannot allocate " + Twine(L->FileSize) +
                     " bytes for the output");
  writeObject(Obj, *L,
              MutableArrayRef<uint8_t>(
                  reinterpret_cast<uint8_t *>(Buf->getBufferStart()),
                  Buf->getBufferSize()));
  return std::unique_ptr<MemoryBuffer>(std::move(Buf));
}

} // namespace hotswap
