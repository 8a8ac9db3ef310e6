#include "hotswap/Object/Object.h"
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
