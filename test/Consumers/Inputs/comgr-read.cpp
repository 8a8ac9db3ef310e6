//===- comgr-read.cpp - Read a code object the way the HIP runtime does ---===//
//
// A small consumer of ROCm's Code Object Manager (COMGR), built at test time
// against the system's amd_comgr.h. Given one code object file it prints, in
// a deterministic order, what COMGR reads from it:
//
//   isa <name>                        amd_comgr_get_data_isa_name, or
//   isa <error: STATUS>               when this COMGR does not know the ISA
//   meta <path> = <value>             every scalar of the AMDGPU metadata
//                                     (amd_comgr_get_data_metadata), map keys
//                                     sorted, list indices in brackets
//   kernel <name> symbol=... ...      the fields the runtime reads for each
//                                     entry of amdhsa.kernels
//   sym <view> <name> <type> <addr> <size> [undef]
//                                     amd_comgr_iterate_symbols, sorted; view
//                                     `dyn` reads the object as an EXECUTABLE
//                                     (COMGR then walks .dynsym), view `tab`
//                                     as a RELOCATABLE (COMGR walks .symtab)
//   entry <kernel> kd=<addr> entry=<addr>
//                                     kernel_code_entry_byte_offset of each
//                                     `<kernel>.kd`, read through the bytes
//   disasm <kernel> <addr>: <insn>    with -d N: N bytes at each entry,
//                                     through amd_comgr_disassemble_instruction
//                                     (only when the ISA is known)
//
// Any COMGR call that fails prints `error: <call>: <status>` and exits 1.
//
// Usage: comgr-read [-d N] FILE
//
//===----------------------------------------------------------------------===//

#include <amd_comgr.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const char *What, amd_comgr_status_t Status) {
  const char *Text = "unknown status";
  amd_comgr_status_string(Status, &Text);
  std::printf("error: %s: %s\n", What, Text);
  std::exit(1);
}

void check(amd_comgr_status_t Status, const char *What) {
  if (Status != AMD_COMGR_STATUS_SUCCESS)
    fail(What, Status);
}

// --- metadata ---------------------------------------------------------------

std::string metaString(amd_comgr_metadata_node_t Node) {
  size_t Size = 0;
  check(amd_comgr_get_metadata_string(Node, &Size, nullptr),
        "amd_comgr_get_metadata_string");
  std::string S(Size, '\0');
  check(amd_comgr_get_metadata_string(Node, &Size, S.data()),
        "amd_comgr_get_metadata_string");
  // COMGR counts the terminating NUL in Size.
  while (!S.empty() && S.back() == '\0')
    S.pop_back();
  return S;
}

amd_comgr_metadata_kind_t metaKind(amd_comgr_metadata_node_t Node) {
  amd_comgr_metadata_kind_t Kind;
  check(amd_comgr_get_metadata_kind(Node, &Kind),
        "amd_comgr_get_metadata_kind");
  return Kind;
}

amd_comgr_status_t collectKey(amd_comgr_metadata_node_t Key,
                              amd_comgr_metadata_node_t, void *User) {
  // COMGR owns Key and frees it when the callback returns.
  static_cast<std::vector<std::string> *>(User)->push_back(metaString(Key));
  return AMD_COMGR_STATUS_SUCCESS;
}

// The keys of a map, sorted.
std::vector<std::string> mapKeys(amd_comgr_metadata_node_t Map) {
  std::vector<std::string> Keys;
  check(amd_comgr_iterate_map_metadata(Map, collectKey, &Keys),
        "amd_comgr_iterate_map_metadata");
  std::sort(Keys.begin(), Keys.end());
  return Keys;
}

