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
// A branch reaches 2^15 dwords either way. A body beyond that is reached
// through a gateway: a long jump (LongJump.h) in padding between functions
// within reach of the site, with registers dead at the site; the body then
// returns with a long jump of its own, with registers dead after the site.
//
//   site:    s_branch gateway
//   gateway: s_getpc_b64 s[p:p+1]; s_add_u32; s_addc_u32; s_setpc_b64
//   body:    ... ; long jump to site + size
//
// A long jump is SALU code writing only registers dead where it runs (SCC
// kept in one when live); its s_setpc_b64 is a branch, which the waits at
// the body's ends cover like the others. Without a gateway the client
// copies the function or refuses the site. The
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

#include "hotswap/AMDGPU/TargetInfo.h"
#include "hotswap/Code/CFG.h"
#include "hotswap/Code/Functions.h"
#include "hotswap/Code/LongJump.h"
#include "hotswap/Code/Registers.h"
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
/// \p Orig), with \p Inserted, placed at \p At; it returns with a long
/// jump with registers \p Back when given, else with a branch.
llvm::Expected<InPlaceBody>
inPlaceBody(const amdgpu::TargetMC &MC, SiteWhere Where, uint64_t Site,
            llvm::ArrayRef<uint8_t> Orig, llvm::ArrayRef<uint8_t> Inserted,
            uint64_t At, const LongJumpRegs *Back = nullptr);

/// How many bytes inPlaceBody makes for \p Inserted and a site \p OrigSize
/// bytes long.
uint64_t inPlaceBodySize(const amdgpu::TargetMC &MC, SiteWhere Where,
                         uint64_t OrigSize, uint64_t InsertedSize,
                         const LongJumpRegs *Back = nullptr);

/// What a gateway or a long jump back may write at a seam whose registers
/// are \p Free: SCC, and SGPRs of Free.Scratch that the function's code
/// names (\p Named): never one that code of a client alone holds (a
/// register reserved above the function's, one the launch sets that the
/// code never reads).
RegSet jumpScratch(const RegisterModel &RM, const SiteRegisters &Free,
                   const RegSet &Named);

/// The registers of a gateway or a long jump back at a seam (jumpScratch),
/// on a target of generation \p Gen (gfx12 waits for its SALU writes);
/// nullopt when there are none.
std::optional<LongJumpRegs> jumpRegisters(const RegisterModel &RM,
                                          const SiteRegisters &Free,
                                          const RegSet &Named,
                                          amdgpu::Generation Gen);

/// Whether \p Gap of \p M may hold gateways: padding (s_nop, s_code_end or
/// zero words) that ends where a function starts, word-aligned, shorter
/// than the 256 bytes functions align to (not the tail after the last
/// function, nor bytes a function's size leaves out).
bool isGatewayRoom(const CodeGap &Gap, const FunctionMap &M);

/// A gateway at \p At: a long jump with registers \p Regs to \p Body.
llvm::Expected<std::vector<uint8_t>> gatewayCode(const amdgpu::TargetMC &MC,
                                                 const LongJumpRegs &Regs,
                                                 uint64_t At, uint64_t Body);

/// The long jump \p Bytes at \p At are, read back (an error says how they
/// are not one, or not byte for byte the one gatewayCode makes of it).
llvm::Expected<ReadRelaxation> readLongJump(const amdgpu::TargetMC &MC,
                                            llvm::ArrayRef<uint8_t> Bytes,
                                            uint64_t At);

/// The slot's bytes: a branch from \p Site to \p Body, then s_nop 0 up to
/// \p Size bytes. An error when it does not reach.
llvm::Expected<std::vector<uint8_t>> inPlaceSlot(const amdgpu::TargetMC &MC,
                                                 uint64_t Site, uint64_t Size,
                                                 uint64_t Body);

/// What is wrong with the body \p Body at \p At for a site at \p Site of
/// \p Orig.size() bytes whose instruction is \p Orig: the layout above,
/// read from the bytes (the inserted code's range is \p InsertBegin to
/// \p InsertEnd, offsets in \p Body). Empty: it is that layout. A body
/// that returns with a long jump has it read back into \p Back (which
/// must be given for one).
std::vector<std::string>
checkInPlaceBody(const amdgpu::TargetMC &MC, SiteWhere Where, uint64_t Site,
                 llvm::ArrayRef<uint8_t> Orig, llvm::ArrayRef<uint8_t> Body,
                 uint64_t At, uint64_t InsertBegin, uint64_t InsertEnd,
                 std::optional<ReadRelaxation> *Back = nullptr);

/// What is wrong with the slot \p Slot at \p Site: not a branch to
/// \p Body (what the message calls \p What: its body, its gateway)
/// followed by s_nop 0 only (empty: it is).
std::string checkInPlaceSlot(const amdgpu::TargetMC &MC,
                             llvm::ArrayRef<uint8_t> Slot, uint64_t Site,
                             uint64_t Body, llvm::StringRef What = "its body");

} // namespace code
} // namespace hotswap

#endif // HOTSWAP_CODE_INPLACE_H
