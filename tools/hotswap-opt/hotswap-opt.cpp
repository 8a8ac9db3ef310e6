#include "hotswap/Object/Reader.h"
#include "hotswap/Object/Writer.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
using namespace llvm;
static cl::opt<std::string> In(cl::Positional, cl::init("-"));
static cl::opt<std::string> Out("o", cl::init("-"));
int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::ParseCommandLineOptions(argc, argv);
  auto B = MemoryBuffer::getFileOrSTDIN(In);
  if (!B) { errs() << "error\n"; return 1; }
  auto O = hotswap::readObject(std::move(*B));
  if (!O) { WithColor::error(errs(), "hotswap-opt") << "'" << In << "': " << toString(O.takeError()) << "\n"; return 1; }
  if (Error E = hotswap::writeObjectToFile(**O, Out)) { errs() << toString(std::move(E)) << "\n"; return 1; }
}