void dumpMeta(amd_comgr_metadata_node_t Node, const std::string &Path) {
  switch (metaKind(Node)) {
  case AMD_COMGR_METADATA_KIND_STRING:
    std::printf("meta %s = %s\n", Path.c_str(), metaString(Node).c_str());
    return;
  case AMD_COMGR_METADATA_KIND_MAP: {
    std::vector<std::string> Keys = mapKeys(Node);
    if (Keys.empty())
      std::printf("meta %s = {}\n", Path.c_str());
    for (const std::string &Key : Keys) {
      amd_comgr_metadata_node_t Value;
      check(amd_comgr_metadata_lookup(Node, Key.c_str(), &Value),
            "amd_comgr_metadata_lookup");
      dumpMeta(Value, Path + "/" + Key);
      amd_comgr_destroy_metadata(Value);
    }
    return;
  }
  case AMD_COMGR_METADATA_KIND_LIST: {
    size_t Size = 0;
    check(amd_comgr_get_metadata_list_size(Node, &Size),
          "amd_comgr_get_metadata_list_size");
    if (Size == 0)
      std::printf("meta %s = []\n", Path.c_str());
    for (size_t I = 0; I < Size; ++I) {
      amd_comgr_metadata_node_t Elt;
      check(amd_comgr_index_list_metadata(Node, I, &Elt),
            "amd_comgr_index_list_metadata");
      dumpMeta(Elt, Path + "[" + std::to_string(I) + "]");
      amd_comgr_destroy_metadata(Elt);
    }
    return;
  }
  default:
    std::printf("meta %s = null\n", Path.c_str());
    return;
  }
}

// A string field of a kernel map the way the runtime looks one up; "-" when
// the key is absent.
std::string lookupString(amd_comgr_metadata_node_t Map, const char *Key) {
  amd_comgr_metadata_node_t Value;
  if (amd_comgr_metadata_lookup(Map, Key, &Value) != AMD_COMGR_STATUS_SUCCESS)
    return "-";
  std::string S = metaKind(Value) == AMD_COMGR_METADATA_KIND_STRING
                      ? metaString(Value)
                      : std::string("<not a string>");
  amd_comgr_destroy_metadata(Value);
  return S;
}

std::string lookupListSize(amd_comgr_metadata_node_t Map, const char *Key) {
  amd_comgr_metadata_node_t Value;
  if (amd_comgr_metadata_lookup(Map, Key, &Value) != AMD_COMGR_STATUS_SUCCESS)
    return "0";
  size_t Size = 0;
  check(amd_comgr_get_metadata_list_size(Value, &Size),
        "amd_comgr_get_metadata_list_size");
  amd_comgr_destroy_metadata(Value);
  return std::to_string(Size);
}

void printKernels(amd_comgr_metadata_node_t Root) {
  amd_comgr_metadata_node_t Kernels;
  check(amd_comgr_metadata_lookup(Root, "amdhsa.kernels", &Kernels),
        "amd_comgr_metadata_lookup(amdhsa.kernels)");
  size_t Count = 0;
  check(amd_comgr_get_metadata_list_size(Kernels, &Count),
        "amd_comgr_get_metadata_list_size");
  std::vector<std::string> Lines;
  for (size_t I = 0; I < Count; ++I) {
    amd_comgr_metadata_node_t K;
    check(amd_comgr_index_list_metadata(Kernels, I, &K),
          "amd_comgr_index_list_metadata");
    Lines.push_back("kernel " + lookupString(K, ".name") + " symbol=" +
                    lookupString(K, ".symbol") + " kernarg_segment_size=" +
                    lookupString(K, ".kernarg_segment_size") +
                    " sgpr_count=" + lookupString(K, ".sgpr_count") +
                    " vgpr_count=" + lookupString(K, ".vgpr_count") +
                    " wavefront_size=" + lookupString(K, ".wavefront_size") +
                    " args=" + lookupListSize(K, ".args"));
    amd_comgr_destroy_metadata(K);
  }
  amd_comgr_destroy_metadata(Kernels);
  std::sort(Lines.begin(), Lines.end());
  std::printf("kernels %zu\n", Count);
  for (const std::string &L : Lines)
    std::printf("%s\n", L.c_str());
}

// --- symbols ----------------------------------------------------------------

struct Symbol {
  std::string Name;
  int Type;
  uint64_t Value, Size;
  bool Undefined;
};

