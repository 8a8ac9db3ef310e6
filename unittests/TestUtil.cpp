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

StringRef embeddedInput(StringRef Name) {
  for (const EmbeddedInput &E : EmbeddedInputs)
    if (Name == E.Name)
      return E.YAML;
  ADD_FAILURE() << "no embedded input '" << Name.str() << "'";
  return "";
}

} // namespace hotswap::unittest
