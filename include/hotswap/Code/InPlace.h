//===- hotswap/Code/InPlace.h - Code run from a site, in place --*- C++ -*-===//
//
// The other placement of code inserted at a site (besides a copy of the
// whole function, Relocate.h): the site's instruction becomes a branch to
// a body in the run's appended code, which runs what was inserted (and the
// instruction, unless it is replaced) and branches back to the instruction
// after the site. Nothing else of the function changes.
//
//   site:  s_branch body          ; the slot: the site's bytes,
//          s_nop 0 ...            ; the rest never runs
//   body:  [s_waitcnt_vscnt null, 0x0]   ; targets with the gfx10 LDS /
//          inserted code and/or the site's instruction, as asked
//          [s_waitcnt_vscnt null, 0x0]   ; branch / VMEM hazard
//          s_branch site + size
//
// A branch reaches 2^15 dwords either way: a body beyond that is out of
// reach (the client copies the function or refuses the site). The
// instruction moves, so it must not depend on where it is: not control
// flow, not s_getpc_b64. The two branches are the one hazard a straight
// splice of the body does not show: on targets with the LDS / branch /
// VMEM hazard, a wait for the store counter at either end of the body
// separates every LDS or VMEM operation before a branch from every one
// after it.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_CODE_INPLACE_H
#define HOTSWAP_CODE_INPLACE_H

#include "hotswap/Code/CFG.h"
#include "hotswap/Code/SiteSafety.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MCInst;
} // namespace llvm

namespace hotswap {
namespace amdgpu {
class TargetMC;
} // namespace amdgpu
namespace code {

/// The offset operand of an s_branch at \p From that lands on \p To: a
/// count of dwords after the branch, or nullopt when it does not reach (or
/// is one the target's branch offset erratum forbids, \p Offset3fBug).
std::optional<int16_t> branchOffset(uint64_t From, uint64_t To,
                                    bool Offset3fBug);

/// Why the instruction \p I of \p G (decoded: \p MI) cannot run from a
/// body elsewhere (empty: it can).
std::string movableRefusal(const amdgpu::TargetMC &MC, const FunctionCFG &G,
                           const llvm::MCInst &MI, uint32_t I);

/// Whether bodies on \p MC's target wait for stores at both ends (the
/// LDS / branch / VMEM hazard).
bool bodyWaitsAtEnds(const amdgpu::TargetMC &MC);

/// One site's body, laid out at an address.
struct InPlaceBody {
  std::vector<uint8_t> Bytes;
  /// Offsets in Bytes of the inserted code [Begin, End), and of the site's
  /// instruction (where=before or after).
  uint64_t InsertBegin = 0, InsertEnd = 0;
  std::optional<uint64_t> OrigAt;
};

/// The body for site \p Where at \p Site (its instruction's bytes
/// \p Orig), with \p Inserted, placed at \p At.
llvm::Expected<InPlaceBody> inPlaceBody(const amdgpu::TargetMC &MC,
                                        SiteWhere Where, uint64_t Site,
                                        llvm::ArrayRef<uint8_t> Orig,
                                        llvm::ArrayRef<uint8_t> Inserted,
                                        uint64_t At);

/// How many bytes inPlaceBody makes for \p Inserted and a site \p OrigSize
/// bytes long.
uint64_t inPlaceBodySize(const amdgpu::TargetMC &MC, SiteWhere Where,
                         uint64_t OrigSize, uint64_t InsertedSize);

/// The slot's bytes: a branch from \p Site to \p Body, then s_nop 0 up to
/// \p Size bytes. An error when it does not reach.
llvm::Expected<std::vector<uint8_t>> inPlaceSlot(const amdgpu::TargetMC &MC,
                                                 uint64_t Site, uint64_t Size,
                                                 uint64_t Body);

/// What is wrong with the body \p Body at \p At for a site at \p Site of
/// \p Orig.size() bytes whose instruction is \p Orig: the layout above,
/// read from the bytes (the inserted code's range is \p InsertBegin to
/// \p InsertEnd, offsets in \p Body). Empty: it is that layout.
std::vector<std::string>
checkInPlaceBody(const amdgpu::TargetMC &MC, SiteWhere Where, uint64_t Site,
                 llvm::ArrayRef<uint8_t> Orig, llvm::ArrayRef<uint8_t> Body,
                 uint64_t At, uint64_t InsertBegin, uint64_t InsertEnd);

/// What is wrong with the slot \p Slot at \p Site: not a branch to
/// \p Body followed by s_nop 0 only (empty: it is).
std::string checkInPlaceSlot(const amdgpu::TargetMC &MC,
                             llvm::ArrayRef<uint8_t> Slot, uint64_t Site,
                             uint64_t Body);

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_INPLACE_H
