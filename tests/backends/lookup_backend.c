/* lookup: a test backend whose model has an integer index input, as every text model does.
 *
 * It looks `ids` (int64 [batch, width]) up in a table of `rows` rows of `dim` values and returns
 * `vectors` (float32 [batch, width, dim]); row r of the table is r + d / 4 at column d, so the
 * table needs no memory and an answer is checked by arithmetic. Like a real embedding, an id
 * outside [0, rows) fails a device-side assert (lookup_kernel.cu), which loses the GPU's context;
 * on the CPU (ferry_backend_model_run_host) the same id reports FERRY_BACKEND_ERROR_DEVICE_FAULT,
 * so the server's handling of a lost GPU is tested without one. A model file:
 *
 *     format ferry-lookup/1
 *     name tokens          (optional; "lookup" by default)
 *     rows 1000
 *     width 8
 *     dim 4
 *     max_batch 16
 *     declare_bound yes    (yes: `ids` declares index_bound = rows; no: it declares none, as a
 *                           bare model package does, and nothing stops a bad id before the kernel)
 *     fault_after 0        (N > 0: the run after the model's first N fails the assert whatever
 *                           its ids, a fault forced at a known point; 0: never)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/engines/backend_api.h"

const char* lookup_launch(const int64_t* ids, float* vectors, size_t count, int64_t rows, int64_t dim, int fault,
                          struct CUstream_st* stream);

struct ferry_backend_error {
  ferry_backend_error_kind kind;
  char message[512];
};

struct ferry_backend_model {
  char name[64];
  int64_t rows, width, dim, max_batch;
  int declare_bound;
  int64_t fault_after;
  atomic_llong runs; /* runs of the model so far, for fault_after */
  int64_t ids_dims[2], vectors_dims[3];
};

/* Whether this run is the one fault_after forces to fail. */
static int forced_fault(ferry_backend_model* m) {
  return m->fault_after > 0 && atomic_fetch_add(&m->runs, 1) == m->fault_after;
}

struct ferry_backend_context {
  ferry_backend_model* model;
  int64_t batch;
  void* address[2];
};

static ferry_backend_error no_memory = {FERRY_BACKEND_ERROR_OUT_OF_MEMORY, "out of host memory"};

static ferry_backend_error* fail(ferry_backend_error_kind kind, const char* format, ...) {
  ferry_backend_error* e = malloc(sizeof *e);
  if (e == NULL) return &no_memory;
  e->kind = kind;
  va_list args;
  va_start(args, format);
  vsnprintf(e->message, sizeof e->message, format, args);
  va_end(args);
  return e;
}

FERRY_BACKEND_EXPORT uint32_t ferry_backend_api_version(void) { return FERRY_BACKEND_API_VERSION; }
FERRY_BACKEND_EXPORT const char* ferry_backend_name(void) { return "lookup"; }
FERRY_BACKEND_EXPORT const char* ferry_backend_version(void) { return "test (an index input that can fault)"; }
FERRY_BACKEND_EXPORT ferry_backend_error_kind ferry_backend_error_kind_of(const ferry_backend_error* e) {
  return e->kind;
}
FERRY_BACKEND_EXPORT const char* ferry_backend_error_message(const ferry_backend_error* e) { return e->message; }
FERRY_BACKEND_EXPORT void ferry_backend_error_release(ferry_backend_error* e) {
  if (e != &no_memory) free(e);
}

static ferry_backend_error* parse(FILE* in, const char* path, ferry_backend_model* m) {
  char line[256], key[32], value[200];
  int seen_format = 0, seen = 0;
  while (fgets(line, sizeof line, in) != NULL) {
    if (line[0] == '#' || line[0] == '\n') continue;
    if (sscanf(line, "%31s %199s", key, value) != 2)
      return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': expected 'key value' lines", path);
    char* end = NULL;
    errno = 0;
    if (strcmp(key, "format") == 0) {
      if (strcmp(value, "ferry-lookup/1") != 0)
        return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': format '%s', expected ferry-lookup/1", path,
                    value);
      seen_format = 1;
    } else if (strcmp(key, "name") == 0) {
      snprintf(m->name, sizeof m->name, "%s", value);
    } else if (strcmp(key, "declare_bound") == 0) {
      m->declare_bound = strcmp(value, "yes") == 0;
    } else if (strcmp(key, "fault_after") == 0) {
      m->fault_after = strtoll(value, &end, 10);
      if (*end != '\0' || m->fault_after < 0)
        return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': fault_after must be 0 or more", path);
    } else {
      const long long n = strtoll(value, &end, 10);
      if (*end != '\0' || errno != 0 || n < 1 || n > (1LL << 24))
        return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': %s must be in [1, 2^24], got '%s'", path,
                    key, value);
      if (strcmp(key, "rows") == 0)
        m->rows = n, seen |= 1;
      else if (strcmp(key, "width") == 0)
        m->width = n, seen |= 2;
      else if (strcmp(key, "dim") == 0)
        m->dim = n, seen |= 4;
      else if (strcmp(key, "max_batch") == 0)
        m->max_batch = n, seen |= 8;
      else
        return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': unknown key '%s'", path, key);
    }
  }
  if (!seen_format || seen != 15)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s' needs format, rows, width, dim and max_batch",
                path);
  return NULL;
}

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_model_load(const char* path,
                                                                   const ferry_backend_load_options* options,
                                                                   ferry_backend_model** model) {
  (void)options;
  FILE* in = fopen(path, "r");
  if (in == NULL)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s' cannot be opened: %s", path, strerror(errno));
  ferry_backend_model* m = calloc(1, sizeof *m);
  if (m == NULL) {
    fclose(in);
    return fail(FERRY_BACKEND_ERROR_OUT_OF_MEMORY, "no memory for a model");
  }
  strcpy(m->name, "lookup");
  m->declare_bound = 1;
  ferry_backend_error* e = parse(in, path, m);
  fclose(in);
  if (e != NULL) {
    free(m);
    return e;
  }
  m->ids_dims[0] = m->vectors_dims[0] = FERRY_BACKEND_DYNAMIC_DIM;
  m->ids_dims[1] = m->vectors_dims[1] = m->width;
  m->vectors_dims[2] = m->dim;
  *model = m;
  return NULL;
}

