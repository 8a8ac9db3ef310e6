//===- lib/Code/Registers.cpp - Registers the code analyses track --------===//

#include "hotswap/Code/Registers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCRegisterInfo.h"

#include <memory>
#include <mutex>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

/// What a unit's root register name says: "SGPR5_LO16" is s5, "VCC_HI" the
/// high half of VCC.
static RegUnitInfo classifyRoot(StringRef Name) {
  Name.consume_back("_LO16") || Name.consume_back("_HI16");
  auto Indexed = [&](StringRef Prefix,
                     RegClass C) -> std::optional<RegUnitInfo> {
    StringRef Rest = Name;
    unsigned N = 0;
    if (!Rest.consume_front(Prefix) || Rest.empty() ||
        Rest.getAsInteger(10, N) || N > 0xffff)
      return std::nullopt;
    return RegUnitInfo{C, static_cast<uint16_t>(N)};
  };
  if (auto R = Indexed("SGPR", RegClass::SGPR))
    return *R;
  if (auto R = Indexed("VGPR", RegClass::VGPR))
    return *R;
  if (auto R = Indexed("AGPR", RegClass::AGPR))
    return *R;
  if (Name == "VCC_LO")
    return {RegClass::VCC, 0};
  if (Name == "VCC_HI")
    return {RegClass::VCC, 1};
  if (Name == "EXEC_LO")
    return {RegClass::EXEC, 0};
  if (Name == "EXEC_HI")
    return {RegClass::EXEC, 1};
  // LLVM names M0 by the encoding it has: M0_gfxpre11, M0_gfx11plus.
  if (Name == "M0" || Name.starts_with("M0_gfx"))
    return {RegClass::M0, 0};
  if (Name == "SCC")
    return {RegClass::SCC, 0};
  return {};
}

RegisterModel::RegisterModel(const MCRegisterInfo &MRI) : MRI(MRI) {
  Units.resize(MRI.getNumRegUnits());
  for (unsigned U = 0; U < Units.size(); ++U) {
    MCRegUnitRootIterator Root(static_cast<MCRegUnit>(U), &MRI);
    if (!Root.isValid())
      continue;
    RegUnitInfo I = classifyRoot(MRI.getName(*Root));
    Units[U] = I;
    if (I.Class == RegClass::Other)
      continue;
    auto &V = ByClass[static_cast<unsigned>(I.Class)];
    if (V.size() <= I.Index)
      V.resize(I.Index + 1);
    V[I.Index].push_back(U);
  }
  AllTracked = emptySet();
  for (unsigned U = 0; U < Units.size(); ++U)
    if (isTracked(U))
      AllTracked.set(U);
  Regs.resize(MRI.getNumRegs());
  for (unsigned R = 1; R < Regs.size(); ++R) {
    RegFacts &F = Regs[R];
    F.UnitsBegin = uint32_t(RegUnitList.size());
    // Its tracked units; M0 is one register under three names (M0, and
    // M0_gfxpre11 or M0_gfx11plus as the decoder gives it), each with
    // units of its own: any of them stands for all.
    for (MCRegUnit U : MRI.regunits(MCRegister(R))) {
      unsigned I = static_cast<unsigned>(U);
      if (Units[I].Class == RegClass::M0) {
        for (const auto &Us : ByClass[static_cast<unsigned>(RegClass::M0)])
          for (unsigned X : Us)
            RegUnitList.push_back(uint16_t(X));
        break;
      }
      if (Units[I].Class != RegClass::Other)
        RegUnitList.push_back(uint16_t(I));
    }
    F.NumUnits = uint16_t(RegUnitList.size() - F.UnitsBegin);
    // Its class: that of its units, Other for none or mixed ones.
    std::optional<RegClass> C;
    bool Mixed = false;
    unsigned Lo = ~0u, Hi = 0;
    for (MCRegUnit U : MRI.regunits(MCRegister(R))) {
      const RegUnitInfo &UI = Units[static_cast<unsigned>(U)];
      Mixed |= C && *C != UI.Class;
      C = UI.Class;
      Lo = std::min<unsigned>(Lo, UI.Index);
      Hi = std::max<unsigned>(Hi, UI.Index);
    }
    F.Class = Mixed ? RegClass::Other : C.value_or(RegClass::Other);
    if (F.Class == RegClass::SGPR) {
      F.SGPRFirst = uint16_t(Lo);
      F.SGPRCount = uint16_t(Hi - Lo + 1);
    }
  }
}

