//===- hotswap/Code/Registers.h - Registers the code analyses track -*- C++
//-*-===//
//
// The registers whose values the code analyses follow, as LLVM MC register
// units (the smallest pieces registers are made of: a 16-bit half of a
// VGPR, one SGPR half, SCC...). Working on units makes overlap exact: a
// write of v[4:5] kills the units of v4 and v5, a write of v4.l only the
// low half of v4, and s[4:5] overlaps s5.
//
// Tracked: SGPRs, VGPRs, AGPRs, VCC, EXEC, M0 and SCC. Every other unit
// (TTMPs, MODE, FLAT_SCRATCH, the hardware constants) is not followed:
// reads and writes of them are ignored by liveness.
//
// One RegisterModel per MCRegisterInfo (that is, per LLVM target), built on
// first use and shared read-only.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_REGISTERS_H
#define HOTSWAP_CODE_REGISTERS_H

#include "llvm/ADT/BitVector.h"
#include "llvm/MC/MCRegister.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MCRegisterInfo;
} // namespace llvm

namespace hotswap {
namespace code {

enum class RegClass : uint8_t { Other, SGPR, VGPR, AGPR, VCC, EXEC, M0, SCC };

/// What one register unit is part of: s5 (SGPR, 5), v7 (VGPR, 7), vcc_hi
/// (VCC, 1), exec_lo (EXEC, 0).
struct RegUnitInfo {
  RegClass Class = RegClass::Other;
  uint16_t Index = 0;
};

/// A set of tracked register units.
using RegSet = llvm::BitVector;

class RegisterModel {
public:
  /// The model of \p MRI's target (built once, then shared).
  static const RegisterModel &get(const llvm::MCRegisterInfo &MRI);

  const llvm::MCRegisterInfo &regInfo() const { return MRI; }
  unsigned numUnits() const { return Units.size(); }
  const RegUnitInfo &unit(unsigned U) const { return Units[U]; }
  bool isTracked(unsigned U) const { return Units[U].Class != RegClass::Other; }
  /// An empty set sized for this model.
  RegSet emptySet() const { return RegSet(numUnits()); }

  /// Adds the tracked units of \p Reg to \p Set.
  void addUnits(llvm::MCRegister Reg, RegSet &Set) const;
  /// The same units, appended to \p Out (unsorted; no set to clear).
  void appendUnits(llvm::MCRegister Reg,
                   llvm::SmallVectorImpl<uint16_t> &Out) const;
  /// The class of \p Reg (that of its units; Other for a register with
  /// none tracked, or of mixed classes).
  RegClass classOf(llvm::MCRegister Reg) const;
  /// For an SGPR or a tuple of SGPRs: its first index and count.
  std::optional<std::pair<unsigned, unsigned>>
  sgprRange(llvm::MCRegister Reg) const;

  /// The units of SGPRs [First, First+Count), of VGPRs, of EXEC, ...
  void addSGPRs(unsigned First, unsigned Count, RegSet &Set) const;
  void addVGPRs(unsigned First, unsigned Count, RegSet &Set) const;
  void addClass(RegClass C, RegSet &Set) const;
  /// Every tracked unit.
  const RegSet &allTracked() const { return AllTracked; }

  /// The set as a person reads it: "s[0:5] s8 v[0:2] exec scc".
  std::string format(const RegSet &Set) const;
  /// The highest index of class \p C in \p Set (nullopt when none).
  std::optional<unsigned> highest(const RegSet &Set, RegClass C) const;

private:
  explicit RegisterModel(const llvm::MCRegisterInfo &MRI);
  const llvm::MCRegisterInfo &MRI;
  std::vector<RegUnitInfo> Units;
  /// Units of each class by index: SGPRUnits[5] are s5's units.
  std::vector<std::vector<unsigned>> ByClass[8];
  RegSet AllTracked;
  /// Per register, what the queries above answer, worked out once from
  /// its units (iterating a register's units is slow, and the analyses ask
  /// for every operand of every instruction).
  struct RegFacts {
    uint32_t UnitsBegin = 0; // in RegUnitList
    uint16_t NumUnits = 0;
    RegClass Class = RegClass::Other;
    uint16_t SGPRFirst = 0, SGPRCount = 0;
  };
  std::vector<RegFacts> Regs;
  std::vector<uint16_t> RegUnitList;
  const RegFacts *factsOf(llvm::MCRegister Reg) const {
    if (!Reg.isValid() || Reg.id() >= Regs.size())
      return nullptr;
    return &Regs[Reg.id()];
  }
};

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_REGISTERS_H
