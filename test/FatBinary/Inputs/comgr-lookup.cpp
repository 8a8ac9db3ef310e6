//===- comgr-lookup.cpp - Find code objects in a bundle the way HIP 6 does ===//
//
// Built at test time against the system's COMGR (Debian libamd-comgr-dev,
// COMGR 2.4 from ROCm 5.2). HIP from ROCm 6.0 on hands COMGR only the first
// 4096 bytes of an offload bundle, as an AMD_COMGR_DATA_KIND_FATBIN data
// object, and asks amd_comgr_lookup_code_object for the offset and size of
// the code object matching each device's ISA; then it reads that range from
// the whole bundle. This program does the same:
//
//   comgr-lookup [--slice N] FILE ISA...
//
// It prints one line per ISA, in command-line order:
//
//   isa ISA: offset=O size=S target=T kernels=K e_flags=0x..
//   isa ISA: not found                  (COMGR returned size 0)
//
// For each range found it checks, on the bytes of the whole FILE, that the
// range is inside the file and holds an AMDGPU HSA ELF64 shared object
// (magic, class, EM_AMDGPU, ELFOSABI_AMDGPU_HSA, ET_DYN), and reads it with
// COMGR as an executable: T is its metadata's amdhsa.target and K the length
// of amdhsa.kernels. When the lookup itself fails it prints
//
//   lookup: error: STATUS
//
// and exits 2; a range that fails a check prints "isa ISA: FAIL: why" and
// the exit status is 1. --slice N (default 4096) sets how many leading
// bytes COMGR sees; 0 means the whole file. A file shorter than N is
// passed whole.
//
// What Debian's COMGR 2.4 does (tests in test/FatBinary/comgr-*.test):
//  * plain bundles: reads only the header, so 4096 bytes are enough when the
//    header fits; fewer bytes than the header give AMD_COMGR_STATUS_ERROR;
//  * matches entries by target ID: an entry with xnack+/- answers only the
//    same setting, an entry without features answers any;
//  * with several ISAs in one call it stops scanning the query list at the
//    first query already answered by an earlier entry, so only queries in
//    the reverse of the entries' order are all found;
//  * CCOB (v2, v3): AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT (not read).
//
//===----------------------------------------------------------------------===//

#include <amd_comgr.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::string statusText(amd_comgr_status_t Status) {
  const char *Text = "unknown status";
  amd_comgr_status_string(Status, &Text);
  return Text;
}

// Reads the AMDGPU metadata of an executable data object: amdhsa.target and
// the number of kernels. Returns false (with Why set) when COMGR cannot.
bool readMetadata(amd_comgr_data_t Data, std::string &Target, size_t &Kernels,
                  std::string &Why) {
  amd_comgr_metadata_node_t Root, Node;
  amd_comgr_status_t S = amd_comgr_get_data_metadata(Data, &Root);
  if (S != AMD_COMGR_STATUS_SUCCESS) {
    Why = "amd_comgr_get_data_metadata: " + statusText(S);
    return false;
  }
  bool Ok = false;
  if (amd_comgr_metadata_lookup(Root, "amdhsa.target", &Node) ==
      AMD_COMGR_STATUS_SUCCESS) {
    size_t Size = 0;
    amd_comgr_get_metadata_string(Node, &Size, nullptr);
    std::string S2(Size, '\0');
    amd_comgr_get_metadata_string(Node, &Size, S2.data());
    while (!S2.empty() && S2.back() == '\0')
      S2.pop_back();
    Target = S2;
    amd_comgr_destroy_metadata(Node);
    if (amd_comgr_metadata_lookup(Root, "amdhsa.kernels", &Node) ==
        AMD_COMGR_STATUS_SUCCESS) {
      Ok = amd_comgr_get_metadata_list_size(Node, &Kernels) ==
           AMD_COMGR_STATUS_SUCCESS;
      amd_comgr_destroy_metadata(Node);
    }
  }
  amd_comgr_destroy_metadata(Root);
  if (!Ok)
    Why = "metadata has no amdhsa.target or amdhsa.kernels";
  return Ok;
}

