//===- lib/Object/Writer.cpp - Serialization ------------------------------===//

#include "hotswap/Object/Writer.h"

#include "hotswap/Support/Error.h"

#include "llvm/Support/Endian.h"

#include <cassert>
#include <cstring>

using namespace llvm;
using namespace llvm::ELF;
using namespace llvm::support;

namespace hotswap {

template <typename T> static void wr(uint8_t *P, T V) {
  endian::write<T, llvm::endianness::little>(P, V);
}

/// Bytes of the ELF header, the program header table and the section
/// header table.
static uint64_t headerBytes(const Object &Obj, const Layout &L) {
  return sizeof(Elf64_Ehdr) + L.Segments.size() * sizeof(Elf64_Phdr) +
         Obj.sections().size() * sizeof(Elf64_Shdr);
}

/// Renders the ELF header at \p Buf.
static void renderFileHeader(const Object &Obj, const Layout &L, uint8_t *Buf) {
  const FileHeader &H = Obj.Header;
  memcpy(Buf, H.Ident.data(), EI_NIDENT);
  wr<uint16_t>(Buf + 16, H.Type);
  wr<uint16_t>(Buf + 18, H.Machine);
  wr<uint32_t>(Buf + 20, H.Version);
  wr<uint64_t>(Buf + 24, H.Entry);
  wr<uint64_t>(Buf + 32, L.PhOff);
  wr<uint64_t>(Buf + 40, L.ShOff);
  wr<uint32_t>(Buf + 48, H.Flags);
  wr<uint16_t>(Buf + 52, H.EhSize);
  wr<uint16_t>(Buf + 54, Obj.segments().empty() && !H.PhEntSize
                             ? 0
                             : (H.PhEntSize ? H.PhEntSize
                                            : uint16_t(sizeof(Elf64_Phdr))));
  wr<uint16_t>(Buf + 56, static_cast<uint16_t>(L.Segments.size()));
  wr<uint16_t>(Buf + 58, Obj.sections().empty() && !H.ShEntSize
                             ? 0
                             : (H.ShEntSize ? H.ShEntSize
                                            : uint16_t(sizeof(Elf64_Shdr))));
  wr<uint16_t>(Buf + 60, static_cast<uint16_t>(Obj.sections().size()));
  wr<uint16_t>(Buf + 62, static_cast<uint16_t>(Obj.sectionNames()
                                                   ? Obj.sectionNames()->index()
                                                   : 0));
}

/// Renders the program header table at \p Buf.
static void renderProgramHeaders(const Layout &L, uint8_t *Buf) {
  for (size_t I = 0; I < L.Segments.size(); ++I) {
    const Segment &P = L.Segments[I];
    uint8_t *D = Buf + I * sizeof(Elf64_Phdr);
    wr<uint32_t>(D + 0, P.Type);
    wr<uint32_t>(D + 4, P.Flags);
    wr<uint64_t>(D + 8, P.Offset);
    wr<uint64_t>(D + 16, P.VAddr);
    wr<uint64_t>(D + 24, P.PAddr);
    wr<uint64_t>(D + 32, P.FileSize);
    wr<uint64_t>(D + 40, P.MemSize);
    wr<uint64_t>(D + 48, P.Align);
  }
}

/// Renders the section header table at \p Buf.
static void renderSectionHeaders(const Object &Obj, const Layout &L,
                                 uint8_t *Buf) {
  for (size_t I = 0; I < Obj.sections().size(); ++I) {
    const Section &S = *Obj.sections()[I];
    uint8_t *D = Buf + I * sizeof(Elf64_Shdr);
    auto NI = L.SectionNameOffsets.find(&S);
    uint32_t NameOff = NI != L.SectionNameOffsets.end()
                           ? NI->second
                           : (S.Orig ? S.Orig->NameOffset : 0);
    uint64_t Size = S.isNoBits() ? S.size() : L.outputSize(S);
    uint32_t Info = S.Info;
    auto SI = L.SymtabInfo.find(&S);
    if (SI != L.SymtabInfo.end())
      Info = SI->second;
    wr<uint32_t>(D + 0, NameOff);
    wr<uint32_t>(D + 4, S.Type);
    wr<uint64_t>(D + 8, S.Flags);
    wr<uint64_t>(D + 16, S.Addr);
    wr<uint64_t>(D + 24,
                 I == 0 && S.Orig ? S.Orig->Offset : L.SectionOffsets[I]);
    wr<uint64_t>(D + 32, I == 0 && S.Orig ? S.Orig->Size : Size);
    wr<uint32_t>(D + 40, S.Link             ? S.Link->index()
                         : I == 0 && S.Orig ? S.Orig->RawLink
                                            : 0);
    wr<uint32_t>(D + 44, Info);
    wr<uint64_t>(D + 48, S.AddrAlign);
    wr<uint64_t>(D + 56, S.EntSize);
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

  // The headers, rendered into a buffer of the pieces' own.
  std::vector<uint8_t> &Headers = R.Owned.emplace_back(headerBytes(Obj, L));
  uint8_t *H = Headers.data();
  renderFileHeader(Obj, L, H);
  put(0, ArrayRef(H, sizeof(Elf64_Ehdr)));
  H += sizeof(Elf64_Ehdr);
  renderProgramHeaders(L, H);
  put(L.PhOff, ArrayRef(H, L.Segments.size() * sizeof(Elf64_Phdr)));
  H += L.Segments.size() * sizeof(Elf64_Phdr);
  renderSectionHeaders(Obj, L, H);
  put(L.ShOff, ArrayRef(H, Obj.sections().size() * sizeof(Elf64_Shdr)));
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