const RegisterModel &RegisterModel::get(const MCRegisterInfo &MRI) {
  static std::mutex M;
  static DenseMap<const MCRegisterInfo *, std::unique_ptr<RegisterModel>>
      Models;
  std::lock_guard<std::mutex> L(M);
  auto &Slot = Models[&MRI];
  if (!Slot)
    Slot.reset(new RegisterModel(MRI));
  return *Slot;
}

void RegisterModel::addUnits(MCRegister Reg, RegSet &Set) const {
  if (const RegFacts *F = factsOf(Reg))
    for (uint16_t U : ArrayRef(RegUnitList).slice(F->UnitsBegin, F->NumUnits))
      Set.set(U);
}

void RegisterModel::appendUnits(MCRegister Reg,
                                SmallVectorImpl<uint16_t> &Out) const {
  if (const RegFacts *F = factsOf(Reg))
    llvm::append_range(Out,
                       ArrayRef(RegUnitList).slice(F->UnitsBegin, F->NumUnits));
}

RegClass RegisterModel::classOf(MCRegister Reg) const {
  const RegFacts *F = factsOf(Reg);
  return F ? F->Class : RegClass::Other;
}

std::optional<std::pair<unsigned, unsigned>>
RegisterModel::sgprRange(MCRegister Reg) const {
  const RegFacts *F = factsOf(Reg);
  if (!F || F->Class != RegClass::SGPR)
    return std::nullopt;
  return std::make_pair(unsigned(F->SGPRFirst), unsigned(F->SGPRCount));
}

void RegisterModel::addSGPRs(unsigned First, unsigned Count,
                             RegSet &Set) const {
  const auto &V = ByClass[static_cast<unsigned>(RegClass::SGPR)];
  for (unsigned I = First; I < First + Count && I < V.size(); ++I)
    for (unsigned U : V[I])
      Set.set(U);
}

void RegisterModel::addVGPRs(unsigned First, unsigned Count,
                             RegSet &Set) const {
  const auto &V = ByClass[static_cast<unsigned>(RegClass::VGPR)];
  for (unsigned I = First; I < First + Count && I < V.size(); ++I)
    for (unsigned U : V[I])
      Set.set(U);
}

void RegisterModel::addClass(RegClass C, RegSet &Set) const {
  for (const auto &Us : ByClass[static_cast<unsigned>(C)])
    for (unsigned U : Us)
      Set.set(U);
}

std::optional<unsigned> RegisterModel::highest(const RegSet &Set,
                                               RegClass C) const {
  const auto &V = ByClass[static_cast<unsigned>(C)];
  for (unsigned I = V.size(); I-- > 0;)
    for (unsigned U : V[I])
      if (U < Set.size() && Set.test(U))
        return I;
  return std::nullopt;
}

std::string RegisterModel::format(const RegSet &Set) const {
  std::string Out;
  auto Add = [&](const std::string &S) {
    if (!Out.empty())
      Out += ' ';
    Out += S;
  };
  auto Any = [&](RegClass C, unsigned I) {
    const auto &V = ByClass[static_cast<unsigned>(C)];
    if (I >= V.size())
      return false;
    for (unsigned U : V[I])
      if (U < Set.size() && Set.test(U))
        return true;
    return false;
  };
  // Runs of indexed registers: s[0:5], v7.
  for (auto [C, P] :
       {std::pair{RegClass::SGPR, 's'}, std::pair{RegClass::VGPR, 'v'},
        std::pair{RegClass::AGPR, 'a'}}) {
    unsigned N = ByClass[static_cast<unsigned>(C)].size();
    for (unsigned I = 0; I < N;) {
      if (!Any(C, I)) {
        ++I;
        continue;
      }
      unsigned J = I;
      while (J + 1 < N && Any(C, J + 1))
        ++J;
      if (I == J)
        Add(std::string(1, P) + utostr(I));
      else
        Add(std::string(1, P) + "[" + utostr(I) + ":" + utostr(J) + "]");
      I = J + 1;
    }
  }
  for (auto [C, Name] :
       {std::pair{RegClass::VCC, "vcc"}, std::pair{RegClass::EXEC, "exec"}}) {
    bool Lo = Any(C, 0), Hi = Any(C, 1);
    if (Lo && Hi)
      Add(Name);
    else if (Lo)
      Add(std::string(Name) + "_lo");
    else if (Hi)
      Add(std::string(Name) + "_hi");
  }
  if (Any(RegClass::M0, 0))
    Add("m0");
  if (Any(RegClass::SCC, 0))
    Add("scc");
  return Out;
}