const char *typeName(int Type) {
  switch (Type) {
  case AMD_COMGR_SYMBOL_TYPE_NOTYPE:
    return "NOTYPE";
  case AMD_COMGR_SYMBOL_TYPE_OBJECT:
    return "OBJECT";
  case AMD_COMGR_SYMBOL_TYPE_FUNC:
    return "FUNC";
  case AMD_COMGR_SYMBOL_TYPE_SECTION:
    return "SECTION";
  case AMD_COMGR_SYMBOL_TYPE_FILE:
    return "FILE";
  case AMD_COMGR_SYMBOL_TYPE_COMMON:
    return "COMMON";
  case AMD_COMGR_SYMBOL_TYPE_AMDGPU_HSA_KERNEL:
    return "HSA_KERNEL";
  default:
    return "UNKNOWN";
  }
}

amd_comgr_status_t collectSymbol(amd_comgr_symbol_t Sym, void *User) {
  auto *Out = static_cast<std::vector<Symbol> *>(User);
  Symbol S;
  uint64_t Len = 0;
  check(amd_comgr_symbol_get_info(Sym, AMD_COMGR_SYMBOL_INFO_NAME_LENGTH, &Len),
        "amd_comgr_symbol_get_info(NAME_LENGTH)");
  std::vector<char> Name(Len + 1, '\0');
  check(amd_comgr_symbol_get_info(Sym, AMD_COMGR_SYMBOL_INFO_NAME, Name.data()),
        "amd_comgr_symbol_get_info(NAME)");
  S.Name.assign(Name.data(), strnlen(Name.data(), Len));
  amd_comgr_symbol_type_t Type;
  check(amd_comgr_symbol_get_info(Sym, AMD_COMGR_SYMBOL_INFO_TYPE, &Type),
        "amd_comgr_symbol_get_info(TYPE)");
  S.Type = Type;
  check(amd_comgr_symbol_get_info(Sym, AMD_COMGR_SYMBOL_INFO_VALUE, &S.Value),
        "amd_comgr_symbol_get_info(VALUE)");
  check(amd_comgr_symbol_get_info(Sym, AMD_COMGR_SYMBOL_INFO_SIZE, &S.Size),
        "amd_comgr_symbol_get_info(SIZE)");
  check(amd_comgr_symbol_get_info(Sym, AMD_COMGR_SYMBOL_INFO_IS_UNDEFINED,
                                  &S.Undefined),
        "amd_comgr_symbol_get_info(IS_UNDEFINED)");
  Out->push_back(std::move(S));
  return AMD_COMGR_STATUS_SUCCESS;
}

std::vector<Symbol> symbols(amd_comgr_data_t Data) {
  std::vector<Symbol> Syms;
  check(amd_comgr_iterate_symbols(Data, collectSymbol, &Syms),
        "amd_comgr_iterate_symbols");
  std::sort(Syms.begin(), Syms.end(), [](const Symbol &A, const Symbol &B) {
    if (A.Name != B.Name)
      return A.Name < B.Name;
    return A.Value < B.Value;
  });
  return Syms;
}

void printSymbols(const char *View, const std::vector<Symbol> &Syms) {
  for (const Symbol &S : Syms)
    std::printf("sym %s %s %s 0x%" PRIx64 " %" PRIu64 "%s\n", View,
                S.Name.empty() ? "<noname>" : S.Name.c_str(), typeName(S.Type),
                S.Value, S.Size, S.Undefined ? " undef" : "");
}

// --- loaded image: virtual address -> bytes through PT_LOAD ---------------

struct Image {
  std::vector<char> Bytes;
  struct Load {
    uint64_t VAddr, Offset, FileSize;
  };
  std::vector<Load> Loads;

  // Number of bytes readable at Addr, copying at most Size of them to To.
  uint64_t read(uint64_t Addr, char *To, uint64_t Size) const {
    for (const Load &L : Loads) {
      if (Addr < L.VAddr || Addr - L.VAddr >= L.FileSize)
        continue;
      uint64_t N = std::min(Size, L.FileSize - (Addr - L.VAddr));
      uint64_t Off = L.Offset + (Addr - L.VAddr);
      if (Off > Bytes.size() || N > Bytes.size() - Off)
        return 0;
      std::memcpy(To, Bytes.data() + Off, N);
      return N;
    }
    return 0;
  }
};

