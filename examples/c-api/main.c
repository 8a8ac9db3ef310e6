/* examples/c-api/main.c - Using libhotswap from C.
 *
 * Usage: c-api-example [--strict] [--verify-each] [--keep-going]
 *                      [--load-pass-plugin=PATH]... IN OUT PIPELINE
 *
 * Reads IN (a code object, an offload bundle or a HIP host binary), runs
 * PIPELINE on it through hotswap-c.h, says what the input was and how many
 * code objects changed, writes OUT. Warnings
 * are printed as "warning: ..." and counted through the callback's user data;
 * pass plugins are loaded into the options before the run;
 * an error is printed as "error: ..." (exit 1, OUT not written). */

#include "hotswap-c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct warning_counter {
  unsigned count;
};

static void on_warning(const char *message, void *user_data) {
  struct warning_counter *counter = (struct warning_counter *)user_data;
  ++counter->count;
  printf("warning: %s\n", message);
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  unsigned char *data = NULL;
  long len;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
      fseek(f, 0, SEEK_SET) == 0) {
    data = (unsigned char *)malloc(len ? (size_t)len : 1);
    if (data && fread(data, 1, (size_t)len, f) != (size_t)len) {
      free(data);
      data = NULL;
    }
    *size = (size_t)len;
  }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  int strict = 0, verify_each = 0, keep_going = 0, argi = 1, status = 1;
  const char *in, *out, *pipeline;
  unsigned char *input;
  size_t input_size = 0, output_size = 0, code_objects, changed, failed;
  const void *output;
  struct warning_counter warnings = {0};
  hotswap_options_t options;
  hotswap_result_t result;
  FILE *f;
  const char *plugins[16];
  int num_plugins = 0, i;

  for (; argi < argc && argv[argi][0] == '-' && argv[argi][1] == '-'; ++argi) {
    if (strcmp(argv[argi], "--strict") == 0)
      strict = 1;
    else if (strcmp(argv[argi], "--verify-each") == 0)
      verify_each = 1;
    else if (strcmp(argv[argi], "--keep-going") == 0)
      keep_going = 1;
    else if (strncmp(argv[argi], "--load-pass-plugin=", 19) == 0 &&
             num_plugins < 16)
      plugins[num_plugins++] = argv[argi] + 19;
    else
      break;
  }
  if (argc - argi != 3) {
    fprintf(stderr, "usage: c-api-example [--strict] [--verify-each] "
                    "[--keep-going] [--load-pass-plugin=PATH]... "
                    "IN OUT PIPELINE\n");
    return 1;
  }
  in = argv[argi];
  out = argv[argi + 1];
  pipeline = argv[argi + 2];

  printf("libhotswap %s (C API %d)\n", hotswap_version(),
         HOTSWAP_C_API_VERSION);

  input = read_file(in, &input_size);
  if (!input) {
    fprintf(stderr, "error: cannot read '%s'\n", in);
    return 1;
  }

  options = hotswap_options_create();
  if (!options) {
    free(input);
    return 1;
  }
  hotswap_options_set_strict(options, strict);
  hotswap_options_set_verify_each(options, verify_each);
  hotswap_options_set_keep_going(options, keep_going);
  hotswap_options_set_warning_callback(options, on_warning, &warnings);
  for (i = 0; i < num_plugins; ++i) {
    /* The plugin binds to this program's libhotswap: it is linked with
       ENABLE_EXPORTS (CMakeLists.txt). */
    result = hotswap_options_load_pass_plugin(options, plugins[i]);
    if (!result || !hotswap_result_succeeded(result)) {
      printf("error: %s\n",
             result ? hotswap_result_get_error(result) : "out of memory");
      hotswap_result_destroy(result);
      hotswap_options_destroy(options);
      free(input);
      return 1;
    }
    hotswap_result_destroy(result);
  }

  result = hotswap_run_pipeline(options, input, input_size, pipeline);
  /* The input is not needed after the call. */
  free(input);
  if (!result) {
    hotswap_options_destroy(options);
    return 1;
  }

  code_objects = hotswap_result_get_code_objects(result, &changed, &failed);
  printf("input: %s, %lu code object(s): %lu changed, %lu failed\n",
         hotswap_input_kind_name(hotswap_result_get_input_kind(result)),
         (unsigned long)code_objects, (unsigned long)changed,
         (unsigned long)failed);
  if (!hotswap_result_succeeded(result)) {
    printf("error: %s\n", hotswap_result_get_error(result));
  } else {
    output = hotswap_result_get_output(result, &output_size);
    f = fopen(out, "wb");
    if (!f || fwrite(output, 1, output_size, f) != output_size) {
      fprintf(stderr, "error: cannot write '%s'\n", out);
    } else {
      printf("wrote %lu bytes (input %lu), %u warning(s)\n",
             (unsigned long)output_size, (unsigned long)input_size,
             warnings.count);
      status = 0;
    }
    if (f && fclose(f) != 0)
      status = 1;
  }

  hotswap_result_destroy(result);
  hotswap_options_destroy(options);
  return status;
}
