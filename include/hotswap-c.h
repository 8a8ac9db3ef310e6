/*===- hotswap-c.h - C API of libhotswap --------------------------*- C -*-===*\
|*                                                                            *|
|* A small, stable C interface to hotswap-opt's pipelines: run a pipeline on  *|
|* an input held in memory (a code object, an offload bundle, or a HIP host   *|
|* executable or library) and get the resulting bytes back.                   *|
|*                                                                            *|
|* Contract:                                                                  *|
|*  - No function throws, prints or exits. Every failure is reported as a     *|
|*    message string on the result handle (hotswap_result_get_error).         *|
|*  - Handles are opaque; each one is released by its own destroy function,   *|
|*    which accepts NULL.                                                     *|
|*  - Strings and buffers returned by the library are owned by the handle     *|
|*    they came from and stay valid until that handle is destroyed.          *|
|*  - Thread-safe: any number of runs may proceed at once on any threads, on *|
|*    different inputs; a handle is used by one thread at a time. Runs share *|
|*    only immutable per-target tables.                                      *|
|*                                                                            *|
|* The library is C++: link with a C++ linker (in CMake, enable CXX in        *|
|* project() and link HotswapOpt::hotswap).                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef HOTSWAP_C_H
#define HOTSWAP_C_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this interface. Incremented when a function is added; existing
   functions keep their signature and meaning within a major library
   version. */
#define HOTSWAP_C_API_VERSION 3

/* The library version, "MAJOR.MINOR.PATCH" (static storage). */
const char *hotswap_version(void);

/* Options of a run. Created with defaults: not strict, no verify-each, not
   keep-going, warnings dropped. */
typedef struct hotswap_options *hotswap_options_t;

/* Receives one warning. `message` is NUL-terminated and only valid during the
   call; `user_data` is what was given to
   hotswap_options_set_warning_callback. Called on the thread running the
   pipeline, before hotswap_run_pipeline returns. */
typedef void (*hotswap_warning_callback)(const char *message, void *user_data);

/* Returns NULL only if memory is exhausted. */
hotswap_options_t hotswap_options_create(void);
void hotswap_options_destroy(hotswap_options_t options);
/* Non-zero: unmet preconditions and best-effort failures are errors. */
void hotswap_options_set_strict(hotswap_options_t options, int strict);
/* Non-zero: run `verify` after every pass that changed the object. */
void hotswap_options_set_verify_each(hotswap_options_t options,
                                     int verify_each);
/* Non-zero: in a container (bundle or host binary), a code object whose run
   fails is left as it was and reported as a warning (and counted, see
   hotswap_result_get_code_objects) instead of failing the whole run. Since
   C API 2. */
void hotswap_options_set_keep_going(hotswap_options_t options, int keep_going);
/* A NULL callback drops warnings again. */
void hotswap_options_set_warning_callback(hotswap_options_t options,
                                          hotswap_warning_callback callback,
                                          void *user_data);

/* The outcome of a run: either output bytes or an error message. */
typedef struct hotswap_result *hotswap_result_t;

/* Loads the pass plugin at `path` (a shared object exporting
   hotswapGetPassPluginInfo, see hotswap/Passes/PassPlugin.h) and makes its
   passes usable in the pipelines run with `options`; as hotswap-opt
   -load-pass-plugin. Returns a result whose hotswap_result_succeeded says
   whether it loaded and registered; on failure hotswap_result_get_error
   says why, naming the plugin ("'PATH': ..."), and nothing of it is
   registered. The plugin stays loaded until the process ends. The program
   must export the library's symbols to the plugin (linked with
   -rdynamic / ENABLE_EXPORTS, not -static). Returns NULL only if memory is
   exhausted. Since C API 3. */
hotswap_result_t hotswap_options_load_pass_plugin(hotswap_options_t options,
                                                  const char *path);

/* What an input is, detected from its content. Since C API 2. */
typedef enum hotswap_input_kind {
  HOTSWAP_INPUT_UNKNOWN = 0,
  /* An AMDGPU code object (ELF64, EM_AMDGPU). */
  HOTSWAP_INPUT_CODE_OBJECT = 1,
  /* An uncompressed clang offload bundle (__CLANG_OFFLOAD_BUNDLE__). */
  HOTSWAP_INPUT_OFFLOAD_BUNDLE = 2,
  /* A compressed clang offload bundle (CCOB). */
  HOTSWAP_INPUT_COMPRESSED_OFFLOAD_BUNDLE = 3,
  /* A HIP host executable or shared library (ELF64, x86-64). */
  HOTSWAP_INPUT_HOST_BINARY = 4
} hotswap_input_kind;

/* A short description of `kind` ("AMDGPU code object", "offload bundle",
   ...; static storage). */
const char *hotswap_input_kind_name(hotswap_input_kind kind);

/* Detects the kind of the input, then runs `pipeline` (the text of
   hotswap-opt's -passes=, e.g. "trampoline,stub-syms"; "" runs nothing) on
   every AMDGPU code object in it, and returns the outcome: an output of the
   same kind as the input. The input is only read during the call and need
   not be aligned. `options` may be NULL
   (defaults). Returns NULL only if memory is exhausted; invalid arguments
   (NULL data with a non-zero size, NULL pipeline) give an error result. */
hotswap_result_t hotswap_run_pipeline(hotswap_options_t options,
                                      const void *data, size_t size,
                                      const char *pipeline);

/* Non-zero when the run succeeded. */
int hotswap_result_succeeded(hotswap_result_t result);
/* The output of a successful run (NULL and *size = 0 after a failure).
   `size` may be NULL. */
const void *hotswap_result_get_output(hotswap_result_t result, size_t *size);
/* The kind of the input (also after a failure, when it was recognised).
   Since C API 2. */
hotswap_input_kind hotswap_result_get_input_kind(hotswap_result_t result);
/* How many code objects the pipeline ran on (1 for a bare code object); in
   `*changed` how many of them some pass changed, in `*failed` how many failed
   and were left as they were (keep-going). The pointers may be NULL. Since
   C API 2. */
size_t hotswap_result_get_code_objects(hotswap_result_t result, size_t *changed,
                                       size_t *failed);
/* The error message of a failed run, NULL after a success. */
const char *hotswap_result_get_error(hotswap_result_t result);
void hotswap_result_destroy(hotswap_result_t result);

#ifdef __cplusplus
}
#endif

#endif /* HOTSWAP_C_H */
