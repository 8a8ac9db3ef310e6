//===- unittests/InputFileTest.cpp - InputFile and large buffers ----------===//

#include "hotswap/Object/InputFile.h"
#include "hotswap/Support/LargeBuffer.h"

#include "HugePageHeap.h" // tools/hotswap-opt: the driver's heap

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>

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

// Releasing pages as they are read is worth it for a mapped input of
// ReleaseFrom bytes or more only.
TEST(InputFile, OnlyLargeMappedInputsAreWorthReleasing) {
  for (size_t Size : {size_t(100), size_t(InputFile::ReleaseFrom) - 1,
                      size_t(InputFile::ReleaseFrom)}) {
    TempFile F(Size);
    Expected<InputFile> In = InputFile::open(F.Path);
    ASSERT_TRUE(bool(In)) << toString(In.takeError());
    EXPECT_EQ(In->worthReleasing(), Size >= InputFile::ReleaseFrom)
        << "size " << Size;
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

/// The first line of /proc/self/smaps about the mapping that holds \p P,
/// and its VmFlags.
struct Mapping {
  std::string Header, Flags;
};
std::optional<Mapping> mappingAt(const void *P) {
  auto Buf = MemoryBuffer::getFileAsStream("/proc/self/smaps");
  if (!Buf)
    return std::nullopt;
  const auto Addr = reinterpret_cast<uintptr_t>(P);
  std::optional<Mapping> M;
  SmallVector<StringRef, 0> Lines;
  (*Buf)->getBuffer().split(Lines, '\n');
  for (StringRef Line : Lines) {
    uint64_t Begin, End;
    StringRef Range = Line.split(' ').first;
    auto [B, E] = Range.split('-');
    if (!B.getAsInteger(16, Begin) && !E.getAsInteger(16, End)) {
      if (M)
        break;
      if (Begin <= Addr && Addr < End)
        M = Mapping{Line.str(), ""};
      continue;
    }
    if (M && Line.consume_front("VmFlags:"))
      M->Flags = Line.trim().str();
  }
  return M;
}

std::optional<std::string> vmFlagsAt(const void *P) {
  if (std::optional<Mapping> M = mappingAt(P))
    return M->Flags;
  return std::nullopt;
}

/// The path column of the mapping that holds \p P ("[heap]", a file, or
/// empty for an anonymous mapping).
std::string mappingNameAt(const void *P) {
  std::optional<Mapping> M = mappingAt(P);
  if (!M)
    return "<none>";
  SmallVector<StringRef, 6> Fields;
  StringRef(M->Header).split(Fields, ' ', -1, /*KeepEmpty=*/false);
  return Fields.size() >= 6 ? Fields[5].str() : "";
}

/// Why useHugePagesForTheHeap() did not do its job (empty: it did): mark a
/// range of the heap for huge pages ("hg" in the mapping's VmFlags), after
/// which blocks of a few MiB come from the heap rather than from mappings of
/// their own.
[[maybe_unused]] std::string heapOfHugePagesProblem() {
  std::optional<std::pair<uintptr_t, uintptr_t>> Marked =
      useHugePagesForTheHeap();
  if (!Marked)
    return "nothing marked";
  if (Marked->second - Marked->first < (uintptr_t(250) << 20))
    return "less than 250 MiB marked";
  for (uintptr_t At : {Marked->first, Marked->second - 1}) {
    std::optional<std::string> Flags =
        vmFlagsAt(reinterpret_cast<const void *>(At));
    if (!Flags || (" " + *Flags + " ").find(" hg ") == std::string::npos)
      return "no 'hg' in the VmFlags at " + utohexstr(At) + ": " +
             Flags.value_or("<no mapping>");
  }
  std::unique_ptr<uint8_t[]> Block(new uint8_t[4 << 20]);
  std::string Name = mappingNameAt(Block.get());
  if (Name != "[heap]")
    return "a 4 MiB block is in '" + Name + "', not the heap";
  return "";
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOTSWAP_SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HOTSWAP_SANITIZED_ALLOCATOR 1
#endif
#endif

// In a process of its own (a death test re-executes this program for this
// test alone): the heap of a process that has run other tests holds free
// blocks that a call may reuse instead of growing the heap. Under a
// sanitizer, whose allocator replaces glibc's heap, there is nothing to
// grow or mark.
TEST(LargeBuffer, HeapOfHugePages) {
#if defined(HOTSWAP_SANITIZED_ALLOCATOR) || !defined(__linux__) ||             \
    !defined(__GLIBC__)
  EXPECT_FALSE(useHugePagesForTheHeap().has_value());
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::string Problem = heapOfHugePagesProblem();
        std::fprintf(stderr, "%s\n", Problem.c_str());
        std::_Exit(Problem.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
#endif
}

} // namespace
