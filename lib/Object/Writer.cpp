//===- lib/Object/Writer.cpp - Serialization ------------------------------===//

#include "hotswap/Object/Writer.h"

#include "hotswap/Support/Error.h"

#include "llvm/Support/Endian.h"

#include <cstring>

using namespace llvm;
using namespace llvm::ELF;
using namespace llvm::support;

namespace hotswap {

template <typename T> static void wr(uint8_t *P, T V) {
  endian::write<T, llvm::endianness::little>(P, V);
}

/// Renders everything that is not the input's first L.BaseLength bytes,
/// recording each range written in \p Touched when it is not null.
static void render(const Object &Obj, const Layout &L,
                   MutableArrayRef<uint8_t> Out,
                   std::vector<ByteRange> *Touched) {
  uint8_t *Buf = Out.data();
  const uint64_t Base = L.BaseLength;
  auto put = [&](uint64_t Off, const void *Src, uint64_t N) {
    if (!N)
      return;
    memcpy(Buf + Off, Src, N);
    if (Touched)
      Touched->push_back({Off, N});
  };

  // Section contents first: a non-loaded section kept in place may overlap
  // the ELF header or a header table (the reader allows it), and the headers
  // written below must win over its stale copy of the old ones.
  for (size_t I = 1; I < Obj.sections().size(); ++I) {
    const Section &S = *Obj.sections()[I];
    if (S.isNoBits())
      continue;
    auto It = L.Rebuilt.find(&S);
    ArrayRef<uint8_t> C =
        It != L.Rebuilt.end() ? ArrayRef<uint8_t>(It->second) : S.contents();
    // Bytes the base copy already put in place need no second copy.
    bool InBase = S.Orig && !S.isDirty() && It == L.Rebuilt.end() &&
                  L.SectionOffsets[I] == S.Orig->Offset &&
                  S.Orig->Offset + C.size() <= Base;
    if (!InBase)
      put(L.SectionOffsets[I], C.data(), C.size());
  }

  // ELF header.
  if (Touched)
    Touched->push_back({0, sizeof(Elf64_Ehdr)});
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

  // Program headers.
  if (Touched && !L.Segments.empty())
    Touched->push_back({L.PhOff, L.Segments.size() * sizeof(Elf64_Phdr)});
  for (size_t I = 0; I < L.Segments.size(); ++I) {
    const Segment &P = L.Segments[I];
    uint8_t *D = Buf + L.PhOff + I * sizeof(Elf64_Phdr);
    wr<uint32_t>(D + 0, P.Type);
    wr<uint32_t>(D + 4, P.Flags);
    wr<uint64_t>(D + 8, P.Offset);
    wr<uint64_t>(D + 16, P.VAddr);
    wr<uint64_t>(D + 24, P.PAddr);
    wr<uint64_t>(D + 32, P.FileSize);
    wr<uint64_t>(D + 40, P.MemSize);
    wr<uint64_t>(D + 48, P.Align);
  }

  // Section headers.
  if (Touched && !Obj.sections().empty())
    Touched->push_back({L.ShOff, Obj.sections().size() * sizeof(Elf64_Shdr)});
  for (size_t I = 0; I < Obj.sections().size(); ++I) {
    const Section &S = *Obj.sections()[I];
    uint8_t *D = Buf + L.ShOff + I * sizeof(Elf64_Shdr);
    auto NI = L.SectionNameOffsets.find(&S);
    uint32_t NameOff = NI != L.SectionNameOffsets.end()
                           ? NI->second
                           : (S.Orig ? S.Orig->NameOffset : 0);
    auto RI = L.Rebuilt.find(&S);
    uint64_t Size = S.isNoBits()            ? S.size()
                    : RI != L.Rebuilt.end() ? RI->second.size()
                                            : S.contents().size();
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

void writeObject(const Object &Obj, const Layout &L,
                 MutableArrayRef<uint8_t> Out) {
  memcpy(Out.data(), Obj.input().data(), L.BaseLength);
  // Only the rest needs clearing (gaps between relaid-out parts).
  memset(Out.data() + L.BaseLength, 0, Out.size() - L.BaseLength);
  render(Obj, L, Out, nullptr);
}

std::vector<ByteRange> writeObjectOverBase(const Object &Obj, const Layout &L,
                                           MutableArrayRef<uint8_t> Out) {
  std::vector<ByteRange> Touched;
  render(Obj, L, Out, &Touched);
  return Touched;
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
