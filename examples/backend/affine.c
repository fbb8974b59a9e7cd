/* affine: an example ferry backend, in C, against ferry/engines/backend_api.h alone.
 *
 * Its models compute y = scale * x + bias on rows of `width` float32 values, for a dynamic batch of
 * rows. A model file is a few lines of text:
 *
 *     format ferry-affine/1
 *     name scale2        (optional; "affine" by default)
 *     width 1024
 *     max_batch 64
 *     scale 2
 *     bias 1
 *
 * With scale 2 and bias 1 it computes what ferry's built-in `touch` workload does, with the same
 * kernel, so the two measure what the plugin boundary costs. It shows every part of the ABI: the
 * I/O with a dynamic dim, resolve with its errors, contexts, bind, enqueue on the caller's stream
 * (affine_kernel.cu), the CPU entry point that lets a server without a GPU serve it, and errors
 * that carry a message back to ferry. The optional inputs-consumed, capture and bytes-read
 * functions are left out: ferry's defaults (the event after enqueue, capturable, every byte read)
 * are right for one kernel launch. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry/engines/backend_api.h"

/* The GPU side, in affine_kernel.cu; each returns NULL or CUDA's error text. */
const char* affine_max_blocks(int* blocks);
const char* affine_launch(const float* x, float* y, size_t count, float scale, float bias, int max_blocks,
                          struct CUstream_st* stream);

struct ferry_backend_error {
  ferry_backend_error_kind kind;
  char message[512];
};

struct ferry_backend_model {
  char name[64];
  int64_t width, max_batch;
  float scale, bias;
  int64_t x_dims[2], y_dims[2]; /* declared: [dynamic, width] */
};

struct ferry_backend_context {
  const ferry_backend_model* model;
  int64_t batch;
  int max_blocks;   /* the grid's cap on the context's device */
  void* address[2]; /* x, y */
};

/* The error returned when there is no memory for another: never freed. */
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

/* ---- The backend ------------------------------------------------------------------------------ */

FERRY_BACKEND_EXPORT uint32_t ferry_backend_api_version(void) { return FERRY_BACKEND_API_VERSION; }
FERRY_BACKEND_EXPORT const char* ferry_backend_name(void) { return "affine"; }
FERRY_BACKEND_EXPORT const char* ferry_backend_version(void) { return "1.0 (example, C)"; }

FERRY_BACKEND_EXPORT ferry_backend_error_kind ferry_backend_error_kind_of(const ferry_backend_error* e) {
  return e->kind;
}
FERRY_BACKEND_EXPORT const char* ferry_backend_error_message(const ferry_backend_error* e) { return e->message; }
FERRY_BACKEND_EXPORT void ferry_backend_error_release(ferry_backend_error* e) {
  if (e != &no_memory) free(e);
}

/* ---- Models ----------------------------------------------------------------------------------- */

