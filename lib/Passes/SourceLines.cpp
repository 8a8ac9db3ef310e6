//===- lib/Passes/SourceLines.cpp - Source lines of code addresses --------===//

#include "hotswap/Passes/SourceLines.h"

#include "llvm/DebugInfo/DWARF/DWARFCompileUnit.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/DWARF/DWARFDebugLine.h"
#include "llvm/DebugInfo/DWARF/DWARFObject.h"
#include "llvm/Support/Error.h"

using namespace llvm;
using namespace hotswap;

namespace {
/// The DWARF sections of an object, as LLVM's reader asks for them.
class Sections final : public DWARFObject {
public:
  explicit Sections(const Object &Obj) {
    auto Get = [&](StringRef Name) -> StringRef {
      const Section *S = Obj.findSection(Name);
      if (!S || S->isNoBits())
        return "";
      ArrayRef<uint8_t> B = S->contents();
      return StringRef(reinterpret_cast<const char *>(B.data()), B.size());
    };
    Info.Data = Get(".debug_info");
    Abbrev = Get(".debug_abbrev");
    Line.Data = Get(".debug_line");
    Str = Get(".debug_str");
    LineStr = Get(".debug_line_str");
    StrOffsets.Data = Get(".debug_str_offsets");
    Addr.Data = Get(".debug_addr");
    Ranges.Data = Get(".debug_ranges");
    Rnglists.Data = Get(".debug_rnglists");
  }
  bool hasLines() const { return !Info.Data.empty() && !Line.Data.empty(); }

  bool isLittleEndian() const override { return true; }
  uint8_t getAddressSize() const override { return 8; }
  StringRef getFileName() const override { return ""; }
  void forEachInfoSections(
      function_ref<void(const DWARFSection &)> F) const override {
    F(Info);
  }
  StringRef getAbbrevSection() const override { return Abbrev; }
  const DWARFSection &getLineSection() const override { return Line; }
  StringRef getLineStrSection() const override { return LineStr; }
  StringRef getStrSection() const override { return Str; }
  const DWARFSection &getStrOffsetsSection() const override {
    return StrOffsets;
  }
  const DWARFSection &getAddrSection() const override { return Addr; }
  const DWARFSection &getRangesSection() const override { return Ranges; }
  const DWARFSection &getRnglistsSection() const override { return Rnglists; }
  std::optional<RelocAddrEntry> find(const DWARFSection &,
                                     uint64_t) const override {
    return std::nullopt; // a linked object has no relocations left
  }

private:
  DWARFSection Info, Line, StrOffsets, Addr, Ranges, Rnglists;
  StringRef Abbrev, Str, LineStr;
};
} // namespace

SourceLines::SourceLines(const Object &Obj) {
  auto S = std::make_unique<Sections>(Obj);
  if (!S->hasLines())
    return;
  // A malformed table gives no lines, never an error: lines are a help.
  Ctx = std::make_unique<DWARFContext>(
      std::move(S), "", [](Error E) { consumeError(std::move(E)); },
      [](Error E) { consumeError(std::move(E)); });
}

SourceLines::~SourceLines() = default;

std::optional<std::string> SourceLines::first(uint64_t Begin,
                                              uint64_t End) const {
  if (!Ctx)
    return std::nullopt;
  for (const std::unique_ptr<DWARFUnit> &CU : Ctx->compile_units()) {
    const DWARFDebugLine::LineTable *LT = Ctx->getLineTableForUnit(CU.get());
    if (!LT)
      continue;
    // Instructions are 4-byte aligned; a block's first lines are enough.
    for (uint64_t A = Begin; A < End && A < Begin + 256; A += 4) {
      DILineInfo Info;
      if (!LT->getFileLineInfoForAddress(
              {A, object::SectionedAddress::UndefSection},
              /*Approximate=*/false, CU->getCompilationDir(),
              DILineInfoSpecifier::FileLineInfoKind::RelativeFilePath, Info))
        break; // not this unit's code
      if (Info.Line)
        return Info.FileName + ":" + std::to_string(Info.Line);
    }
  }
  return std::nullopt;
}