FERRY_BACKEND_EXPORT void ferry_backend_model_unload(ferry_backend_model* model) { free(model); }
FERRY_BACKEND_EXPORT const char* ferry_backend_model_name(const ferry_backend_model* model) { return model->name; }
FERRY_BACKEND_EXPORT size_t ferry_backend_model_tensor_count(const ferry_backend_model* model) {
  (void)model;
  return 2;
}

FERRY_BACKEND_EXPORT void ferry_backend_model_tensor(const ferry_backend_model* model, size_t index,
                                                     ferry_backend_tensor* tensor) {
  const int input = index == 0;
  tensor->name = input ? "ids" : "vectors";
  tensor->dtype = input ? FERRY_BACKEND_I64 : FERRY_BACKEND_F32;
  tensor->role = input ? FERRY_BACKEND_INPUT : FERRY_BACKEND_OUTPUT;
  tensor->rank = input ? 2 : 3;
  tensor->dims = input ? model->ids_dims : model->vectors_dims;
  tensor->index_bound = input && model->declare_bound ? model->rows : 0;
}

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_model_resolve(const ferry_backend_model* model,
                                                                      const ferry_backend_shape* inputs,
                                                                      size_t input_count, int64_t* dims,
                                                                      size_t dims_count) {
  if (dims_count != 5) return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "expected room for 5 dims");
  if (input_count != 1 || strcmp(inputs[0].name, "ids") != 0 || inputs[0].rank != 2)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model '%s' takes one input 'ids' of rank 2", model->name);
  const int64_t batch = inputs[0].dims[0];
  if (batch < 1 || batch > model->max_batch || inputs[0].dims[1] != model->width)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "input 'ids' must be [1..%lld, %lld]",
                (long long)model->max_batch, (long long)model->width);
  dims[0] = dims[2] = batch;
  dims[1] = dims[3] = model->width;
  dims[4] = model->dim;
  return NULL;
}

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_model_run_host(const ferry_backend_model* model,
                                                                       const int64_t* dims, size_t dims_count,
                                                                       const void* const* inputs,
                                                                       const size_t* input_bytes, void* const* outputs,
                                                                       const size_t* output_bytes) {
  const size_t count = (size_t)(dims[0] * dims[1]);
  if (dims_count != 5 || input_bytes[0] != count * sizeof(int64_t) ||
      output_bytes[0] != count * (size_t)model->dim * sizeof(float))
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "run_host: sizes do not match the dims");
  const int64_t* ids = inputs[0];
  float* vectors = outputs[0];
  if (forced_fault((ferry_backend_model*)model))
    return fail(FERRY_BACKEND_ERROR_DEVICE_FAULT, "device-side assert triggered: the fault forced by fault_after %lld",
                (long long)model->fault_after);
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= model->rows)
      return fail(FERRY_BACKEND_ERROR_DEVICE_FAULT,
                  "device-side assert triggered: index out of bounds: 0 <= %lld < %lld (the CPU's stand-in for the "
                  "kernel's assert)",
                  (long long)ids[i], (long long)model->rows);
    for (int64_t d = 0; d < model->dim; ++d) vectors[i * (size_t)model->dim + (size_t)d] = (float)ids[i] + (float)d / 4;
  }
  return NULL;
}

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_create(ferry_backend_model* model, const int64_t* dims,
                                                                       size_t dims_count,
                                                                       ferry_backend_context** context) {
  if (dims_count != 5) return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "a context needs dims that resolve gave");
  ferry_backend_context* c = calloc(1, sizeof *c);
  if (c == NULL) return fail(FERRY_BACKEND_ERROR_OUT_OF_MEMORY, "no memory for a context");
  c->model = model;
  c->batch = dims[0];
  *context = c;
  return NULL;
}

FERRY_BACKEND_EXPORT void ferry_backend_context_destroy(ferry_backend_context* context) { free(context); }

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_bind(ferry_backend_context* context, size_t index,
                                                                     void* device_address) {
  if (index > 1) return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "no tensor %zu", index);
  context->address[index] = device_address;
  return NULL;
}

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_enqueue(ferry_backend_context* context,
                                                                        struct CUstream_st* stream) {
  ferry_backend_model* m = context->model;
  const char* why = lookup_launch(context->address[0], context->address[1], (size_t)(context->batch * m->width),
                                  m->rows, m->dim, forced_fault(m), stream);
  return why == NULL ? NULL : fail(FERRY_BACKEND_ERROR_RUNTIME, "the kernel launch failed: %s", why);
}