template <typename T> T readLE(const std::vector<char> &B, uint64_t Off) {
  T V = 0;
  if (Off + sizeof(T) <= B.size())
    std::memcpy(&V, B.data() + Off, sizeof(T)); // The host is little-endian.
  return V;
}

bool loadImage(Image &Img) {
  const std::vector<char> &B = Img.Bytes;
  if (B.size() < 64 ||
      std::memcmp(B.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      B[4] != 2)
    return false;
  uint64_t PhOff = readLE<uint64_t>(B, 32);
  uint16_t PhEntSize = readLE<uint16_t>(B, 54), PhNum = readLE<uint16_t>(B, 56);
  for (uint16_t I = 0; I < PhNum; ++I) {
    uint64_t P = PhOff + uint64_t(I) * PhEntSize;
    if (P + 56 > B.size())
      return false;
    if (readLE<uint32_t>(B, P) != 1) // PT_LOAD
      continue;
    Img.Loads.push_back({readLE<uint64_t>(B, P + 16),
                         readLE<uint64_t>(B, P + 8),
                         readLE<uint64_t>(B, P + 32)});
  }
  return true;
}

// --- disassembly
// --------------------------------------------------------------

struct DisasmState {
  const Image *Img;
  std::string Text;
};

uint64_t readMemory(uint64_t From, char *To, uint64_t Size, void *User) {
  return static_cast<DisasmState *>(User)->Img->read(From, To, Size);
}

void printInstruction(const char *Insn, void *User) {
  std::string &T = static_cast<DisasmState *>(User)->Text;
  // Collapse the disassembler's padding to single spaces.
  for (const char *C = Insn; *C; ++C) {
    bool Space = *C == ' ' || *C == '\t';
    if (Space && (T.empty() || T.back() == ' '))
      continue;
    T.push_back(Space ? ' ' : *C);
  }
  while (!T.empty() && T.back() == ' ')
    T.pop_back();
}

void printAnnotation(uint64_t Address, void *User) {
  char Buf[40];
  std::snprintf(Buf, sizeof(Buf), " ; -> 0x%" PRIx64, Address);
  static_cast<DisasmState *>(User)->Text += Buf;
}

void disassemble(const std::string &Isa, const Image &Img,
                 const std::string &Kernel, uint64_t Entry, uint64_t Bytes) {
  amd_comgr_disassembly_info_t Info;
  check(amd_comgr_create_disassembly_info(
            Isa.c_str(), readMemory, printInstruction, printAnnotation, &Info),
        "amd_comgr_create_disassembly_info");
  uint64_t Addr = Entry;
  while (Addr < Entry + Bytes) {
    DisasmState State{&Img, {}};
    uint64_t Size = 0;
    amd_comgr_status_t S =
        amd_comgr_disassemble_instruction(Info, Addr, &State, &Size);
    if (S != AMD_COMGR_STATUS_SUCCESS) {
      std::printf("disasm %s 0x%" PRIx64 ": <invalid>\n", Kernel.c_str(), Addr);
      if (Size == 0)
        break;
    } else {
      std::printf("disasm %s 0x%" PRIx64 ": %s\n", Kernel.c_str(), Addr,
                  State.Text.c_str());
    }
    Addr += Size ? Size : 4;
  }
  amd_comgr_destroy_disassembly_info(Info);
}

} // namespace

