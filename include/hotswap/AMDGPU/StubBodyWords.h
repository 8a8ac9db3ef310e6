//===- hotswap/AMDGPU/StubBodyWords.h - Stub bodies directly -*- C++ -*-===//
//
// A second encoder, of the stub's jump sequence only: its SOP1/SOP2/SOPP
// words put together from the opcodes of each generation, for the encoders
// that would otherwise start LLVM's MC assembler for a few instructions (on
// a small code object that was a quarter of the run). MC stays the
// reference: StubBodyWordsTest checks every body this gives against MC's
// output, for every processor TargetInfo knows, every scratch pair and VCC,
// and StubEncoder assembles with MC whatever this does not give.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_AMDGPU_STUBBODYWORDS_H
#define HOTSWAP_AMDGPU_STUBBODYWORDS_H

#include "hotswap/AMDGPU/StubEncoder.h"
#include "hotswap/AMDGPU/TargetInfo.h"

#include <optional>
#include <vector>

namespace hotswap {
namespace amdgpu {

/// The jump sequence of a \p Form stub on \p TI with its literals (or the
/// branch offset) zero, as StubEncoder::longFormAsm(Form, SGPR, 0, 0) or
/// shortFormAsm(0) assembles: s_getpc, s_add with a literal, s_addc with a
/// literal, s_setpc on the pair (24 bytes), or s_branch (4 bytes). None for
/// a processor or pair it does not know.
std::optional<std::vector<uint8_t>>
stubBodyWords(const TargetInfo &TI, StubSpec::RegKind Form, unsigned SGPR);

} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_AMDGPU_STUBBODYWORDS_H
