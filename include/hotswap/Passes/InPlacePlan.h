//===- hotswap/Passes/InPlacePlan.h - Sites patched in place ----*- C++ -*-===//
//
// patch-insns<place=site> (PatchInsns.h): which kernels have their sites
// patched in place (Code/InPlace.h) and where each site's body goes in the
// run's appended code; then placing them. A kernel is patched in place
// when every site of it is: its instruction can move (not control flow,
// not reading the PC), no two bodies share it, and the site and its body
// reach each other with a branch, or through a gateway in padding between
// functions within the site's reach. Bodies follow each other from the first
// address of the run's appended code, in kernel and site order; a kernel
// that cannot be patched in place leaves the layout, which brings the
// others nearer, until every kernel left reaches.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_PASSES_INPLACEPLAN_H
#define HOTSWAP_PASSES_INPLACEPLAN_H

#include "hotswap/Code/InPlace.h"
#include "hotswap/Passes/Kernels.h"
#include "hotswap/Passes/SitePlanner.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hotswap {

struct PassContext;

/// One site patched in place.
struct InPlaceSite {
  /// Its kernel (an index of the plan's KernelSites) and site.
  size_t Kernel = 0, Site = 0;
  uint64_t Addr = 0;
  std::vector<uint8_t> Orig, Slot;
  uint64_t BodyAddr = 0;
  code::InPlaceBody Body;
  /// The gateway the site branches to, when its body is out of reach.
  std::optional<uint64_t> Gateway;
  std::vector<uint8_t> GatewayBytes;
};

struct InPlacePlan {
  /// Where the bodies start.
  uint64_t Base = 0;
  /// Per KernelSites: whether its sites go in place, and, for one with
  /// sites applied that does not, why, and at which of its sites.
  std::vector<char> InPlace;
  std::vector<std::string> Why;
  std::vector<size_t> WhySite;

  /// Why kernel \p K (an index of the plan's KernelSites) is not patched in
  /// place, naming the site (empty: it is, or it has no site applied).
  std::string whyNot(const std::vector<KernelSites> &All, size_t K) const;
  std::vector<InPlaceSite> Sites;
};

/// Decides which of \p All (planned with SiteRule::KeepCode and
/// LongJumps) go in place, their bodies from where the run's appended code
/// of \p Obj would start, their gateways in the padding of \p M. With
/// \p FarFail, the sites of the others are refused (SitePlan::Refusal),
/// else they are left to a copy.
llvm::Expected<InPlacePlan> planInPlace(Object &Obj, const amdgpu::TargetMC &MC,
                                        const code::FunctionMap &M,
                                        std::vector<KernelSites> &All,
                                        bool FarFail);

/// Places \p P: the bodies in one `.hotswap.patch.text` region (which must
/// start at P.Base), each site's slot, the descriptors of the kernels in
/// place (raised by growDescriptors), and a `.hotswap.patches` line per
/// site. \p M names the functions of \p All.
llvm::Error placeInPlace(Object &Obj, KernelsAnalysis::Result &R,
                         const code::FunctionMap &M,
                         llvm::ArrayRef<KernelSites> All, const InPlacePlan &P);

} // namespace hotswap

#endif // HOTSWAP_PASSES_INPLACEPLAN_H
