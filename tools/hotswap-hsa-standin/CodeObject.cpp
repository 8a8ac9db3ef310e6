//===- CodeObject.cpp - What the stand-in loads of a code object ----------===//

#include "CodeObject.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace llvm;
using namespace llvm::object;

namespace hotswap_standin {

Expected<CodeObject> readCodeObject(const std::string &Path) {
  auto Binary = ObjectFile::createObjectFile(Path);
  if (!Binary)
    return Binary.takeError();
  auto *Elf = dyn_cast<ELF64LEObjectFile>(Binary->getBinary());
  if (!Elf)
    return createStringError("'%s' is not a 64-bit little-endian ELF file",
                             Path.c_str());
  auto Phdrs = Elf->getELFFile().program_headers();
  if (!Phdrs)
    return Phdrs.takeError();
  uint64_t Low = UINT64_MAX, High = 0;
  for (const auto &Phdr : *Phdrs) {
    if (Phdr.p_type != ELF::PT_LOAD)
      continue;
    std::optional<uint64_t> End =
        checkedAddUnsigned<uint64_t>(Phdr.p_vaddr, Phdr.p_memsz);
    if (!End)
      return createStringError("'%s': a PT_LOAD segment ends past 2^64",
                               Path.c_str());
    Low = std::min<uint64_t>(Low, Phdr.p_vaddr);
    High = std::max(High, *End);
  }
  if (Low == UINT64_MAX)
    return createStringError("'%s' has no PT_LOAD segment", Path.c_str());

  CodeObject Out;
  Out.LoadSize = High - Low;
  for (const ELFSymbolRef &Sym : Elf->symbols()) {
    if (Sym.getELFType() != ELF::STT_OBJECT ||
        Sym.getBinding() != ELF::STB_GLOBAL)
      continue;
    auto Section = Sym.getSection();
    if (!Section)
      return Section.takeError();
    if (*Section == Elf->section_end())
      continue; // undefined: nothing to load
    auto Name = Sym.getName();
    if (!Name)
      return Name.takeError();
    auto Value = Sym.getValue();
    if (!Value)
      return Value.takeError();
    uint64_t Size = Sym.getSize();
    if (*Value < Low || *Value - Low > Out.LoadSize ||
        Size > Out.LoadSize - (*Value - Low))
      return createStringError("'%s': symbol '%s' lies outside the loaded "
                               "segments",
                               Path.c_str(), Name->str().c_str());
    Out.Symbols.push_back({Name->str(), *Value - Low, Size});
  }
  return Out;
}

} // namespace hotswap_standin
