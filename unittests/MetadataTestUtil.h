//===- unittests/MetadataTestUtil.h - Metadata note builders ----*- C++ -*-===//
//
// Metadata blobs for the metadata gtests, built in memory with
// msgpack::Document, which writes map keys in sorted order and integers in
// their smallest encoding, exactly as LLVM's AMDGPU metadata streamer does;
// and one real note produced by clang 22 (RealNote).
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_UNITTESTS_METADATATESTUTIL_H
#define HOTSWAP_UNITTESTS_METADATATESTUTIL_H

#include "hotswap/AMDGPU/Metadata.h"
#include "hotswap/AMDGPU/Notes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Support/Endian.h"
#include "gtest/gtest.h"

#include "TestUtil.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hotswap {
namespace amdgpu {
namespace testutil {

struct KSpec {
  std::string Name;
  uint64_t SGPR = 10;
  uint64_t VGPR = 3;
  bool WithAGPR = true;
  bool WithSGPR = true;
};

/// The keys and value kinds LLVM 22 writes for a kernel without arguments
/// (compare RealNote).
inline llvm::msgpack::MapDocNode kernelNode(llvm::msgpack::Document &D,
                                            const KSpec &K) {
  llvm::msgpack::MapDocNode M = D.getMapNode();
  if (K.WithAGPR)
    M[".agpr_count"] = D.getNode(uint64_t(0));
  M[".args"] = D.getArrayNode();
  M[".group_segment_fixed_size"] = D.getNode(uint64_t(0));
  M[".kernarg_segment_align"] = D.getNode(uint64_t(4));
  M[".kernarg_segment_size"] = D.getNode(uint64_t(0));
  M[".language"] = D.getNode("OpenCL C");
  llvm::msgpack::ArrayDocNode LV = D.getArrayNode();
  LV.push_back(D.getNode(uint64_t(1)));
  LV.push_back(D.getNode(uint64_t(2)));
  M[".language_version"] = LV;
  M[".max_flat_workgroup_size"] = D.getNode(uint64_t(256));
  M[".name"] = D.getNode(K.Name, /*Copy=*/true);
  M[".private_segment_fixed_size"] = D.getNode(uint64_t(0));
  if (K.WithSGPR)
    M[".sgpr_count"] = D.getNode(K.SGPR);
  M[".sgpr_spill_count"] = D.getNode(uint64_t(0));
  M[".symbol"] = D.getNode(K.Name + ".kd", /*Copy=*/true);
  M[".uniform_work_group_size"] = D.getNode(uint64_t(1));
  M[".uses_dynamic_stack"] = D.getNode(false);
  M[".vgpr_count"] = D.getNode(K.VGPR);
  M[".vgpr_spill_count"] = D.getNode(uint64_t(0));
  M[".wavefront_size"] = D.getNode(uint64_t(64));
  return M;
}

/// A metadata blob; \p Version (major 1) and \p Target are left out when
/// empty / zero.
inline std::string metadataBlob(llvm::ArrayRef<KSpec> Kernels,
                                llvm::StringRef Target,
                                uint64_t VersionMinor = 2) {
  llvm::msgpack::Document D;
  llvm::msgpack::MapDocNode Root = D.getRoot().getMap(/*Convert=*/true);
  if (VersionMinor) {
    llvm::msgpack::ArrayDocNode Version = D.getArrayNode();
    Version.push_back(D.getNode(uint64_t(1)));
    Version.push_back(D.getNode(VersionMinor));
    Root["amdhsa.version"] = Version;
  }
  if (!Target.empty())
    Root["amdhsa.target"] = D.getNode(Target, /*Copy=*/true);
  llvm::msgpack::ArrayDocNode KA = D.getArrayNode();
  for (const KSpec &K : Kernels)
    KA.push_back(kernelNode(D, K));
  Root["amdhsa.kernels"] = KA;
  std::string Blob;
  D.writeToBlob(Blob);
  return Blob;
}

inline std::vector<uint8_t> noteSection(llvm::StringRef Blob,
                                        uint32_t Type = 32,
                                        llvm::StringRef Owner = "AMDGPU") {
  std::vector<uint8_t> S;
  appendNote(S, Owner, Type, llvm::arrayRefFromStringRef(Blob));
  return S;
}

/// Offset just past the first (or Nth) fixstr key \p Key in \p Bytes, i.e.
/// the offset of its value; 0 if there is none.
inline size_t valueOffset(llvm::ArrayRef<uint8_t> Bytes, llvm::StringRef Key,
                          unsigned Nth = 0) {
  std::vector<uint8_t> Pat = {uint8_t(0xa0 | Key.size())};
  Pat.insert(Pat.end(), Key.bytes_begin(), Key.bytes_end());
  auto It = Bytes.begin();
  for (;;) {
    It = std::search(It, Bytes.end(), Pat.begin(), Pat.end());
    if (It == Bytes.end())
      return 0;
    if (Nth-- == 0)
      return (It - Bytes.begin()) + Pat.size();
    ++It;
  }
}

/// Replaces the 1-byte value of \p Key (first occurrence) by \p Encoding.
inline void reencodeValue(std::string &Blob, llvm::StringRef Key,
                          llvm::ArrayRef<uint8_t> Encoding) {
  size_t Off = valueOffset(llvm::arrayRefFromStringRef(Blob), Key);
  ASSERT_NE(Off, 0u);
  Blob.replace(Off, 1, llvm::toStringRef(Encoding).str());
}

/// A metadata blob whose note descriptor has exactly \p Slack bytes of
/// alignment padding. The target string gets 0-3 'x' characters appended to
/// reach it (still a fixstr). \p Edit may re-encode values in the blob first.
inline std::string
blobWithSlack(llvm::ArrayRef<KSpec> Kernels, unsigned Slack,
              std::function<void(std::string &)> Edit = nullptr) {
  for (unsigned Extra = 0; Extra != 4; ++Extra) {
    std::string Blob = metadataBlob(Kernels, "amdgcn-amd-amdhsa--gfx90a" +
                                                 std::string(Extra, 'x'));
    if (Edit)
      Edit(Blob);
    if ((4 - Blob.size() % 4) % 4 == Slack)
      return Blob;
  }
  ADD_FAILURE() << "cannot reach the requested slack";
  return {};
}

/// A note section of one metadata note made by blobWithSlack.
inline std::vector<uint8_t>
sectionWithSlack(llvm::ArrayRef<KSpec> Kernels, unsigned Slack,
                 std::function<void(std::string &)> Edit = nullptr) {
  return noteSection(blobWithSlack(Kernels, Slack, std::move(Edit)));
}

/// n_descsz of the note at \p NoteOffset.
inline uint32_t descSize(llvm::ArrayRef<uint8_t> Section,
                         size_t NoteOffset = 0) {
  return llvm::support::endian::read32le(Section.data() + NoteOffset + 4);
}

/// Offsets at which A and B (same size) differ.
inline std::vector<size_t> diffOffsets(llvm::ArrayRef<uint8_t> A,
                                       llvm::ArrayRef<uint8_t> B) {
  std::vector<size_t> D;
  for (size_t I = 0; I != A.size(); ++I)
    if (A[I] != B[I])
      D.push_back(I);
  return D;
}

inline std::string parseError(llvm::ArrayRef<uint8_t> Section) {
  llvm::Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(Section);
  if (MD)
    return "<no error>";
  return llvm::toString(MD.takeError());
}

inline std::string parseBlobError(llvm::StringRef Blob) {
  return parseError(noteSection(Blob));
}

inline std::string rawBlob(std::initializer_list<uint8_t> Bytes) {
  return std::string(Bytes.begin(), Bytes.end());
}

/// Re-parses a rewritten section, returning the kernel's value of \p F.
inline std::optional<uint64_t>
reparsedValue(const NoteRewrite &R, llvm::StringRef Symbol, KernelField F) {
  llvm::Expected<CodeObjectMetadata> MD = CodeObjectMetadata::parse(R.Bytes);
  if (!MD) {
    ADD_FAILURE() << llvm::toString(MD.takeError());
    return std::nullopt;
  }
  const KernelMD *K = MD->findBySymbol(Symbol);
  if (!K) {
    ADD_FAILURE() << "no kernel " << Symbol.str();
    return std::nullopt;
  }
  return K->get(F);
}

// The .note section of a gfx90a code object built with Debian clang 22.1.8:
//   echo '__kernel void nop(void) {}' > e.cl
//   clang --target=amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2 -c e.cl -o e.o
//   ld.lld -shared e.o -o e.so
//   llvm-objcopy -O binary --only-section=.note e.so e.note && xxd -i e.note
// One note: owner "AMDGPU", type 32, n_descsz 0x1a6 (2 bytes of padding);
// `llvm-readelf --notes e.so` shows .sgpr_count 4, .vgpr_count 0,
// .max_flat_workgroup_size 256 (0xcd 0x01 0x00), .wavefront_size 64.
// clang-format off
inline constexpr uint8_t RealNote[] = {
  0x07, 0x00, 0x00, 0x00, 0xa6, 0x01, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00,
  0x41, 0x4d, 0x44, 0x47, 0x50, 0x55, 0x00, 0x00, 0x83, 0xae, 0x61, 0x6d,
  0x64, 0x68, 0x73, 0x61, 0x2e, 0x6b, 0x65, 0x72, 0x6e, 0x65, 0x6c, 0x73,
  0x91, 0xde, 0x00, 0x12, 0xab, 0x2e, 0x61, 0x67, 0x70, 0x72, 0x5f, 0x63,
  0x6f, 0x75, 0x6e, 0x74, 0x00, 0xa5, 0x2e, 0x61, 0x72, 0x67, 0x73, 0x90,
  0xb9, 0x2e, 0x67, 0x72, 0x6f, 0x75, 0x70, 0x5f, 0x73, 0x65, 0x67, 0x6d,
  0x65, 0x6e, 0x74, 0x5f, 0x66, 0x69, 0x78, 0x65, 0x64, 0x5f, 0x73, 0x69,
  0x7a, 0x65, 0x00, 0xb6, 0x2e, 0x6b, 0x65, 0x72, 0x6e, 0x61, 0x72, 0x67,
  0x5f, 0x73, 0x65, 0x67, 0x6d, 0x65, 0x6e, 0x74, 0x5f, 0x61, 0x6c, 0x69,
  0x67, 0x6e, 0x04, 0xb5, 0x2e, 0x6b, 0x65, 0x72, 0x6e, 0x61, 0x72, 0x67,
  0x5f, 0x73, 0x65, 0x67, 0x6d, 0x65, 0x6e, 0x74, 0x5f, 0x73, 0x69, 0x7a,
  0x65, 0x00, 0xa9, 0x2e, 0x6c, 0x61, 0x6e, 0x67, 0x75, 0x61, 0x67, 0x65,
  0xa8, 0x4f, 0x70, 0x65, 0x6e, 0x43, 0x4c, 0x20, 0x43, 0xb1, 0x2e, 0x6c,
  0x61, 0x6e, 0x67, 0x75, 0x61, 0x67, 0x65, 0x5f, 0x76, 0x65, 0x72, 0x73,
  0x69, 0x6f, 0x6e, 0x92, 0x01, 0x02, 0xb8, 0x2e, 0x6d, 0x61, 0x78, 0x5f,
  0x66, 0x6c, 0x61, 0x74, 0x5f, 0x77, 0x6f, 0x72, 0x6b, 0x67, 0x72, 0x6f,
  0x75, 0x70, 0x5f, 0x73, 0x69, 0x7a, 0x65, 0xcd, 0x01, 0x00, 0xa5, 0x2e,
  0x6e, 0x61, 0x6d, 0x65, 0xa3, 0x6e, 0x6f, 0x70, 0xbb, 0x2e, 0x70, 0x72,
  0x69, 0x76, 0x61, 0x74, 0x65, 0x5f, 0x73, 0x65, 0x67, 0x6d, 0x65, 0x6e,
  0x74, 0x5f, 0x66, 0x69, 0x78, 0x65, 0x64, 0x5f, 0x73, 0x69, 0x7a, 0x65,
  0x00, 0xab, 0x2e, 0x73, 0x67, 0x70, 0x72, 0x5f, 0x63, 0x6f, 0x75, 0x6e,
  0x74, 0x04, 0xb1, 0x2e, 0x73, 0x67, 0x70, 0x72, 0x5f, 0x73, 0x70, 0x69,
  0x6c, 0x6c, 0x5f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0xa7, 0x2e, 0x73,
  0x79, 0x6d, 0x62, 0x6f, 0x6c, 0xa6, 0x6e, 0x6f, 0x70, 0x2e, 0x6b, 0x64,
  0xb8, 0x2e, 0x75, 0x6e, 0x69, 0x66, 0x6f, 0x72, 0x6d, 0x5f, 0x77, 0x6f,
  0x72, 0x6b, 0x5f, 0x67, 0x72, 0x6f, 0x75, 0x70, 0x5f, 0x73, 0x69, 0x7a,
  0x65, 0x01, 0xb3, 0x2e, 0x75, 0x73, 0x65, 0x73, 0x5f, 0x64, 0x79, 0x6e,
  0x61, 0x6d, 0x69, 0x63, 0x5f, 0x73, 0x74, 0x61, 0x63, 0x6b, 0xc2, 0xab,
  0x2e, 0x76, 0x67, 0x70, 0x72, 0x5f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00,
  0xb1, 0x2e, 0x76, 0x67, 0x70, 0x72, 0x5f, 0x73, 0x70, 0x69, 0x6c, 0x6c,
  0x5f, 0x63, 0x6f, 0x75, 0x6e, 0x74, 0x00, 0xaf, 0x2e, 0x77, 0x61, 0x76,
  0x65, 0x66, 0x72, 0x6f, 0x6e, 0x74, 0x5f, 0x73, 0x69, 0x7a, 0x65, 0x40,
  0xad, 0x61, 0x6d, 0x64, 0x68, 0x73, 0x61, 0x2e, 0x74, 0x61, 0x72, 0x67,
  0x65, 0x74, 0xb9, 0x61, 0x6d, 0x64, 0x67, 0x63, 0x6e, 0x2d, 0x61, 0x6d,
  0x64, 0x2d, 0x61, 0x6d, 0x64, 0x68, 0x73, 0x61, 0x2d, 0x2d, 0x67, 0x66,
  0x78, 0x39, 0x30, 0x61, 0xae, 0x61, 0x6d, 0x64, 0x68, 0x73, 0x61, 0x2e,
  0x76, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e, 0x92, 0x01, 0x02, 0x00, 0x00
};
// clang-format on

} // namespace testutil
} // namespace amdgpu
} // namespace hotswap

#endif // HOTSWAP_UNITTESTS_METADATATESTUTIL_H
