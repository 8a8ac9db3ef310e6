//===- lib/Code/CodeAppender.cpp - Where added code goes ------------------===//

#include "hotswap/Code/CodeAppender.h"

#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

/// New loaded segments start on a page.
static constexpr uint64_t PageSize = 0x1000;

StringRef code::regionSectionName(CodePurpose Purpose, uint64_t Flags,
                                  bool NoBits) {
  switch (Purpose) {
  case CodePurpose::EntryStubs:
    return StubSectionName;
  case CodePurpose::Clones:
    return CloneSectionName;
  case CodePurpose::SiteBodies:
    return SiteBodySectionName;
  case CodePurpose::SwapImage:
    if (NoBits)
      return ".hotswap.swap.bss";
    if (Flags & ELF::SHF_EXECINSTR)
      return ".hotswap.swap.text";
    if (Flags & ELF::SHF_WRITE)
      return ".hotswap.swap.data";
    return ".hotswap.swap.rodata";
  case CodePurpose::Counters:
    return CounterSectionName;
  case CodePurpose::Metadata:
    return NoteSectionName;
  case CodePurpose::PluginCode:
    if (Flags & ELF::SHF_EXECINSTR)
      return ".hotswap.plugin.text";
    if (Flags & ELF::SHF_WRITE)
      return ".hotswap.plugin.data";
    return ".hotswap.plugin.rodata";
  }
  llvm_unreachable("bad code purpose");
}

/// Whether \p P is a segment a CodeAppender made in this run.
static bool isAppendedSegment(const Segment &P) {
  return P.IsNew && P.Type == ELF::PT_LOAD && !P.HoldsProgramHeaders &&
         !P.VAddrMinusOffset;
}

CodeAppender::CodeAppender(Object &Obj) : Obj(Obj) {
  for (const auto &P : Obj.segments())
    if (isAppendedSegment(*P))
      Seg = P.get();
}

Expected<uint64_t> CodeAppender::nextAddress(uint64_t Align) const {
  assert(isPowerOf2_64(Align) && "alignment is not a power of two");
  // The first region starts a page above everything; the next ones follow
  // what the segment holds.
  const uint64_t End =
      Seg ? Obj.firstFreeAddress(1) : Obj.firstFreeAddress(PageSize);
  if (End > UINT64_MAX - (Align - 1))
    return makeError("no address space left above " + hex(End) +
                     " for new code");
  return alignTo(End, Align);
}

Section &CodeAppender::place(std::unique_ptr<Section> Sec,
                             uint32_t SegmentFlags, uint64_t SegmentAlign) {
  const uint64_t End = Sec->Addr + Sec->size();
  const bool HasFileBytes = !Sec->isNoBits();
  if (!Seg) {
    auto P = std::make_unique<Segment>();
    P->Type = ELF::PT_LOAD;
    P->Flags = ELF::PF_R;
    P->VAddr = P->PAddr = Sec->Addr;
    P->Align = PageSize;
    Seg = &Obj.addSegment(std::move(P));
  }
  Seg->Flags |= SegmentFlags;
  Seg->Align = std::max(Seg->Align, SegmentAlign);
  Seg->MemSize = std::max(Seg->MemSize, End - Seg->VAddr);
  if (HasFileBytes)
    Seg->FileSize = std::max(Seg->FileSize, End - Seg->VAddr);
  Section &S = Obj.addSection(std::move(Sec));
  Seg->Members.push_back(&S);
  return S;
}

/// The PF_* flags a section with SHF_* flags \p Flags needs.
static uint32_t segmentFlagsFor(uint64_t Flags) {
  return ELF::PF_R | (Flags & ELF::SHF_EXECINSTR ? ELF::PF_X : 0) |
         (Flags & ELF::SHF_WRITE ? ELF::PF_W : 0);
}

Expected<Section &> CodeAppender::append(CodePurpose Purpose, uint64_t Align,
                                         uint64_t SectionFlags,
                                         std::vector<uint8_t> Bytes) {
  Expected<uint64_t> Addr = nextAddress(Align);
  if (!Addr)
    return Addr.takeError();
  if (Bytes.size() > UINT64_MAX - *Addr)
    return makeError("no address space left above " + hex(*Addr) + " for " +
                     Twine(Bytes.size()) + " bytes of new code");
  auto S = std::make_unique<Section>();
  S->Flags = SectionFlags | ELF::SHF_ALLOC;
  S->Name = regionSectionName(Purpose, S->Flags).str();
  S->Type =
      Purpose == CodePurpose::Metadata ? ELF::SHT_NOTE : ELF::SHT_PROGBITS;
  S->Addr = *Addr;
  S->AddrAlign = Align;
  S->setContents(std::move(Bytes));
  const uint32_t SegmentFlags = segmentFlagsFor(S->Flags);
  return place(std::move(S), SegmentFlags, Align);
}

