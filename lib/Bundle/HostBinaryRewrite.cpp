//===- lib/Bundle/HostBinaryRewrite.cpp - Put new bundles in a host -------===//
//
// replaceBundles(): everything is checked and computed first (the new
// bundles, the segment's address, every byte to write); only then is the
// model changed, so an error leaves it as it was. The model does the rest
// when it is written: the Object layer lays the new segment out after the
// input, puts the program header table inside it and moves PT_PHDR along
// (Segment::HoldsProgramHeaders, Segment::VAddrMinusOffset).
//
//===----------------------------------------------------------------------===//

#include "hotswap/Bundle/HostBinary.h"

#include "DynamicRelocations.h"

#include "hotswap/Object/Layout.h"

#include "hotswap/Bundle/CompressedBundle.h"
#include "hotswap/Bundle/OffloadBundle.h"
#include "hotswap/Support/Error.h"
#include "hotswap/Support/Format.h"
#include "hotswap/Support/LargeBuffer.h"
#include "hotswap/Support/Record.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <set>

using namespace llvm;
using namespace llvm::ELF;

namespace hotswap {
namespace bundle {

namespace {

using Elf_Dyn = object::ELF64LE::Dyn;

/// x86-64's page size: the least alignment of the new PT_LOAD.
constexpr uint64_t PageSize = 0x1000;
/// Where each new bundle starts in the new section (clang's -bundle-align
/// for HIP, and .hip_fatbin's alignment).
constexpr uint64_t NewBundleAlign = 0x1000;

bool startsWith(ArrayRef<uint8_t> B, StringRef Magic) {
  return B.size() >= Magic.size() &&
         std::equal(Magic.bytes_begin(), Magic.bytes_end(), B.begin());
}

/// A new bundle must be exactly what HIP will read at its address.
Error checkNewBundle(size_t Index, ArrayRef<uint8_t> B) {
  std::string Name = "new bundle " + std::to_string(Index);
  if (startsWith(B, OffloadBundleMagic)) {
    Expected<OffloadBundle> OB = parseOffloadBundle(B);
    if (!OB)
      return prefixError(Name, OB.takeError());
    if (OB->Size != B.size())
      return makeError(Name + " has " + hex(B.size() - OB->Size) +
                       " bytes after its last entry (HIP sizes it as " +
                       hex(OB->Size) + " bytes)");
    return Error::success();
  }
  if (startsWith(B, CompressedBundleMagic)) {
    Expected<CompressedBundleHeader> H = parseCompressedBundleHeader(B);
    if (!H)
      return prefixError(Name, H.takeError());
    if (!H->TotalSize)
      return makeError(Name + " is a compressed bundle of version " +
                       Twine(H->Version) +
                       ", which has no total size (HIP cannot size it)");
    return Error::success();
  }
  return makeError(Name + " is neither an offload bundle nor a compressed "
                          "one");
}

/// Executables get their AT_PHDR from the kernel (see Segment::
/// VAddrMinusOffset): ET_EXEC, ET_DYN with an interpreter (PIE), and
/// static PIEs, marked DF_1_PIE.
bool isExecutable(const Object &Obj) {
  if (Obj.Header.Type == ET_EXEC)
    return true;
  for (const auto &P : Obj.segments())
    if (P->Type == PT_INTERP)
      return true;
  for (const auto &S : Obj.sections()) {
    if (S->Type != SHT_DYNAMIC || S->isNoBits())
      continue;
    ArrayRef<uint8_t> C = S->contents();
    for (uint64_t Off = 0; C.size() - Off >= sizeof(Elf_Dyn);
         Off += sizeof(Elf_Dyn)) {
      const Elf_Dyn &D = recordAt<Elf_Dyn>(C, Off);
      if (D.getTag() == DT_NULL)
        break;
      if (D.getTag() == DT_FLAGS_1 && (D.getVal() & DF_1_PIE))
        return true;
    }
  }
  return false;
}

std::vector<uint8_t> le64(uint64_t V) {
  std::vector<uint8_t> B(8);
  support::endian::write64le(B.data(), V);
  return B;
}

} // namespace

Error HostBinary::replaceBundles(
    Object &Host, ArrayRef<std::optional<std::vector<uint8_t>>> NewBundles,
    const HostRewriteOptions &Opts) const {
  if (&Host != Source)
    return makeError("replaceBundles was given an object other than the one "
                     "analyzed");
  if (!NewBundles.empty() && NewBundles.size() != Bundles.size())
    return makeError("replaceBundles was given " + Twine(NewBundles.size()) +
                     " bundles for a host with " + Twine(Bundles.size()));
  // What changes: a new bundle of other bytes, which must be one HIP reads.
  std::vector<std::optional<uint64_t>> Sizes(NewBundles.size());
  for (size_t I = 0; I < NewBundles.size(); ++I) {
    if (!NewBundles[I] || ArrayRef<uint8_t>(*NewBundles[I]) == Bundles[I].Bytes)
      continue;
    if (Error E = checkNewBundle(I, *NewBundles[I]))
      return E;
    Sizes[I] = NewBundles[I]->size();
  }
  Expected<PlacedBundles> P = placeBundles(Host, Sizes, Opts);
  if (!P)
    return P.takeError();
  if (!P->Section)
    return Error::success();
  // The caller gave the bytes: the new section holds them.
  Section &Sec = *Host.sections()[*P->Section];
  std::vector<uint8_t> Contents = largeBuffer(Sec.size());
  Contents.resize(Sec.size(), 0);
  for (size_t I = 0; I < Sizes.size(); ++I)
    if (P->Offsets[I])
      std::copy(NewBundles[I]->begin(), NewBundles[I]->end(),
                Contents.begin() + *P->Offsets[I]);
  Sec.setContents(std::move(Contents));
  return Error::success();
}

namespace {

/// The new segment's address (where the program header table goes, at its
/// start), the new section's (after the table), the alignment, and for an
/// executable its p_vaddr - p_offset (see Segment::VAddrMinusOffset).
struct NewSegmentPlace {
  uint64_t VAddr = 0, SectionAddr = 0, Align = PageSize;
  std::optional<uint64_t> Delta;
};

/// Where GNU objcopy and strip (BFD) put the program header table of a
/// PT_LOAD that includes it but not the file header: at the file offset
/// where the loaded bytes before it end (the end of the last PT_LOAD's file
/// bytes; they keep the input's loaded layout), then the segment's sections
/// at offsets congruent to their addresses, and the segment's p_vaddr the
/// first section's address minus that distance. A table at an address
/// congruent to that offset, with the section at the next page after it,
/// is what they compute again: their output keeps every address (any other
/// place, the table after the section included, makes them move the
/// section or the segment over the one before it).
uint64_t loadedFileEnd(const Object &Host) {
  uint64_t End = 0;
  for (const auto &Seg : Host.segments())
    if (Seg->Type == PT_LOAD && !Seg->IsNew && Seg->FileSize)
      End = std::max(End, Seg->Offset + Seg->FileSize); // validated
  return End;
}

} // namespace

/// The input's size, or where the bytes an earlier run appended start
/// when they are laid out again (Object::replaceAppended).
static uint64_t inputEnd(const Object &Host) {
  return Host.appendedFrom().value_or(Host.input().size());
}

static Expected<NewSegmentPlace> placeNewSegment(const Object &Host) {
  // Aligned like the most aligned PT_LOAD, above every loaded address; in
  // an executable or a library with PT_PHDR, with the first PT_LOAD's
  // p_vaddr - p_offset, so its file offset must be past the input's end.
  // An executable needs that (see Segment::VAddrMinusOffset) and fails
  // without it; a library with PT_PHDR gets it when it can: patchelf takes
  // PT_PHDR's p_vaddr - p_offset for the first PT_LOAD's, and puts the
  // table it moves to offset 64 at that address plus 64 (the file of such
  // a library then grows by its .bss, as an executable's does).
  const bool Exe = isExecutable(Host);
  const bool SharesDelta =
      Exe || llvm::any_of(Host.segments(),
                          [](const auto &Seg) { return Seg->Type == PT_PHDR; });
  NewSegmentPlace P;
  uint64_t End = 0;
  bool First = true;
  for (const auto &Seg : Host.segments()) {
    if (Seg->Type != PT_LOAD)
      continue;
    if (First && SharesDelta) {
      First = false;
      if (Seg->Offset <= Seg->VAddr)
        P.Delta = Seg->VAddr - Seg->Offset;
      else if (Exe)
        return makeError("the first PT_LOAD's p_offset " + hex(Seg->Offset) +
                         " is above its p_vaddr " + hex(Seg->VAddr) +
                         ": no new segment can share its p_vaddr - p_offset");
    }
    if (Seg->Align > P.Align && isPowerOf2_64(Seg->Align))
      P.Align = Seg->Align;
    End = std::max(End, Seg->VAddr + Seg->MemSize); // validated by the reader
  }
  for (const auto &S : Host.sections())
    if (S->isAlloc())
      End = std::max(End, S->Addr + S->size()); // validated by the reader
  if (Exe && First)
    return makeError("executable has no PT_LOAD");
  if (P.Delta) {
    // The offset is VAddr - Delta: congruent to VAddr only when Delta is a
    // multiple of the alignment.
    uint64_t Align = P.Align;
    while (*P.Delta % Align != 0 && Align > PageSize)
      Align /= 2;
    if (*P.Delta % Align != 0) {
      if (Exe)
        return makeError("the first PT_LOAD's p_vaddr - p_offset " +
                         hex(*P.Delta) + " is not a multiple of the page size");
      P.Delta.reset();
    } else {
      P.Align = Align;
    }
  }
  if (P.Delta) {
    uint64_t InSize = inputEnd(Host);
    if (InSize > UINT64_MAX - *P.Delta)
      return makeError("no address space left for a new segment");
    End = std::max(End, InSize + *P.Delta);
  }
  // The table: on the first free page, at the offset within it that GNU
  // strip gives it (8-byte aligned), then the section on the next page
  // boundary (NewBundleAlign) after the table. When that offset is not
  // 8-byte aligned, strip puts the table up to 7 bytes after ours and the
  // section where we do, so the section needs that much room after the
  // table (else strip moves it a whole page on).
  const uint64_t TableSize =
      (Host.segments().size() + 1) * sizeof(object::ELF64LE::Phdr);
  const uint64_t LoadedEnd = loadedFileEnd(Host);
  const uint64_t InPage = alignDown(LoadedEnd % P.Align, 8);
  const uint64_t Slack = LoadedEnd % 8 ? 8 : 0;
  if (End > UINT64_MAX - 2 * P.Align - TableSize - Slack - NewBundleAlign)
    return makeError("no address space left for a new segment above " +
                     hex(End));
  P.VAddr = alignTo(End, P.Align) + InPage;
  P.SectionAddr = alignTo(P.VAddr + TableSize + Slack, NewBundleAlign);
  return P;
}

uint64_t HostBinary::nextBundleOffset(uint64_t Before) {
  return alignTo(Before, NewBundleAlign);
}

Expected<uint64_t> HostBinary::newSectionFileOffset(const Object &Host) const {
  Expected<NewSegmentPlace> Seg = placeNewSegment(Host);
  if (!Seg)
    return Seg.takeError();
  // The section is the segment's only member, after the table at the
  // segment's start.
  const uint64_t SegOff =
      Seg->Delta ? Seg->VAddr - *Seg->Delta
                 : newSegmentOffset(inputEnd(Host), Seg->VAddr, Seg->Align);
  return SegOff + (Seg->SectionAddr - Seg->VAddr);
}

Expected<PlacedBundles>
HostBinary::placeBundles(Object &Host, ArrayRef<std::optional<uint64_t>> Sizes,
                         const HostRewriteOptions &Opts) const {
  if (&Host != Source)
    return makeError("replaceBundles was given an object other than the one "
                     "analyzed");
  if (!Sizes.empty() && Sizes.size() != Bundles.size())
    return makeError("replaceBundles was given " + Twine(Sizes.size()) +
                     " bundles for a host with " + Twine(Bundles.size()));
  PlacedBundles Placed;
  Placed.Offsets.assign(Bundles.size(), std::nullopt);
  std::vector<size_t> Changed;
  for (size_t I = 0; I < Sizes.size(); ++I)
    if (Sizes[I])
      Changed.push_back(I);
  for (size_t I = 0; I < Bundles.size(); ++I)
    if (reclaimed(I) && (I >= Sizes.size() || !Sizes[I]))
      return makeError("bundle " + Twine(I) + " at " + hex(Bundles[I].Addr) +
                       " lay in the segment an earlier rewrite appended, "
                       "which is laid out again, but is not placed again");
  if (Changed.empty())
    return Placed;

  Expected<NewSegmentPlace> Seg = placeNewSegment(Host);
  if (!Seg)
    return Seg.takeError();
  const uint64_t VAddr = Seg->SectionAddr;

  // The new section's contents: each changed bundle at a multiple of 4096.
  std::vector<uint64_t> NewAddr(Bundles.size(), 0);
  uint64_t Size = 0;
  for (size_t I : Changed) {
    uint64_t N = *Sizes[I];
    uint64_t Off = nextBundleOffset(Size);
    if (Off < Size || N > UINT64_MAX - Off || Off + N > UINT64_MAX - VAddr)
      return makeError("new bundles too large for the address space");
    NewAddr[I] = VAddr + Off;
    Placed.Offsets[I] = Off;
    Size = Off + N;
  }

  std::vector<bool> IsChanged(Bundles.size(), false);
  for (size_t I : Changed)
    IsChanged[I] = true;
  Expected<std::vector<Edit>> Edits =
      pointerEdits(Host, IsChanged, NewAddr, Opts);
  if (!Edits)
    return Edits.takeError();
  std::vector<uint32_t> Rename = sectionsToRename(Host, IsChanged);

  // Nothing can fail from here on.
  for (const Edit &E : *Edits)
    cantFail(Host.sections()[E.Section]->overwrite(E.Offset, E.Bytes));
  for (uint32_t Sec : Rename)
    Host.sections()[Sec]->Name = HostOldBundleSectionName.str();

  auto NewSec = std::make_unique<Section>();
  NewSec->Name = HostBundleSectionName.str();
  NewSec->Type = SHT_PROGBITS;
  NewSec->Flags = SHF_ALLOC;
  NewSec->Addr = VAddr;
  NewSec->AddrAlign = NewBundleAlign;
  NewSec->setExternalContents(Size);
  Section &Sec = Host.addSection(std::move(NewSec));
  Placed.Section = Sec.index();

  auto NewSeg = std::make_unique<Segment>();
  NewSeg->Type = PT_LOAD;
  NewSeg->Flags = PF_R;
  NewSeg->VAddr = NewSeg->PAddr = Seg->VAddr;
  NewSeg->Align = Seg->Align;
  NewSeg->Members.push_back(&Sec);
  NewSeg->HoldsProgramHeaders = true;
  NewSeg->VAddrMinusOffset = Seg->Delta;
  Host.addSegment(std::move(NewSeg));
  return Placed;
}

Expected<bool> HostBinary::reclaimAppended(Object &Host, uint64_t From) {
  if (&Host != Source)
    return makeError("reclaimAppended was given an object other than the one "
                     "analyzed");
  if (Host.appendedFrom() || From >= Host.input().size())
    return false;
  // The one PT_LOAD with file bytes past From: wholly past it, the last in
  // memory, holding the program header table (and PT_PHDR) -- what
  // placeBundles appends. No other program header may reach past From.
  std::optional<size_t> Ours;
  uint64_t OthersEnd = 0;
  const InputTables &T = Host.inputTables();
  for (size_t PI = 0; PI < Host.segments().size(); ++PI) {
    const Segment &P = *Host.segments()[PI];
    if (P.IsNew)
      return false;
    const bool Past = P.FileSize && P.Offset + P.FileSize > From;
    if (P.Type == PT_LOAD && Past) {
      if (Ours || P.Offset < From || T.PhOff < P.Offset ||
          T.PhOff - P.Offset >= P.FileSize)
        return false;
      Ours = PI;
      continue;
    }
    if (P.Type == PT_LOAD)
      OthersEnd = std::max(OthersEnd, P.VAddr + P.MemSize);
    else if (Past && P.Type != PT_PHDR)
      return false;
  }
  if (!Ours)
    return false;
  const Segment &Seg = *Host.segments()[*Ours];
  if (Seg.VAddr < OthersEnd)
    return false;
  // Its sections: loaded ones inside it (none of them elsewhere past From),
  // and no wrapper, relocation table or bundle of the input's own there.
  std::vector<uint32_t> Remove;
  for (const auto &S : Host.sections()) {
    if (!S->isAlloc() || !S->Orig)
      continue;
    const bool Inside =
        S->Addr >= Seg.VAddr &&
        S->Addr - Seg.VAddr < std::max<uint64_t>(Seg.MemSize, 1);
    const bool Past = !S->isNoBits() && S->Orig->Offset >= From;
    if (Inside != Past)
      return false;
    if (Inside)
      Remove.push_back(S->index());
  }
  if (Remove.empty())
    return false;
  // (The sites this analysis found keep their section indexes: none may lie
  // in or after the first section taken out, but a bundle inside them.)
  const uint32_t First = *llvm::min_element(Remove);
  for (const PointerSite &P : PointerSites)
    if (P.WrapperSection >= First || P.RelocSection >= First)
      return false;
  std::vector<bool> In(Bundles.size(), false);
  for (size_t I = 0; I < Bundles.size(); ++I) {
    In[I] = llvm::is_contained(Remove, BundleSites[I].Section);
    if (!In[I] && BundleSites[I].Section >= First)
      return false;
  }
  if (Error E = Host.removeSections(Remove)) {
    consumeError(std::move(E)); // (something else names them: kept)
    return false;
  }
  Host.removeSegment(*Ours);
  Host.replaceAppended(From);
  Reclaimed = std::move(In);
  return true;
}

Expected<std::vector<HostBinary::Edit>>
HostBinary::pointerEdits(const Object &Host, const std::vector<bool> &IsChanged,
                         ArrayRef<uint64_t> NewAddr,
                         const HostRewriteOptions &Opts) const {
  // Each wrapper of a changed bundle repointed where its value lives, then
  // the old bundles zeroed.
  std::vector<Edit> Edits;
  for (size_t W = 0; W < Wrappers.size(); ++W) {
    const HostWrapper &Wr = Wrappers[W];
    if (!IsChanged[Wr.Bundle])
      continue;
    const PointerSite &Site = PointerSites[W];
    uint64_t New = NewAddr[Wr.Bundle];
    // The RELA entry's r_addend (the entry lies inside its section, so this
    // does not wrap; every edit is checked against its section below).
    const uint64_t Addend = Site.RelocOffset + RelaAddendOffset;
    if (Wr.Kind == PointerKind::Relative)
      Edits.push_back({Site.RelocSection, Addend, le64(New)});
    else if (Wr.Kind == PointerKind::Symbol)
      Edits.push_back({Site.RelocSection, Addend, le64(New - Wr.SymbolValue)});
    if (Wr.InPlace)
      Edits.push_back({Site.WrapperSection, Site.WrapperOffset + 8, le64(New)});
  }
  if (Opts.ZeroOldBundles)
    for (size_t I = 0; I < Bundles.size(); ++I)
      if (IsChanged[I] && !reclaimed(I) &&
          !(I < Opts.LeftAsHoles.size() && Opts.LeftAsHoles[I]))
        Edits.push_back({BundleSites[I].Section, BundleSites[I].Offset,
                         std::vector<uint8_t>(Bundles[I].Bytes.size(), 0)});
  for (const Edit &E : Edits) {
    if (E.Section >= Host.sections().size())
      return makeError("internal error: section " + Twine(E.Section) +
                       " is not in the object");
    const Section &S = *Host.sections()[E.Section];
    if (S.isNoBits() || E.Offset > S.size() ||
        E.Bytes.size() > S.size() - E.Offset)
      return makeError("internal error: cannot write " + hex(E.Bytes.size()) +
                       " bytes at " + hex(E.Offset) + " of section '" + S.Name +
                       "'");
  }
  return std::move(Edits);
}

std::vector<uint32_t>
HostBinary::sectionsToRename(const Object &Host,
                             const std::vector<bool> &IsChanged) const {
  // Sections that held only replaced bundles, and that roc-obj-ls would
  // list, are renamed so that it lists the new bundles alone.
  std::set<uint32_t> StillUsed;
  for (size_t J = 0; J < Bundles.size(); ++J)
    if (!IsChanged[J] && !reclaimed(J))
      StillUsed.insert(BundleSites[J].Section);
  std::vector<uint32_t> Rename;
  std::set<uint32_t> Renamed;
  for (size_t I = 0; I < Bundles.size(); ++I) {
    if (!IsChanged[I] || reclaimed(I))
      continue; // (a reclaimed bundle's section is gone)
    uint32_t Sec = BundleSites[I].Section;
    if (!StillUsed.count(Sec) &&
        StringRef(Host.sections()[Sec]->Name).contains(".hip_fat") &&
        Renamed.insert(Sec).second)
      Rename.push_back(Sec);
  }
  return Rename;
}

} // namespace bundle
} // namespace hotswap