// Checks that Bytes is an AMDGPU HSA code object; prints its line.
bool checkCodeObject(const std::string &Isa, const std::vector<char> &File,
                     uint64_t Offset, uint64_t Size) {
  auto Fail = [&](const std::string &Why) {
    std::printf("isa %s: FAIL: offset=%" PRIu64 " size=%" PRIu64 ": %s\n",
                Isa.c_str(), Offset, Size, Why.c_str());
    return false;
  };
  if (Offset > File.size() || Size > File.size() - Offset)
    return Fail("range is outside the file (" + std::to_string(File.size()) +
                " bytes)");
  const unsigned char *P =
      reinterpret_cast<const unsigned char *>(File.data()) + Offset;
  if (Size < 64 || std::memcmp(P,
                               "\x7f"
                               "ELF",
                               4) != 0)
    return Fail("no ELF header");
  uint16_t Type, Machine;
  uint32_t Flags;
  std::memcpy(&Type, P + 16, 2);
  std::memcpy(&Machine, P + 18, 2);
  std::memcpy(&Flags, P + 48, 4);
  if (P[4] != 2 /*ELFCLASS64*/ || P[5] != 1 /*ELFDATA2LSB*/)
    return Fail("not ELF64 little-endian");
  if (Machine != 224 /*EM_AMDGPU*/ || P[7] != 64 /*ELFOSABI_AMDGPU_HSA*/)
    return Fail("not an AMDGPU HSA object");
  if (Type != 3 /*ET_DYN*/)
    return Fail("not a shared object");

  amd_comgr_data_t Data;
  amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &Data);
  amd_comgr_set_data(Data, Size, File.data() + Offset);
  std::string Target, Why;
  size_t Kernels = 0;
  bool Ok = readMetadata(Data, Target, Kernels, Why);
  amd_comgr_release_data(Data);
  if (!Ok)
    return Fail(Why);
  std::printf("isa %s: offset=%" PRIu64 " size=%" PRIu64
              " target=%s kernels=%zu e_flags=0x%x\n",
              Isa.c_str(), Offset, Size, Target.c_str(), Kernels, Flags);
  return true;
}

} // namespace

int main(int Argc, char **Argv) {
  size_t Slice = 4096;
  int Arg = 1;
  if (Arg + 1 < Argc && std::strcmp(Argv[Arg], "--slice") == 0) {
    Slice = std::strtoull(Argv[Arg + 1], nullptr, 0);
    Arg += 2;
  }
  if (Argc - Arg < 2) {
    std::fprintf(stderr, "usage: comgr-lookup [--slice N] FILE ISA...\n");
    return 2;
  }
  std::ifstream In(Argv[Arg], std::ios::binary);
  if (!In) {
    std::fprintf(stderr, "comgr-lookup: cannot read '%s'\n", Argv[Arg]);
    return 2;
  }
  std::vector<char> File((std::istreambuf_iterator<char>(In)),
                         std::istreambuf_iterator<char>());
  if (Slice == 0 || Slice > File.size())
    Slice = File.size();

  std::vector<std::string> Isas(Argv + Arg + 1, Argv + Argc);
  std::vector<amd_comgr_code_object_info_t> Infos(Isas.size());
  for (size_t I = 0; I < Isas.size(); ++I)
    Infos[I] = {Isas[I].c_str(), 0, 0};

  // What HIP 6 does: a FATBIN data object over the first Slice bytes only.
  amd_comgr_data_t Bundle;
  amd_comgr_create_data(AMD_COMGR_DATA_KIND_FATBIN, &Bundle);
  amd_comgr_set_data(Bundle, Slice, File.data());
  amd_comgr_status_t S =
      amd_comgr_lookup_code_object(Bundle, Infos.data(), Infos.size());
  amd_comgr_release_data(Bundle);
  if (S != AMD_COMGR_STATUS_SUCCESS) {
    std::printf("lookup: error: %s\n", statusText(S).c_str());
    return 2;
  }

  bool Ok = true;
  for (size_t I = 0; I < Isas.size(); ++I) {
    if (Infos[I].size == 0) {
      std::printf("isa %s: not found\n", Isas[I].c_str());
      continue;
    }
    Ok &= checkCodeObject(Isas[I], File, Infos[I].offset, Infos[I].size);
  }
  return Ok ? 0 : 1;
}
