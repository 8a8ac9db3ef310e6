#include "hotswap/Object/Object.h"
#include "hotswap/Support/Error.h"

#include "llvm/Support/Errc.h"
#include "gtest/gtest.h"
TEST(Smoke, Partition) {
  hotswap::Section Sym, Str;
  hotswap::SymbolTable T(Sym, Str);
  hotswap::Symbol G;
  G.Binding = llvm::ELF::STB_GLOBAL;
  G.Name = "g";
  hotswap::Symbol L;
  L.Name = "l";
  T.add(G);
  T.add(L);
  EXPECT_EQ(T.symbols()[0].Name, "l");
  EXPECT_EQ(T.firstNonLocal(), 2u);
}

// Context added on the way up keeps what the error is: its file, its code,
// its message after the context.
TEST(ErrorTest, PrefixErrorKeepsTheCause) {
  llvm::Error E = hotswap::prefixError(
      "bundle entry 'x'",
      hotswap::prefixError(
          "kernel 'k'",
          llvm::createFileError(
              "in.co", llvm::make_error_code(llvm::errc::no_space_on_device))));
  std::string Kind;
  llvm::handleAllErrors(std::move(E), [&](const llvm::ErrorInfoBase &EI) {
    EXPECT_EQ(EI.convertToErrorCode(),
              llvm::make_error_code(llvm::errc::no_space_on_device));
    const llvm::ErrorInfoBase &Cause = hotswap::errorCause(EI);
    ASSERT_TRUE(Cause.isA<llvm::FileError>());
    EXPECT_EQ(static_cast<const llvm::FileError &>(Cause).getFileName(),
              "in.co");
    Kind = EI.message();
  });
  EXPECT_EQ(Kind.rfind("bundle entry 'x': kernel 'k': 'in.co': ", 0), 0u)
      << Kind;
  EXPECT_FALSE(bool(hotswap::prefixError("nothing", llvm::Error::success())));
}
