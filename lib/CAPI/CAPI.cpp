//===- lib/CAPI/CAPI.cpp - C API (hotswap-c.h) ----------------------------===//
//
// Thin wrappers over hotswap::runPipeline. Every llvm::Error is converted to
// a string here; nothing escapes to the C caller but handles and strings.
//
//===----------------------------------------------------------------------===//

#include "hotswap-c.h"

#include "hotswap/Bundle/Bundle.h"
#include "hotswap/Hotswap.h"

#include "llvm/ADT/SmallString.h"

#include <new>
#include <string>

using namespace llvm;

struct hotswap_options {
  bool Strict = false;
  bool VerifyEach = false;
  bool KeepGoing = false;
  hotswap_warning_callback Warn = nullptr;
  void *WarnData = nullptr;
  /// Made by the first plugin loaded: the built-in passes and the plugins'.
  std::unique_ptr<hotswap::PassBuilder> Builder;
};

struct hotswap_result {
  std::unique_ptr<MemoryBuffer> Output;
  std::string Error;
  bool Succeeded = false;
  hotswap::RunSummary Summary;
};

namespace {
hotswap_input_kind toC(hotswap::bundle::InputKind K) {
  using hotswap::bundle::InputKind;
  switch (K) {
  case InputKind::CodeObject:
    return HOTSWAP_INPUT_CODE_OBJECT;
  case InputKind::OffloadBundle:
    return HOTSWAP_INPUT_OFFLOAD_BUNDLE;
  case InputKind::CompressedOffloadBundle:
    return HOTSWAP_INPUT_COMPRESSED_OFFLOAD_BUNDLE;
  case InputKind::HostELF:
    return HOTSWAP_INPUT_HOST_BINARY;
  case InputKind::Unknown:
    break;
  }
  return HOTSWAP_INPUT_UNKNOWN;
}
} // namespace

extern "C" {

const char *hotswap_version(void) {
  // getVersionString() refers to a string literal: null-terminated.
  return hotswap::getVersionString().data();
}

hotswap_options_t hotswap_options_create(void) {
  return new (std::nothrow) hotswap_options();
}

void hotswap_options_destroy(hotswap_options_t Options) { delete Options; }

void hotswap_options_set_strict(hotswap_options_t Options, int Strict) {
  if (Options)
    Options->Strict = Strict != 0;
}

void hotswap_options_set_verify_each(hotswap_options_t Options,
                                     int VerifyEach) {
  if (Options)
    Options->VerifyEach = VerifyEach != 0;
}

void hotswap_options_set_keep_going(hotswap_options_t Options, int KeepGoing) {
  if (Options)
    Options->KeepGoing = KeepGoing != 0;
}

void hotswap_options_set_warning_callback(hotswap_options_t Options,
                                          hotswap_warning_callback Callback,
                                          void *UserData) {
  if (!Options)
    return;
  Options->Warn = Callback;
  Options->WarnData = Callback ? UserData : nullptr;
}

hotswap_result_t hotswap_options_load_pass_plugin(hotswap_options_t Options,
                                                  const char *Path) {
  auto *R = new (std::nothrow) hotswap_result();
  if (!R)
    return nullptr;
  if (!Options || !Path) {
    R->Error = "invalid argument: options or path is NULL";
    return R;
  }
  if (!Options->Builder)
    Options->Builder = std::make_unique<hotswap::PassBuilder>();
  if (Error E =
          hotswap::loadPassPlugins(*Options->Builder, std::string(Path))) {
    R->Error = toString(std::move(E));
    return R;
  }
  R->Succeeded = true;
  return R;
}

hotswap_result_t hotswap_run_pipeline(hotswap_options_t Options,
                                      const void *Data, size_t Size,
                                      const char *Pipeline) {
  auto *R = new (std::nothrow) hotswap_result();
  if (!R)
    return nullptr;
  if (!Data && Size != 0) {
    R->Error = "invalid argument: input data is NULL but its size is not 0";
    return R;
  }
  if (!Pipeline) {
    R->Error = "invalid argument: pipeline is NULL";
    return R;
  }

  hotswap::PipelineOptions Opts;
  if (Options) {
    Opts.Strict = Options->Strict;
    Opts.VerifyEach = Options->VerifyEach;
    Opts.KeepGoing = Options->KeepGoing;
    Opts.Builder = Options->Builder.get();
    if (hotswap_warning_callback CB = Options->Warn) {
      void *UserData = Options->WarnData;
      Opts.Warn = [CB, UserData](const Twine &Msg) {
        SmallString<256> Text;
        CB(Msg.toNullTerminatedStringRef(Text).data(), UserData);
      };
    }
  }

  static const char Empty[1] = {0};
  MemoryBufferRef Input(
      StringRef(Data ? static_cast<const char *>(Data) : Empty, Size),
      "<memory>");
  Expected<std::unique_ptr<MemoryBuffer>> Out =
      hotswap::runPipeline(Input, Pipeline, Opts, &R->Summary);
  if (!Out) {
    R->Error = toString(Out.takeError());
    if (R->Error.empty())
      R->Error = "unknown error";
    return R;
  }
  R->Output = std::move(*Out);
  R->Succeeded = true;
  return R;
}

int hotswap_result_succeeded(hotswap_result_t Result) {
  return Result && Result->Succeeded;
}

const void *hotswap_result_get_output(hotswap_result_t Result, size_t *Size) {
  if (!Result || !Result->Succeeded) {
    if (Size)
      *Size = 0;
    return nullptr;
  }
  if (Size)
    *Size = Result->Output->getBufferSize();
  return Result->Output->getBufferStart();
}

const char *hotswap_input_kind_name(hotswap_input_kind Kind) {
  using hotswap::bundle::InputKind;
  for (InputKind K : {InputKind::CodeObject, InputKind::OffloadBundle,
                      InputKind::CompressedOffloadBundle, InputKind::HostELF})
    if (toC(K) == Kind)
      // inputKindName() returns string literals: null-terminated.
      return hotswap::bundle::inputKindName(K).data();
  return hotswap::bundle::inputKindName(InputKind::Unknown).data();
}

hotswap_input_kind hotswap_result_get_input_kind(hotswap_result_t Result) {
  return Result ? toC(Result->Summary.Kind) : HOTSWAP_INPUT_UNKNOWN;
}

size_t hotswap_result_get_code_objects(hotswap_result_t Result, size_t *Changed,
                                       size_t *Failed) {
  const hotswap::RunSummary Empty;
  const hotswap::RunSummary &S = Result ? Result->Summary : Empty;
  if (Changed)
    *Changed = S.Changed;
  if (Failed)
    *Failed = S.Failed;
  return S.CodeObjects;
}

const char *hotswap_result_get_error(hotswap_result_t Result) {
  if (!Result)
    return "invalid argument: result is NULL";
  return Result->Succeeded ? nullptr : Result->Error.c_str();
}

void hotswap_result_destroy(hotswap_result_t Result) { delete Result; }

} // extern "C"
