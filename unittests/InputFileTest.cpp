//===- unittests/InputFileTest.cpp - InputFile and large buffers ----------===//

#include "hotswap/Object/InputFile.h"
#include "hotswap/Support/LargeBuffer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace llvm;
using namespace hotswap;

namespace {

/// A temporary file of \p Size bytes, byte I being I * 7 mod 251.
struct TempFile {
  SmallString<128> Path;
  explicit TempFile(size_t Size) {
    int FD;
    EXPECT_FALSE(
        sys::fs::createTemporaryFile("hotswap-input", "bin", FD, Path));
    raw_fd_ostream OS(FD, /*shouldClose=*/true);
    for (size_t I = 0; I < Size; ++I)
      OS << static_cast<char>(I * 7 % 251);
  }
  ~TempFile() { sys::fs::remove(Path); }
};

bool holdsPattern(ArrayRef<uint8_t> B) {
  for (size_t I = 0; I < B.size(); ++I)
    if (B[I] != static_cast<uint8_t>(I * 7 % 251))
      return false;
  return true;
}

// Released pages of a mapped input read back the file's bytes; so do
// released ranges that are not whole pages, ranges outside the input, and
// inputs read into memory rather than mapped (for which release is a no-op).
TEST(InputFile, ReleasedBytesReadBackFromTheFile) {
  for (size_t Size : {size_t(100), size_t(3) << 20}) {
    TempFile F(Size);
    Expected<InputFile> In = InputFile::open(F.Path);
    ASSERT_TRUE(bool(In)) << toString(In.takeError());
    ArrayRef<uint8_t> B = In->bytes();
    ASSERT_EQ(B.size(), Size);
    ASSERT_TRUE(holdsPattern(B));
    In->release(B.slice(B.size() / 3, B.size() / 3));
    In->release(B.take_front(1));
    In->release(B);
    uint8_t Outside[64] = {};
    In->release(ArrayRef<uint8_t>(Outside));
    EXPECT_TRUE(holdsPattern(B)) << "size " << Size;
    for (uint8_t V : Outside)
      EXPECT_EQ(V, 0);
  }
}

TEST(LargeBuffer, ReservesWithoutHoldingBytes) {
  for (size_t Size : {size_t(0), size_t(10), size_t(64) << 20}) {
    std::vector<uint8_t> V = largeBuffer(Size);
    EXPECT_TRUE(V.empty());
    EXPECT_GE(V.capacity(), Size);
    const uint8_t *Data = V.data();
    V.resize(Size, 0x5a);
    // No reallocation while it fills up to the size reserved.
    if (Size)
      EXPECT_EQ(V.data(), Data);
    EXPECT_EQ(std::count(V.begin(), V.end(), 0x5a), static_cast<long>(Size));
  }
}

} // namespace
