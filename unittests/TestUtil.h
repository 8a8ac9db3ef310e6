//===- unittests/TestUtil.h - Helpers every gtest file may use --*- C++ -*-===//
//
// Objects built in memory from YAML (yaml2obj, as the lit tests use it),
// the compiled-in unittests/Inputs, error messages as strings, and
// little-endian reads of output bytes. One copy here instead of one per
// test file.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_UNITTESTS_TESTUTIL_H
#define HOTSWAP_UNITTESTS_TESTUTIL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <cstdint>
#include <string>
#include <vector>

/// Stops the test, with the error's message, unless the Expected \p E
/// holds a value.
#define ASSERT_OK(E) ASSERT_TRUE(bool(E)) << llvm::toString((E).takeError())
/// A test failure, with the message, when the Error \p X is one.
#define EXPECT_NO_ERR(X)                                                       \
  do {                                                                         \
    llvm::Error Err_ = (X);                                                    \
    EXPECT_FALSE(bool(Err_)) << llvm::toString(std::move(Err_));               \
  } while (false)

namespace hotswap::unittest {

/// The object yaml2obj makes of \p YAML; a test failure (with yaml2obj's
/// messages) and whatever it wrote when it cannot.
std::vector<uint8_t> yamlToBytes(llvm::StringRef YAML);

/// A linked gfx1030 code object (ET_DYN) with no kernels: one R+X PT_LOAD
/// at 0x1000 holding `.text`, \p TextSize zero bytes.
std::vector<uint8_t> textOnlyObject(uint64_t TextSize);

/// The text of unittests/Inputs/\p Name (compiled in: EmbedInputs.cmake);
/// a test failure and "" when there is no such input.
llvm::StringRef embeddedInput(llvm::StringRef Name);

/// The message of \p E's error, or "<success>".
template <typename T> std::string errorOf(llvm::Expected<T> E) {
  if (E)
    return "<success>";
  return llvm::toString(E.takeError());
}

/// Success when \p E holds a value; otherwise a failure with its message.
template <typename T> testing::AssertionResult isOk(llvm::Expected<T> &E) {
  if (E)
    return testing::AssertionSuccess();
  return testing::AssertionFailure() << llvm::toString(E.takeError());
}
template <typename T> testing::AssertionResult isOk(llvm::Expected<T> &&E) {
  return isOk(E);
}

inline uint16_t read16(llvm::ArrayRef<uint8_t> B, uint64_t Off) {
  return llvm::support::endian::read16le(B.data() + Off);
}
inline uint32_t read32(llvm::ArrayRef<uint8_t> B, uint64_t Off) {
  return llvm::support::endian::read32le(B.data() + Off);
}
inline uint64_t read64(llvm::ArrayRef<uint8_t> B, uint64_t Off) {
  return llvm::support::endian::read64le(B.data() + Off);
}

} // namespace hotswap::unittest

#endif // HOTSWAP_UNITTESTS_TESTUTIL_H
