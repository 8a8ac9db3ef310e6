//===- lib/Object/Writer.cpp - Layout and serialization -------------------===//

#include "hotswap/Object/Writer.h"
#include "hotswap/Support/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Endian.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileOutputBuffer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

using namespace llvm;
using namespace llvm::ELF;
using namespace llvm::support;

namespace hotswap {

namespace {

template <typename T> void wr(uint8_t *P, T V) {
  endian::write<T, llvm::endianness::little>(P, V);
}

/// Appends \p Name to a string table blob (deduplicated against what was
/// appended in this run) and returns its offset.
class StrTabAppender {
public:
  explicit StrTabAppender(std::vector<uint8_t> &Blob) : Blob(Blob) {
    if (Blob.empty())
      Blob.push_back(0);
  }
  uint32_t add(StringRef Name) {
    if (Name.empty())
      return 0;
    auto [It, Inserted] = Added.try_emplace(Name, 0);
    if (!Inserted)
      return It->second;
    uint32_t Off = static_cast<uint32_t>(Blob.size());
    Blob.insert(Blob.end(), Name.begin(), Name.end());
    Blob.push_back(0);
    It->second = Off;
    return Off;
  }

private:
  std::vector<uint8_t> &Blob;
  StringMap<uint32_t> Added;
};

uint64_t alignUp(uint64_t V, uint64_t A) { return A > 1 ? alignTo(V, A) : V; }

/// Every section but the null one at index 0: its header is written back as
/// read (whatever its fields say) and it has no contents, so it never takes
/// part in the layout.
ArrayRef<std::unique_ptr<Section>> sectionsAfterNull(const Object &Obj) {
  return ArrayRef(Obj.Sections).drop_front(Obj.Sections.empty() ? 0 : 1);
}

/// End of the fixed image: the ELF header, every input PT_LOAD's file bytes
/// and every allocated input section. These bytes never move.
uint64_t fixedImageEnd(const Object &Obj) {
  uint64_t End = sizeof(Elf64_Ehdr);
  for (const auto &P : Obj.Segments)
    if (!P->IsNew && P->Type == PT_LOAD)
      End = std::max(End, P->Offset + P->FileSize);
  for (const auto &S : sectionsAfterNull(Obj))
    if (S->Orig && S->isAlloc() && !S->isNoBits())
      End = std::max(End, S->Orig->Offset + S->Orig->Size);
  return End;
}

/// Largest output the writer lays out. Alignments come from the input, and
/// a huge sh_addralign / p_align on something that moves would otherwise
/// ask for a terabyte-sized file (or wrap around 2^64).
constexpr uint64_t MaxOutputSize = uint64_t(1) << 32;

Error checkOutputEnd(uint64_t Start, uint64_t Size, const Twine &What) {
  if (Start <= MaxOutputSize && Size <= MaxOutputSize - Start)
    return Error::success();
  return createStringError("output too large: " + What + " would start at " +
                           hex(Start) + " with size " + hex(Size) +
                           " (the limit is " + hex(MaxOutputSize) + " bytes)");
}
} // namespace

Expected<Layout> Writer::computeLayout(const Object &Obj) {
  Layout L;
  size_t NSec = Obj.Sections.size();
  L.SectionOffsets.assign(NSec, 0);
  for (const auto &P : Obj.Segments)
    L.Segments.push_back(*P);

  // Derived tables first: string tables and symbol tables that changed.
  // Existing strings keep their offsets; new names are appended.
  DenseMap<const Section *, std::vector<uint8_t>> StrBlobs;
  auto blobFor = [&](const Section *S) -> std::vector<uint8_t> & {
    auto It = StrBlobs.find(S);
    if (It == StrBlobs.end()) {
      ArrayRef<uint8_t> C = S->contents();
      It = StrBlobs.try_emplace(S, C.begin(), C.end()).first;
    }
    return It->second;
  };

  // Section names: sections whose name offset is unknown (new) need one.
  DenseMap<const Section *, uint32_t> NameOffsets;
  if (Obj.SectionNames) {
    std::vector<uint8_t> *Blob = nullptr;
    std::optional<StrTabAppender> App;
    for (const auto &S : Obj.Sections) {
      if (S->Orig && S->Orig->NameOffset < Obj.SectionNames->contents().size() &&
          StringRef(reinterpret_cast<const char *>(
              Obj.SectionNames->contents().data() + S->Orig->NameOffset)) ==
              S->Name) {
        NameOffsets[S.get()] = S->Orig->NameOffset;
        continue;
      }
      if (!Blob) {
        Blob = &blobFor(Obj.SectionNames);
        App.emplace(*Blob);
      }
      NameOffsets[S.get()] = App->add(S->Name);
    }
  } else {
    for (const auto &S : Obj.Sections)
      if (S->Type != SHT_NULL && (S->isNew() || !S->Name.empty()))
        return createStringError("object has no section name string table "
                                 "to name section '" +
                                 S->Name + "'");
  }
  L.SectionNameOffsets = std::move(NameOffsets);

  for (const auto &TP : Obj.SymbolTables) {
    const SymbolTable &T = *TP;
    if (!T.isModified())
      continue;
    if (T.Sec->isAlloc())
      return createStringError("cannot change allocated symbol table '" +
                               T.Sec->Name + "' without moving loaded bytes");
    std::vector<uint8_t> &Blob = blobFor(T.StrTab);
    StrTabAppender App(Blob);
    std::vector<uint8_t> Out((T.Symbols.size() + 1) * sizeof(Elf64_Sym), 0);
    // Locals first, each group in its current order.
    std::vector<const Symbol *> Order;
    Order.reserve(T.Symbols.size());
    for (const Symbol &S : T.Symbols)
      if (S.isLocal())
        Order.push_back(&S);
    uint32_t FirstGlobal = static_cast<uint32_t>(Order.size()) + 1;
    for (const Symbol &S : T.Symbols)
      if (!S.isLocal())
        Order.push_back(&S);
    ArrayRef<uint8_t> OrigStr = T.StrTab->contents();
    for (size_t K = 0; K < Order.size(); ++K) {
      const Symbol &S = *Order[K];
      uint8_t *P = Out.data() + (K + 1) * sizeof(Elf64_Sym);
      uint32_t NameOff;
      if (S.OrigNameOffset && *S.OrigNameOffset < OrigStr.size() &&
          StringRef(reinterpret_cast<const char *>(OrigStr.data() +
                                                   *S.OrigNameOffset)) ==
              S.Name)
        NameOff = *S.OrigNameOffset;
      else
        NameOff = App.add(S.Name);
      uint16_t Shndx = S.Shndx;
      if (S.Sec) {
        uint32_t Idx = Obj.indexOf(S.Sec);
        if (Idx == 0 || Idx >= SHN_LORESERVE)
          return createStringError("symbol '" + S.Name +
                                   "' refers to a section that is not in "
                                   "the object");
        Shndx = static_cast<uint16_t>(Idx);
      }
      wr<uint32_t>(P + 0, NameOff);
      P[4] = static_cast<uint8_t>((S.Binding << 4) | (S.Type & 0xf));
      P[5] = S.Other;
      wr<uint16_t>(P + 6, Shndx);
      wr<uint64_t>(P + 8, S.Value);
      wr<uint64_t>(P + 16, S.Size);
    }
    L.Rebuilt[T.Sec] = std::move(Out);
    L.SymtabInfo[T.Sec] = FirstGlobal;
  }
  for (auto &KV : StrBlobs) {
    if (KV.first->isAlloc() &&
        KV.second.size() != KV.first->contents().size())
      return createStringError("cannot grow allocated string table '" +
                               KV.first->Name +
                               "' without moving loaded bytes");
    L.Rebuilt[KV.first] = std::move(KV.second);
  }

  auto outSize = [&](const Section &S) -> uint64_t {
    if (S.isNoBits())
      return 0;
    auto It = L.Rebuilt.find(&S);
    return It != L.Rebuilt.end() ? It->second.size() : S.contents().size();
  };

  // Loaded sections of the input never change size.
  for (const auto &S : sectionsAfterNull(Obj))
    if (S->Orig && S->isAlloc() && !S->isNoBits() &&
        outSize(*S) != S->Orig->Size)
      return createStringError(
          "section '" + S->Name + "' is loaded and cannot change size (" +
          hex(S->Orig->Size) + " -> " + hex(outSize(*S)) + ")");

  bool NewSegments = llvm::any_of(Obj.Segments,
                                  [](const auto &P) { return P->IsNew; });
  bool Changed = NewSegments || Obj.Segments.size() != Obj.OrigPhNum ||
                 Obj.Sections.size() != Obj.OrigShNum ||
                 Obj.RelayoutSectionHeaders;
  for (const auto &S : sectionsAfterNull(Obj))
    if (S->isNew() || (!S->isNoBits() && outSize(*S) != S->Orig->Size))
      Changed = true;

  uint64_t InSize = Obj.Input.size();
  if (!Changed) {
    L.InPlace = true;
    L.FileSize = InSize;
    L.PhOff = Obj.OrigPhOff;
    L.ShOff = Obj.OrigShOff;
    for (size_t I = 0; I < NSec; ++I)
      L.SectionOffsets[I] = Obj.Sections[I]->Orig->Offset;
    return std::move(L);
  }
  L.InPlace = false;

  // The fixed image, copied verbatim.
  const uint64_t FixedEnd = fixedImageEnd(Obj);
  uint64_t Pos = FixedEnd;

  // New loaded segments, above every existing address.
  uint64_t MaxEnd = 0;
  for (const auto &P : Obj.Segments)
    if (!P->IsNew && P->Type == PT_LOAD)
      MaxEnd = std::max(MaxEnd, P->VAddr + P->MemSize);
  for (const auto &S : sectionsAfterNull(Obj))
    if (S->Orig && S->isAlloc())
      MaxEnd = std::max(MaxEnd, S->Addr + S->size());
  for (size_t PI = 0; PI < Obj.Segments.size(); ++PI) {
    const Segment &P = *Obj.Segments[PI];
    if (!P.IsNew)
      continue;
    Segment &OutP = L.Segments[PI];
    if (P.Members.empty()) {
      OutP.Offset = 0;
      OutP.FileSize = 0;
      continue;
    }
    if (P.VAddr < MaxEnd)
      return createStringError("new segment at address " + hex(P.VAddr) +
                               " would overlap loaded memory ending at " +
                               hex(MaxEnd));
    uint64_t Align = std::max<uint64_t>(P.Align, 1);
    if (!isPowerOf2_64(Align))
      return createStringError("new segment alignment " + hex(Align) +
                               " is not a power of two");
    uint64_t Off = alignTo(Pos, Align) + P.VAddr % Align;
    if (Off >= Align && Off - Align >= Pos)
      Off -= Align;
    OutP.Offset = Off;
    uint64_t MemEnd = P.VAddr, FileEnd = P.VAddr;
    for (const Section *S : P.Members) {
      if (S->Addr < P.VAddr)
        return createStringError("section '" + S->Name +
                                 "' lies below its segment's address");
      uint32_t Idx = Obj.indexOf(S);
      L.SectionOffsets[Idx] = Off + (S->Addr - P.VAddr);
      MemEnd = std::max(MemEnd, S->Addr + S->size());
      if (!S->isNoBits())
        FileEnd = std::max(FileEnd, S->Addr + S->size());
    }
    OutP.FileSize = FileEnd - P.VAddr;
    OutP.MemSize = std::max(MemEnd - P.VAddr, P.MemSize);
    if (Error E = checkOutputEnd(Off, OutP.FileSize, "new segment " + Twine(PI)))
      return std::move(E);
    Pos = Off + OutP.FileSize;
    MaxEnd = std::max(MaxEnd, P.VAddr + OutP.MemSize);
  }

  // Program header table: in place if it still fits in its slot.
  uint64_t PhSize = Obj.Segments.size() * sizeof(Elf64_Phdr);
  bool PhInPlace = Obj.Segments.size() <= Obj.OrigPhNum && Obj.OrigPhNum &&
                   Obj.OrigPhOff + PhSize <= FixedEnd;
  if (Obj.Segments.empty()) {
    L.PhOff = 0;
  } else if (PhInPlace) {
    L.PhOff = Obj.OrigPhOff;
  } else {
    Pos = alignTo(Pos, 8);
    L.PhOff = Pos;
    Pos += PhSize;
    // The table is no longer mapped where PT_PHDR said: neutralize it.
    for (Segment &P : L.Segments)
      if (P.Type == PT_PHDR)
        P = Segment();
  }

  // Non-loaded sections: those inside the fixed image that did not change
  // stay; the rest are packed in their original file order, then new ones.
  std::vector<uint32_t> Tail;
  for (uint32_t I = 1; I < NSec; ++I) {
    const Section &S = *Obj.Sections[I];
    if (S.isAlloc() && S.Orig) {
      L.SectionOffsets[I] = S.Orig->Offset;
      continue;
    }
    if (S.isAlloc())
      continue; // new loaded sections were placed with their segment
    if (S.Orig && (S.isNoBits() ||
                   (S.Orig->Offset + S.Orig->Size <= FixedEnd &&
                    outSize(S) == S.Orig->Size))) {
      L.SectionOffsets[I] = S.Orig->Offset;
      continue;
    }
    Tail.push_back(I);
  }
  llvm::stable_sort(Tail, [&](uint32_t A, uint32_t B) {
    const Section &SA = *Obj.Sections[A], &SB = *Obj.Sections[B];
    if (SA.isNew() != SB.isNew())
      return SB.isNew();
    if (SA.isNew())
      return false;
    return SA.Orig->Offset < SB.Orig->Offset;
  });
  for (uint32_t I : Tail) {
    const Section &S = *Obj.Sections[I];
    uint64_t A = S.AddrAlign;
    if (S.Type == SHT_SYMTAB || S.Type == SHT_DYNSYM)
      A = std::max<uint64_t>(A, 8);
    Pos = alignUp(Pos, A);
    if (Error E = checkOutputEnd(Pos, outSize(S), "section '" + S.Name + "'"))
      return std::move(E);
    L.SectionOffsets[I] = Pos;
    Pos += outSize(S);
  }

  Pos = alignTo(Pos, 8);
  L.ShOff = NSec ? Pos : 0;
  if (Error E = checkOutputEnd(Pos, NSec * sizeof(Elf64_Shdr),
                              "the section header table"))
    return std::move(E);
  Pos += NSec * sizeof(Elf64_Shdr);
  L.FileSize = Pos;
  if (NSec >= SHN_LORESERVE)
    return createStringError("too many sections (" + Twine(NSec) + ")");
  if (Obj.Segments.size() >= PN_XNUM)
    return createStringError("too many program headers");
  return std::move(L);
}

uint64_t Writer::baseLength(const Object &Obj, const Layout &L) {
  if (L.InPlace)
    return std::min<uint64_t>(Obj.Input.size(), L.FileSize);
  return std::min<uint64_t>({fixedImageEnd(Obj), Obj.Input.size(), L.FileSize});
}

void Writer::write(const Object &Obj, const Layout &L,
                   MutableArrayRef<uint8_t> Out,
                   std::vector<std::pair<uint64_t, uint64_t>> *Touched) {
  uint8_t *Buf = Out.data();
  const uint64_t Base = baseLength(Obj, L);
  if (!Touched) {
    memcpy(Buf, Obj.Input.data(), Base);
    // Only the rest needs clearing (gaps between relaid-out parts).
    memset(Buf + Base, 0, Out.size() - Base);
  }
  auto put = [&](uint64_t Off, const void *Src, uint64_t N) {
    if (!N)
      return;
    memcpy(Buf + Off, Src, N);
    if (Touched)
      Touched->emplace_back(Off, N);
  };

  // Section contents first: a non-loaded section kept in place may overlap
  // the ELF header or a header table (the reader allows it), and the headers
  // written below must win over its stale copy of the old ones.
  for (size_t I = 1; I < Obj.Sections.size(); ++I) {
    const Section &S = *Obj.Sections[I];
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
    Touched->emplace_back(0, sizeof(Elf64_Ehdr));
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
  wr<uint16_t>(Buf + 54, Obj.Segments.empty() && !H.PhEntSize
                             ? 0
                             : (H.PhEntSize ? H.PhEntSize
                                            : uint16_t(sizeof(Elf64_Phdr))));
  wr<uint16_t>(Buf + 56, static_cast<uint16_t>(L.Segments.size()));
  wr<uint16_t>(Buf + 58, Obj.Sections.empty() && !H.ShEntSize
                             ? 0
                             : (H.ShEntSize ? H.ShEntSize
                                            : uint16_t(sizeof(Elf64_Shdr))));
  wr<uint16_t>(Buf + 60, static_cast<uint16_t>(Obj.Sections.size()));
  wr<uint16_t>(Buf + 62, static_cast<uint16_t>(
                             Obj.SectionNames ? Obj.indexOf(Obj.SectionNames)
                                              : 0));

  // Program headers.
  if (Touched && !L.Segments.empty())
    Touched->emplace_back(L.PhOff, L.Segments.size() * sizeof(Elf64_Phdr));
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
  if (Touched && !Obj.Sections.empty())
    Touched->emplace_back(L.ShOff, Obj.Sections.size() * sizeof(Elf64_Shdr));
  for (size_t I = 0; I < Obj.Sections.size(); ++I) {
    const Section &S = *Obj.Sections[I];
    uint8_t *D = Buf + L.ShOff + I * sizeof(Elf64_Shdr);
    auto NI = L.SectionNameOffsets.find(&S);
    uint32_t NameOff = NI != L.SectionNameOffsets.end()
                           ? NI->second
                           : (S.Orig ? S.Orig->NameOffset : 0);
    auto RI = L.Rebuilt.find(&S);
    uint64_t Size = S.isNoBits()              ? S.size()
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
    wr<uint64_t>(D + 24, I == 0 && S.Orig ? S.Orig->Offset
                                          : L.SectionOffsets[I]);
    wr<uint64_t>(D + 32, I == 0 && S.Orig ? S.Orig->Size : Size);
    wr<uint32_t>(D + 40, S.Link ? Obj.indexOf(S.Link) : 0);
    wr<uint32_t>(D + 44, Info);
    wr<uint64_t>(D + 48, S.AddrAlign);
    wr<uint64_t>(D + 56, S.EntSize);
  }
}

Expected<std::unique_ptr<MemoryBuffer>> writeObjectToBuffer(const Object &Obj) {
  Expected<Layout> L = Writer::computeLayout(Obj);
  if (!L)
    return L.takeError();
  auto Buf = WritableMemoryBuffer::getNewUninitMemBuffer(L->FileSize,
                                                         Obj.InputName);
  if (!Buf)
    return createStringError("cannot allocate " + Twine(L->FileSize) +
                             " bytes for the output");
  MutableArrayRef<uint8_t> Out(reinterpret_cast<uint8_t *>(Buf->getBufferStart()),
                               Buf->getBufferSize());
  Writer::write(Obj, *L, Out);
  return std::unique_ptr<MemoryBuffer>(std::move(Buf));
}

/// The fast way to a file: the bytes the output shares with the input are
/// copied by the kernel (copy_file_range from the input file, no page faults
/// in this process), then only what differs is written, into a temporary
/// next to \p Path that replaces it by rename. Returns false when it does
/// not apply (no input file to copy from, or the system refuses the copy);
/// the caller then writes the whole object itself.
static Expected<bool> writeByCopyingInput(const Object &Obj, const Layout &L,
                                          StringRef Path) {
  StringRef In = Obj.InputName;
  if (In.empty() || In == "-" || Path == "-" || sys::fs::is_directory(Path))
    return false;
  int InFD;
  if (sys::fs::openFileForRead(In, InFD))
    return false;
  auto CloseIn = make_scope_exit([&] { sys::Process::SafelyCloseFileDescriptor(InFD); });
  sys::fs::file_status St;
  if (sys::fs::status(InFD, St) || St.type() != sys::fs::file_type::regular_file ||
      St.getSize() != Obj.Input.size())
    return false;

  int OutFD;
  SmallString<128> Tmp;
  if (std::error_code EC = sys::fs::createUniqueFile(
          Path + ".tmp%%%%%%%", OutFD, Tmp, sys::fs::OF_None,
          sys::fs::all_read | sys::fs::all_write | sys::fs::all_exe))
    return createStringError(EC, EC.message());
  bool Keep = false;
  auto Cleanup = make_scope_exit([&] {
    if (OutFD >= 0)
      sys::Process::SafelyCloseFileDescriptor(OutFD);
    if (!Keep)
      sys::fs::remove(Tmp);
  });
  auto fail = [&](std::error_code EC) -> Expected<bool> {
    return createStringError(EC, EC.message());
  };
  if (std::error_code EC = sys::fs::resize_file(OutFD, L.FileSize))
    return fail(EC);

  // The shared prefix, copied in the kernel.
  uint64_t Base = Writer::baseLength(Obj, L);
  loff_t InOff = 0, OutOff = 0;
  while (static_cast<uint64_t>(InOff) < Base) {
    ssize_t N = ::copy_file_range(InFD, &InOff, OutFD, &OutOff,
                                  Base - InOff, 0);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      // Not supported here (old kernel, other file systems): write it all.
      if (N < 0 && (errno == ENOSYS || errno == EXDEV || errno == EINVAL ||
                    errno == EOPNOTSUPP) && InOff == 0)
        return false;
      return fail(std::error_code(N < 0 ? errno : EIO, std::generic_category()));
    }
  }

  // What differs, rendered into an untouched (so unfaulted) buffer and
  // written piece by piece.
  auto Buf = WritableMemoryBuffer::getNewUninitMemBuffer(L.FileSize);
  if (!Buf)
    return fail(std::make_error_code(std::errc::not_enough_memory));
  MutableArrayRef<uint8_t> Out(reinterpret_cast<uint8_t *>(Buf->getBufferStart()),
                               Buf->getBufferSize());
  std::vector<std::pair<uint64_t, uint64_t>> Touched;
  Writer::write(Obj, L, Out, &Touched);
  for (auto [Off, Size] : Touched) {
    uint64_t Done = 0;
    while (Done < Size) {
      ssize_t N = ::pwrite(OutFD, Out.data() + Off + Done, Size - Done,
                           static_cast<off_t>(Off + Done));
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0)
        return fail(std::error_code(N < 0 ? errno : EIO, std::generic_category()));
      Done += static_cast<uint64_t>(N);
    }
  }
  int FD = OutFD;
  OutFD = -1;
  if (std::error_code EC = sys::Process::SafelyCloseFileDescriptor(FD))
    return fail(EC);
  if (std::error_code EC = sys::fs::rename(Tmp, Path))
    return fail(EC);
  Keep = true;
  return true;
}

Error writeObjectToFile(const Object &Obj, StringRef Path) {
  Expected<Layout> L = Writer::computeLayout(Obj);
  if (!L)
    return L.takeError();
  Expected<bool> Fast = writeByCopyingInput(Obj, *L, Path);
  if (!Fast)
    return Fast.takeError();
  if (*Fast)
    return Error::success();
  // FileOutputBuffer writes a temporary file next to Path and renames it on
  // commit(); on any error the temporary is removed and Path is untouched.
  Expected<std::unique_ptr<FileOutputBuffer>> FOB =
      FileOutputBuffer::create(Path, L->FileSize, FileOutputBuffer::F_executable);
  if (!FOB)
    return FOB.takeError();
  MutableArrayRef<uint8_t> Out((*FOB)->getBufferStart(), (*FOB)->getBufferSize());
  Writer::write(Obj, *L, Out);
  return (*FOB)->commit();
}

} // namespace hotswap