int main(int Argc, char **Argv) {
  uint64_t DisasmBytes = 0;
  const char *Path = nullptr;
  for (int I = 1; I < Argc; ++I) {
    if (std::strcmp(Argv[I], "-d") == 0 && I + 1 < Argc)
      DisasmBytes = std::strtoull(Argv[++I], nullptr, 0);
    else
      Path = Argv[I];
  }
  if (!Path) {
    std::fprintf(stderr, "usage: comgr-read [-d N] FILE\n");
    return 2;
  }
  Image Img;
  {
    std::ifstream In(Path, std::ios::binary);
    if (!In) {
      std::printf("error: cannot open %s\n", Path);
      return 1;
    }
    Img.Bytes.assign(std::istreambuf_iterator<char>(In),
                     std::istreambuf_iterator<char>());
  }

  // The runtime hands COMGR the code object as an executable.
  amd_comgr_data_t Exe, Rel;
  check(amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &Exe),
        "amd_comgr_create_data(EXECUTABLE)");
  check(amd_comgr_set_data(Exe, Img.Bytes.size(), Img.Bytes.data()),
        "amd_comgr_set_data");
  check(amd_comgr_set_data_name(Exe, "input.co"), "amd_comgr_set_data_name");

  // An ISA this COMGR does not know is reported, not fatal: metadata and
  // symbols can still be read (only disassembly needs the ISA).
  std::string Isa;
  size_t IsaSize = 0;
  amd_comgr_status_t IsaStatus =
      amd_comgr_get_data_isa_name(Exe, &IsaSize, nullptr);
  if (IsaStatus == AMD_COMGR_STATUS_SUCCESS) {
    Isa.assign(IsaSize, '\0');
    check(amd_comgr_get_data_isa_name(Exe, &IsaSize, Isa.data()),
          "amd_comgr_get_data_isa_name");
    while (!Isa.empty() && Isa.back() == '\0')
      Isa.pop_back();
    std::printf("isa %s\n", Isa.c_str());
  } else {
    const char *Text = "unknown status";
    amd_comgr_status_string(IsaStatus, &Text);
    std::printf("isa <error: %s>\n", Text);
  }

  amd_comgr_metadata_node_t Root;
  check(amd_comgr_get_data_metadata(Exe, &Root), "amd_comgr_get_data_metadata");
  dumpMeta(Root, "");
  printKernels(Root);
  amd_comgr_destroy_metadata(Root);

  std::vector<Symbol> Dyn = symbols(Exe);
  printSymbols("dyn", Dyn);

  // The same bytes as a relocatable: COMGR then reads the full .symtab.
  check(amd_comgr_create_data(AMD_COMGR_DATA_KIND_RELOCATABLE, &Rel),
        "amd_comgr_create_data(RELOCATABLE)");
  check(amd_comgr_set_data(Rel, Img.Bytes.size(), Img.Bytes.data()),
        "amd_comgr_set_data");
  printSymbols("tab", symbols(Rel));

  // Each kernel's entry, found the way the loader finds it: through the
  // descriptor that the `.kd` symbol (looked up by name) points at.
  bool HaveImage = loadImage(Img);
  for (const Symbol &S : Dyn) {
    const std::string Suffix = ".kd";
    if (S.Name.size() <= Suffix.size() ||
        S.Name.compare(S.Name.size() - Suffix.size(), Suffix.size(), Suffix))
      continue;
    std::string Kernel = S.Name.substr(0, S.Name.size() - Suffix.size());
    amd_comgr_symbol_t Found;
    check(amd_comgr_symbol_lookup(Exe, S.Name.c_str(), &Found),
          "amd_comgr_symbol_lookup");
    int64_t Offset = 0;
    if (!HaveImage ||
        Img.read(S.Value + 16, reinterpret_cast<char *>(&Offset), 8) != 8) {
      std::printf("entry %s kd=0x%" PRIx64 " entry=<unreadable>\n",
                  Kernel.c_str(), S.Value);
      continue;
    }
    uint64_t Entry = S.Value + uint64_t(Offset);
    std::printf("entry %s kd=0x%" PRIx64 " entry=0x%" PRIx64 "\n",
                Kernel.c_str(), S.Value, Entry);
    if (DisasmBytes && !Isa.empty())
      disassemble(Isa, Img, Kernel, Entry, DisasmBytes);
  }

  amd_comgr_release_data(Rel);
  amd_comgr_release_data(Exe);
  return 0;
}
