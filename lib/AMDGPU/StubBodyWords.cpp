//===- lib/AMDGPU/StubBodyWords.cpp - Stub bodies, encoded directly -------===//
//
// The stub's instructions are SOP1 (s_getpc, s_setpc), SOP2 (s_add, s_addc)
// and SOPP (s_branch) words, whose formats are the same on every generation;
// only the SOP1 and SOPP opcodes moved (gfx8 renumbered SOP1, gfx10 went
// back, gfx11 renumbered both). Register fields hold the SGPR number, or 106
// and 107 for vcc_lo and vcc_hi.
//
//===----------------------------------------------------------------------===//

#include "hotswap/AMDGPU/StubBodyWords.h"

#include "llvm/Support/Endian.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

namespace {
struct Opcodes {
  uint32_t GetPC;  ///< SOP1 op of s_getpc_b64 / s_get_pc_i64 (s_setpc: +1)
  uint32_t Branch; ///< SOPP op of s_branch
};

std::optional<Opcodes> opcodesOf(Generation G) {
  switch (G) {
  case Generation::GFX6:
  case Generation::GFX7:
  case Generation::GFX10:
    return Opcodes{0x1f, 0x02};
  case Generation::GFX8:
  case Generation::GFX9:
    return Opcodes{0x1c, 0x02};
  case Generation::GFX11:
  case Generation::GFX12:
  case Generation::GFX125:
    return Opcodes{0x47, 0x20};
  }
  return std::nullopt;
}

uint32_t sop1(uint32_t Op, uint32_t SDst, uint32_t SSrc0) {
  return 0xbe800000u | SDst << 16 | Op << 8 | SSrc0;
}

/// s_add_u32 (Op 0) or s_addc_u32 (Op 4) of \p Reg and a literal into \p Reg
/// (s_add_co_u32 / s_add_co_ci_u32 on gfx12+, the same words).
uint32_t sop2Literal(uint32_t Op, uint32_t Reg) {
  constexpr uint32_t Literal = 0xff;
  return 0x80000000u | Op << 23 | Reg << 16 | Literal << 8 | Reg;
}
} // namespace

std::optional<std::vector<uint8_t>>
amdgpu::stubBodyWords(const TargetInfo &TI, StubSpec::RegKind Form,
                      unsigned SGPR) {
  std::optional<Opcodes> Op = opcodesOf(TI.Gen);
  if (!Op)
    return std::nullopt;
  std::vector<uint32_t> Words;
  if (Form == StubSpec::Short) {
    Words = {0xbf800000u | Op->Branch << 16};
  } else {
    constexpr uint32_t VCCLo = 106;
    if (Form == StubSpec::SGPRPair &&
        (SGPR % 2 != 0 || SGPR + 2 > TI.AddressableSGPRs))
      return std::nullopt;
    const uint32_t Lo = Form == StubSpec::VCC ? VCCLo : SGPR;
    Words = {sop1(Op->GetPC, Lo, 0),
             sop2Literal(0, Lo),
             0,
             sop2Literal(4, Lo + 1),
             0,
             sop1(Op->GetPC + 1, 0, Lo)};
  }
  std::vector<uint8_t> Bytes(Words.size() * 4);
  for (size_t I = 0; I < Words.size(); ++I)
    support::endian::write32le(Bytes.data() + 4 * I, Words[I]);
  return Bytes;
}