/* Reads "key value" lines; every key but name is required once. */
static ferry_backend_error* parse(FILE* in, const char* path, ferry_backend_model* m) {
  char line[256], key[32], value[200];
  int seen_format = 0, seen_width = 0, seen_batch = 0, seen_scale = 0, seen_bias = 0, number = 0;
  while (fgets(line, sizeof line, in) != NULL) {
    ++number;
    if (line[0] == '#' || line[0] == '\n') continue;
    if (sscanf(line, "%31s %199s", key, value) != 2)
      return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s', line %d: expected 'key value'", path, number);
    char* end = NULL;
    errno = 0;
    if (strcmp(key, "format") == 0) {
      if (strcmp(value, "ferry-affine/1") != 0)
        return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': format '%s', expected ferry-affine/1", path,
                    value);
      seen_format = 1;
    } else if (strcmp(key, "name") == 0) {
      if (strlen(value) >= sizeof m->name)
        return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': name is longer than %zu characters", path,
                    sizeof m->name - 1);
      memcpy(m->name, value, strlen(value) + 1);
    } else if (strcmp(key, "width") == 0 || strcmp(key, "max_batch") == 0) {
      const long long n = strtoll(value, &end, 10);
      if (*end != '\0' || errno != 0 || n < 1 || n > (1LL << 30))
        return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT,
                    "model file '%s': %s must be a whole number in [1, 2^30], got '%s'", path, key, value);
      if (key[0] == 'w')
        m->width = n, seen_width = 1;
      else
        m->max_batch = n, seen_batch = 1;
    } else if (strcmp(key, "scale") == 0 || strcmp(key, "bias") == 0) {
      const float f = strtof(value, &end);
      if (*end != '\0' || errno != 0 || !isfinite(f))
        return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': %s must be a finite number, got '%s'", path,
                    key, value);
      if (key[0] == 's')
        m->scale = f, seen_scale = 1;
      else
        m->bias = f, seen_bias = 1;
    } else {
      return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': unknown key '%s'", path, key);
    }
  }
  if (!seen_format)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT,
                "model file '%s' is not an affine model (no 'format ferry-affine/1')", path);
  if (!(seen_width && seen_batch && seen_scale && seen_bias))
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s' lacks %s", path,
                !seen_width   ? "width"
                : !seen_batch ? "max_batch"
                : !seen_scale ? "scale"
                              : "bias");
  if (m->width * m->max_batch > (1LL << 31))
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s': width x max_batch exceeds 2^31 values", path);
  return NULL;
}

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_model_load(const char* path,
                                                                   const ferry_backend_load_options* options,
                                                                   ferry_backend_model** model) {
  (void)options; /* nothing lives on the device: any device, or the CPU alone (-1), will do */
  FILE* in = fopen(path, "r");
  if (in == NULL)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model file '%s' cannot be opened: %s", path, strerror(errno));
  ferry_backend_model* m = calloc(1, sizeof *m);
  if (m == NULL) {
    fclose(in);
    return fail(FERRY_BACKEND_ERROR_OUT_OF_MEMORY, "no memory for a model");
  }
  strcpy(m->name, "affine");
  ferry_backend_error* e = parse(in, path, m);
  fclose(in);
  if (e != NULL) {
    free(m);
    return e;
  }
  m->x_dims[0] = m->y_dims[0] = FERRY_BACKEND_DYNAMIC_DIM;
  m->x_dims[1] = m->y_dims[1] = m->width;
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
  tensor->name = input ? "x" : "y";
  tensor->dtype = FERRY_BACKEND_F32;
  tensor->role = input ? FERRY_BACKEND_INPUT : FERRY_BACKEND_OUTPUT;
  tensor->rank = 2;
  tensor->dims = input ? model->x_dims : model->y_dims;
  tensor->index_bound = 0;
}

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_model_resolve(const ferry_backend_model* model,
                                                                      const ferry_backend_shape* inputs,
                                                                      size_t input_count, int64_t* dims,
                                                                      size_t dims_count) {
  if (dims_count != 4)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "expected room for 4 dims, got %zu", dims_count);
  if (input_count == 0)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "input 'x' has a dynamic batch dim: its shape must be given");
  for (size_t i = 0; i < input_count; ++i)
    if (strcmp(inputs[i].name, "x") != 0)
      return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "model '%s' has no input '%s' (its input is 'x')", model->name,
                  inputs[i].name);
  if (input_count > 1) return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "input 'x' is given twice");
  const ferry_backend_shape* x = &inputs[0];
  if (x->rank != 2)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "input 'x' has rank 2 ([batch, %lld]), got rank %d",
                (long long)model->width, x->rank);
  if (x->dims[1] != model->width)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "input 'x' dim 1 is %lld, got %lld", (long long)model->width,
                (long long)x->dims[1]);
  if (x->dims[0] < 1 || x->dims[0] > model->max_batch)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "input 'x' batch must be in [1, %lld], got %lld",
                (long long)model->max_batch, (long long)x->dims[0]);
  dims[0] = dims[2] = x->dims[0];
  dims[1] = dims[3] = model->width;
  return NULL;
}

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_model_run_host(const ferry_backend_model* model,
                                                                       const int64_t* dims, size_t dims_count,
                                                                       const void* const* inputs,
                                                                       const size_t* input_bytes, void* const* outputs,
                                                                       const size_t* output_bytes) {
  const size_t count = (size_t)(dims[0] * dims[1]);
  if (dims_count != 4 || input_bytes[0] != count * sizeof(float) || output_bytes[0] != count * sizeof(float))
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "run_host: sizes do not match the dims");
  const float* x = inputs[0];
  float* y = outputs[0];
  for (size_t i = 0; i < count; ++i) y[i] = fmaf(x[i], model->scale, model->bias); /* as the kernel: one rounding */
  return NULL;
}

/* ---- Contexts --------------------------------------------------------------------------------- */

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_create(ferry_backend_model* model, const int64_t* dims,
                                                                       size_t dims_count,
                                                                       ferry_backend_context** context) {
  if (dims_count != 4 || dims[0] < 1 || dims[0] > model->max_batch || dims[1] != model->width)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "a context needs dims that resolve gave");
  ferry_backend_context* c = calloc(1, sizeof *c);
  if (c == NULL) return fail(FERRY_BACKEND_ERROR_OUT_OF_MEMORY, "no memory for a context");
  c->model = model;
  c->batch = dims[0];
  const char* why = affine_max_blocks(&c->max_blocks); /* the model's device is current */
  if (why != NULL) {
    free(c);
    return fail(FERRY_BACKEND_ERROR_UNSUPPORTED, "no GPU for a context: %s", why);
  }
  *context = c;
  return NULL;
}

FERRY_BACKEND_EXPORT void ferry_backend_context_destroy(ferry_backend_context* context) { free(context); }

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_bind(ferry_backend_context* context, size_t index,
                                                                     void* device_address) {
  if (index > 1) return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "no tensor %zu (x is 0, y is 1)", index);
  context->address[index] = device_address;
  return NULL;
}

FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_enqueue(ferry_backend_context* context,
                                                                        struct CUstream_st* stream) {
  if (context->address[0] == NULL || context->address[1] == NULL)
    return fail(FERRY_BACKEND_ERROR_INVALID_ARGUMENT, "tensor '%s' is not bound", context->address[0] ? "y" : "x");
  const ferry_backend_model* m = context->model;
  const char* why = affine_launch(context->address[0], context->address[1], (size_t)(context->batch * m->width),
                                  m->scale, m->bias, context->max_blocks, stream);
  return why == NULL ? NULL : fail(FERRY_BACKEND_ERROR_RUNTIME, "the kernel launch failed: %s", why);
}
