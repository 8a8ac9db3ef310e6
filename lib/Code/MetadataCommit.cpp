//===- lib/Code/MetadataCommit.cpp - Writing metadata back ----------------===//

#include "hotswap/Code/MetadataCommit.h"

#include "hotswap/Support/Error.h"

using namespace llvm;
using namespace hotswap;
using namespace hotswap::amdgpu;

Error code::commitMetadata(const CodeObjectMetadata &MD, Section &NoteSection) {
  if (!MD.hasPendingChanges())
    return Error::success();
  Expected<NoteRewrite> NR = MD.rewrite();
  if (!NR)
    return NR.takeError();
  // The whole note section, the same size (rewrite() checks it): moved in,
  // not copied over a copy of the input's bytes.
  if (NR->Bytes.size() != NoteSection.size())
    return makeError("metadata: the rewritten note section changed size");
  NoteSection.setContents(std::move(NR->Bytes));
  return Error::success();
}