Error CodeAppender::replace(Section &S, std::vector<uint8_t> Bytes) {
  if (!Seg || !llvm::is_contained(Seg->Members, &S) || S.isNoBits())
    return makeError("section '" + S.Name +
                     "' is not a region appended in this run");
  if (Bytes.size() != S.size()) {
    if (Seg->Members.back() != &S)
      return makeError("section '" + S.Name +
                       "' cannot change its size: other regions follow it");
    if (Bytes.size() > UINT64_MAX - S.Addr)
      return makeError("no address space left above " + hex(S.Addr) + " for " +
                       Twine(Bytes.size()) + " bytes");
    const uint64_t End = S.Addr + Bytes.size() - Seg->VAddr;
    Seg->MemSize = End;
    Seg->FileSize = End;
  }
  S.setContents(std::move(Bytes));
  return Error::success();
}

Expected<Section &> CodeAppender::appendZeroed(CodePurpose Purpose,
                                               uint64_t Align,
                                               uint64_t SectionFlags,
                                               uint64_t Size) {
  Expected<uint64_t> Addr = nextAddress(Align);
  if (!Addr)
    return Addr.takeError();
  if (Size > UINT64_MAX - *Addr)
    return makeError("no address space left above " + hex(*Addr) + " for " +
                     Twine(Size) + " zero bytes");
  auto S = std::make_unique<Section>();
  S->Flags = SectionFlags | ELF::SHF_ALLOC;
  S->Name = regionSectionName(Purpose, S->Flags, /*NoBits=*/true).str();
  S->Type = ELF::SHT_NOBITS;
  S->Addr = *Addr;
  S->AddrAlign = Align;
  S->setNoBitsSize(Size);
  const uint32_t SegmentFlags = segmentFlagsFor(S->Flags);
  return place(std::move(S), SegmentFlags, Align);
}

Expected<uint64_t> CodeAppender::appendImage(ArrayRef<ImageLoad> Loads,
                                             uint64_t Start, uint64_t Align,
                                             StringRef What) {
  assert(!Loads.empty() && isPowerOf2_64(Align));
  Expected<uint64_t> Base = nextAddress(std::max(Align, PageSize));
  if (!Base)
    return makeError("no address space left for the image of '" + What + "'");
  // An image aligned to more than a page would leave up to its alignment
  // of zeros in the file after what the run's segment holds: it starts a
  // segment of its own instead (at the same address).
  if (Seg && *Base - Obj.firstFreeAddress(1) > PageSize)
    Seg = nullptr;
  // Modulo 2^64: the image's own addresses may lie above Base.
  const uint64_t D = *Base - Start;
  const ImageLoad &Last = Loads.back();
  if (Last.VAddr - Start + Last.MemSize > UINT64_MAX - *Base)
    return makeError("the image of '" + What + "' does not fit above " +
                     hex(*Base));
  for (const ImageLoad &L : Loads) {
    const uint64_t Addr = L.VAddr + D;
    const uint64_t Flags = ELF::SHF_ALLOC |
                           (L.Flags & ELF::PF_X ? ELF::SHF_EXECINSTR : 0) |
                           (L.Flags & ELF::PF_W ? ELF::SHF_WRITE : 0);
    if (L.FileSize) {
      auto S = std::make_unique<Section>();
      S->Name = regionSectionName(CodePurpose::SwapImage, Flags).str();
      S->Type = ELF::SHT_PROGBITS;
      S->Flags = Flags;
      S->Addr = Addr;
      // As aligned as the address allows, up to the image's alignment.
      S->AddrAlign =
          Addr ? std::min<uint64_t>(uint64_t(1) << countr_zero(Addr), Align)
               : Align;
      S->setContents(std::vector<uint8_t>(L.Bytes.begin(), L.Bytes.end()));
      place(std::move(S), L.Flags, Align);
    }
    if (L.MemSize > L.FileSize) {
      auto S = std::make_unique<Section>();
      S->Name =
          regionSectionName(CodePurpose::SwapImage, Flags, /*NoBits=*/true)
              .str();
      S->Type = ELF::SHT_NOBITS;
      S->Flags = Flags;
      S->Addr = Addr + L.FileSize;
      S->AddrAlign = 1;
      S->setNoBitsSize(L.MemSize - L.FileSize);
      place(std::move(S), L.Flags, Align);
    }
  }
  return D;
}
