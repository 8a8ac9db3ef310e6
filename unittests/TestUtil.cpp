//===- unittests/TestUtil.cpp - Helpers every gtest file may use ----------===//

#include "TestUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ObjectYAML/yaml2obj.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace hotswap::unittest {

namespace {

/// The obj2yaml texts of unittests/Inputs/*.yaml as string literals
/// (UnittestInputs.inc, made by EmbedInputs.cmake).
struct EmbeddedInput {
  const char *Name;
  const char *YAML;
};

constexpr EmbeddedInput EmbeddedInputs[] = {
#include "UnittestInputs.inc"
};

} // namespace

std::vector<uint8_t> yamlToBytes(StringRef YAML) {
  SmallString<0> Storage;
  raw_svector_ostream OS(Storage);
  yaml::Input YIn(YAML);
  std::string Errors;
  bool OK = yaml::convertYAML(
      YIn, OS, [&](const Twine &Msg) { Errors += Msg.str() + "\n"; });
  EXPECT_TRUE(OK) << Errors << YAML.str();
  return std::vector<uint8_t>(Storage.begin(), Storage.end());
}

std::vector<uint8_t> textOnlyObject(uint64_t TextSize) {
  return yamlToBytes((Twine(R"(--- !ELF
FileHeader:
  Class:   ELFCLASS64
  Data:    ELFDATA2LSB
  OSABI:   ELFOSABI_AMDGPU_HSA
  ABIVersion: 0x4
  Type:    ET_DYN
  Machine: EM_AMDGPU
  Flags:   [ EF_AMDGPU_MACH_AMDGCN_GFX1030 ]
ProgramHeaders:
  - Type:     PT_LOAD
    Flags:    [ PF_X, PF_R ]
    FirstSec: .text
    LastSec:  .text
    VAddr:    0x1000
    Align:    0x1000
    Offset:   0x1000
Sections:
  - Name:         .text
    Type:         SHT_PROGBITS
    Flags:        [ SHF_ALLOC, SHF_EXECINSTR ]
    Address:      0x1000
    AddressAlign: 0x100
    Offset:       0x1000
    Size:         )") +
                      "0x" + utohexstr(TextSize) + "\n...\n")
                         .str());
}

StringRef embeddedInput(StringRef Name) {
  for (const EmbeddedInput &E : EmbeddedInputs)
    if (Name == E.Name)
      return E.YAML;
  ADD_FAILURE() << "no embedded input '" << Name.str() << "'";
  return "";
}

} // namespace hotswap::unittest
