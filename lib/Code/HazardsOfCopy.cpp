//===- lib/Code/HazardsOfCopy.cpp - Hazards a copy adds to its original ---===//
//
// A copy of a function with code inserted keeps every wait state and wait
// of the original between two original instructions (insertions only add
// instructions), except where inserted code took an instruction's place.
// So the hazards to look for are those that touch inserted code, and
// those between original instructions that the original does not have.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/TargetMC.h"
#include "hotswap/Code/Hazards.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/MC/MCInst.h"

#include <set>
#include <tuple>

using namespace llvm;
using namespace hotswap;
using namespace hotswap::code;

std::vector<NewHazard>
code::newHazards(const amdgpu::TargetMC &MC, const HazardRules &Rules,
                 FunctionKind Kind, const FunctionCFG &G,
                 ArrayRef<MCInst> Decoded, const FunctionCFG &CopyG,
                 ArrayRef<MCInst> CopyDecoded, ArrayRef<uint64_t> InsnAddr,
                 ArrayRef<uint32_t> Replaced) {
  std::vector<NewHazard> Out;
  // The original's code is read only for hazards between two original
  // instructions (made on first need: most copies have none).
  std::optional<HazardCode> Orig;
  HazardCode Copy(MC, CopyG, CopyDecoded, Kind);
  const uint32_t OrigSize = uint32_t(std::min(G.Insns.size(), Decoded.size()));
  // Copy instruction -> original instruction, for the copies of original
  // instructions (a replaced one's address is where its replacement
  // starts: that is inserted code).
  DenseMap<uint64_t, uint32_t> OrigAt;
  for (uint32_t I = 0; I < InsnAddr.size() && I < OrigSize; ++I)
    if (!llvm::is_contained(Replaced, I))
      OrigAt[InsnAddr[I]] = I;
  auto OrigOf = [&](uint32_t J) -> std::optional<uint32_t> {
    if (J == HazardCode::None)
      return HazardCode::None;
    auto It = OrigAt.find(Copy.addr(J));
    if (It == OrigAt.end())
      return std::nullopt;
    return It->second;
  };
  // The original's hazards by (kind, from, to), computed per instruction
  // on first need.
  std::set<std::tuple<HazardKind, uint32_t, uint32_t>> Known;
  std::vector<bool> Done(OrigSize);
  std::vector<Hazard> Found;
  for (uint32_t J = 0; J < Copy.size(); ++J) {
    Found.clear();
    findHazards(Copy, Rules, J, Found);
    for (const Hazard &H : Found) {
      std::optional<uint32_t> To = OrigOf(H.To), From = OrigOf(H.From);
      if (To && From && (!H.Origin || OrigOf(*H.Origin))) {
        if (!Done[*To]) {
          if (!Orig)
            Orig.emplace(MC, G, Decoded, Kind);
          std::vector<Hazard> O;
          findHazards(*Orig, Rules, *To, O);
          for (const Hazard &X : O)
            Known.insert({X.Kind, X.From, X.To});
          Done[*To] = true;
        }
        if (Known.count({H.Kind, *From, *To}))
          continue;
      }
      Out.push_back({H, describeHazard(Copy, H)});
    }
  }
  return Out;
}
