/* The C ABI of ferry's engine backends: a shared library that runs models of one kind (libtorch
 * AOTInductor packages, TensorRT plans, ...) and that ferry loads at run time.
 *
 * It is ferry's engine seam (ferry/engines/engine.hpp) in plain C: describe the I/O (names, dtypes,
 * shapes with dynamic dims, index bounds), resolve concrete shapes, make one context per slot,
 * bind device addresses, enqueue on a CUDA stream, record an event once the inputs are read, say
 * why a stream capture cannot take a context (and capture graphs of its own instead), run a
 * context at another batch size, and how many bytes of an input its kernels read.
 * No C++ type crosses it, so a backend built with another compiler or standard library works.
 *
 * A backend is a file named libferry_backend_<NAME>.so, and a model spec "<NAME>:<PATH>" is
 * loaded by it (ferry bench --engine torch:resnet50.pt2 loads libferry_backend_torch.so). It
 * exports the functions below with C linkage; those marked optional may be left out. ferry calls
 * ferry_backend_api_version() first and refuses a backend whose number is not between
 * FERRY_BACKEND_API_OLDEST_VERSION and FERRY_BACKEND_API_VERSION. examples/backend/ is a complete backend in about 250
 * lines of C.
 *
 * Ownership: a failing call returns a ferry_backend_error* that the backend made and that ferry
 * releases with ferry_backend_error_release(); success is NULL. Strings and arrays a backend hands
 * out stay valid until the object they belong to (the model or the context) is destroyed.
 *
 * Threads: ferry may call one model from several threads at once (resolve, context creation,
 * ferry_backend_model_run_host), and each context from one thread at a time; different contexts
 * of one model may enqueue at the same time on different streams.
 */
#ifndef FERRY_BACKEND_API_H
#define FERRY_BACKEND_API_H

#include <stddef.h>
#include <stdint.h>

#define FERRY_BACKEND_API_VERSION 3u
/* The oldest version ferry still loads: what each later version added is marked "(version N)"
 * below, and a backend of an older version simply never uses it. */
#define FERRY_BACKEND_API_OLDEST_VERSION 1u

#if defined(__GNUC__)
#define FERRY_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define FERRY_BACKEND_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* cudaStream_t and cudaEvent_t are pointers to these; no CUDA header is needed to write a backend
 * that computes on the CPU only. */
struct CUstream_st;
struct CUevent_st;

typedef struct ferry_backend_error ferry_backend_error;
typedef struct ferry_backend_model ferry_backend_model;
typedef struct ferry_backend_context ferry_backend_context;

/* What kind of failure an error reports; ferry raises the matching error type. */
typedef enum ferry_backend_error_kind {
  FERRY_BACKEND_ERROR_INVALID_ARGUMENT = 1, /* the caller's mistake: a bad model file, shape, tensor */
  FERRY_BACKEND_ERROR_UNSUPPORTED = 2,      /* cannot be done here: no GPU, a feature this backend lacks */
  FERRY_BACKEND_ERROR_OUT_OF_MEMORY = 3,    /* device or host memory ran out */
  FERRY_BACKEND_ERROR_RUNTIME = 4,          /* anything else that failed while running */
  /* (version 2) The GPU's context is lost: a sticky CUDA error (a device-side assert such as an
   * index out of bounds, an illegal address, an uncorrectable ECC error), after which every CUDA
   * call of the process fails the same way. ferry stops using the GPU and, when serving, exits for
   * a restart; it calls no backend function that releases GPU resources afterwards. */
  FERRY_BACKEND_ERROR_DEVICE_FAULT = 5
} ferry_backend_error_kind;

/* Element types; the values are part of the ABI. */
typedef enum ferry_backend_dtype {
  FERRY_BACKEND_F32 = 0,
  FERRY_BACKEND_F16 = 1,
  FERRY_BACKEND_BF16 = 2,
  FERRY_BACKEND_I8 = 3,
  FERRY_BACKEND_U8 = 4,
  FERRY_BACKEND_I32 = 5,
  FERRY_BACKEND_I64 = 6,
  FERRY_BACKEND_BOOL = 7
} ferry_backend_dtype;

typedef enum ferry_backend_role { FERRY_BACKEND_INPUT = 0, FERRY_BACKEND_OUTPUT = 1 } ferry_backend_role;

/* A dim the model accepts at any extent (within its symbol's range, checked by resolve). */
#define FERRY_BACKEND_DYNAMIC_DIM (-1)

/* One declared tensor of a model. Inputs come first. A tensor's rank never changes. */
typedef struct ferry_backend_tensor {
  const char* name;
  int32_t dtype; /* ferry_backend_dtype */
  int32_t role;  /* ferry_backend_role */
  int32_t rank;
  const int64_t* dims; /* rank values, FERRY_BACKEND_DYNAMIC_DIM where dynamic */
  int64_t index_bound; /* integer inputs that index something: valid values are [0, index_bound);
                          0 when any value is valid */
} ferry_backend_tensor;

/* A concrete shape asked for one input. */
typedef struct ferry_backend_shape {
  const char* name;
  int32_t rank;
  const int64_t* dims;
} ferry_backend_shape;

typedef struct ferry_backend_load_options {
  int32_t device;          /* CUDA device ordinal the model runs on; -1: computed on the CPU only
                              (ferry_backend_model_run_host), no CUDA call may be made */
  int32_t max_concurrency; /* contexts that may run at the same time (slots x clients), >= 1 */
} ferry_backend_load_options;

/* ---- The backend ---------------------------------------------------------------------------- */

/* FERRY_BACKEND_API_VERSION as the backend was compiled. Called first; must be safe to call. */
FERRY_BACKEND_EXPORT uint32_t ferry_backend_api_version(void);
/* The backend's name ("torch") and its own version with what it runs on ("1.0 (libtorch 2.11.0)"). */
FERRY_BACKEND_EXPORT const char* ferry_backend_name(void);
FERRY_BACKEND_EXPORT const char* ferry_backend_version(void);

/* ---- Errors --------------------------------------------------------------------------------- */

FERRY_BACKEND_EXPORT ferry_backend_error_kind ferry_backend_error_kind_of(const ferry_backend_error* error);
/* One line, without a trailing newline; valid until the error is released. */
FERRY_BACKEND_EXPORT const char* ferry_backend_error_message(const ferry_backend_error* error);
FERRY_BACKEND_EXPORT void ferry_backend_error_release(ferry_backend_error* error);

/* ---- Models --------------------------------------------------------------------------------- */

/* Loads the model file at `path`. A missing, unreadable or corrupt file is an INVALID_ARGUMENT
 * error naming the file and the problem. */
FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_model_load(const char* path,
                                                                   const ferry_backend_load_options* options,
                                                                   ferry_backend_model** model);
FERRY_BACKEND_EXPORT void ferry_backend_model_unload(ferry_backend_model* model);
FERRY_BACKEND_EXPORT const char* ferry_backend_model_name(const ferry_backend_model* model);
FERRY_BACKEND_EXPORT size_t ferry_backend_model_tensor_count(const ferry_backend_model* model);
/* The declared tensor at `index` (< tensor_count). */
FERRY_BACKEND_EXPORT void ferry_backend_model_tensor(const ferry_backend_model* model, size_t index,
                                                     ferry_backend_tensor* tensor);

/* The concrete dims of every tensor for the given input shapes, written tensor by tensor in the
 * declared order into `dims` (`dims_count` is the sum of the ranks). An input left out must be
 * fully static. An unknown name, a wrong rank or a shape the model cannot take is an
 * INVALID_ARGUMENT error naming the tensor. */
FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_model_resolve(const ferry_backend_model* model,
                                                                      const ferry_backend_shape* inputs,
                                                                      size_t input_count, int64_t* dims,
                                                                      size_t dims_count);

/* Optional. How many bytes of a concrete input (its dims as resolve gave them) one request's
 * kernels read; ferry assumes all of them when this is left out. */
FERRY_BACKEND_EXPORT uint64_t ferry_backend_model_input_bytes_read(const ferry_backend_model* model, size_t tensor,
                                                                   const int64_t* dims);

/* Optional: computes one request on the CPU, so a model can be served without a GPU. `dims` are
 * the concrete dims of every tensor as resolve gives them; inputs[i] and outputs[j] are host
 * memory of the inputs and outputs in the declared order, input_bytes / output_bytes their sizes. */
FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_model_run_host(const ferry_backend_model* model,
                                                                       const int64_t* dims, size_t dims_count,
                                                                       const void* const* inputs,
                                                                       const size_t* input_bytes, void* const* outputs,
                                                                       const size_t* output_bytes);

/* ---- Contexts: one per slot ----------------------------------------------------------------- */

/* A context for one concrete resolution (`dims` as resolve wrote them), on the model's device
 * (current when ferry calls). */
FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_create(ferry_backend_model* model, const int64_t* dims,
                                                                       size_t dims_count,
                                                                       ferry_backend_context** context);
FERRY_BACKEND_EXPORT void ferry_backend_context_destroy(ferry_backend_context* context);
/* Binds tensor `index` (declared order) to a device address, 256-byte aligned. ferry owns the
 * memory: device memory, mapped host memory or managed memory alike. */
FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_bind(ferry_backend_context* context, size_t index,
                                                                     void* device_address);
/* Enqueues one inference on `stream` (a cudaStream_t); every tensor is bound. */
FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_enqueue(ferry_backend_context* context,
                                                                        struct CUstream_st* stream);

/* Optional. Asks the context to record `consumed` (a cudaEvent_t) on the enqueue stream as soon
 * as it has read its inputs, earlier than the end of its work; *will_record says whether it will.
 * Left out or answering 0: ferry records the event right after enqueue. */
FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_signal_inputs_consumed(ferry_backend_context* context,
                                                                                       struct CUevent_st* consumed,
                                                                                       int32_t* will_record);

/* Optional. Why enqueue cannot be captured into a CUDA graph by a plain stream capture, or NULL
 * when it can (left out: it can). */
FERRY_BACKEND_EXPORT const char* ferry_backend_context_capture_refusal(const ferry_backend_context* context);

/* ---- CUDA graphs the context captures itself (API version 2) -------------------------------- */

/* Optional (version 2). Asks the context to capture its own enqueue into CUDA graphs and replay
 * them, for a backend whose run a plain stream capture cannot take (capture_refusal is non-NULL:
 * it allocates while it runs, its runtime keeps state a failed capture would break). ferry asks
 * only such a context, and only when graphs are wanted, before its first enqueue.
 *
 * With max_graphs > 0 the context keeps at most that many graphs, each for one key of what a
 * replay fixes: the concrete shapes and every bound address (a rebind to caller memory is another
 * key). A key runs plainly for a few warm-up runs, is then captured, on a memory pool private to
 * the context's graphs (so its run's allocations come back at the same addresses on every replay),
 * together with the copies that put its outputs at the bound addresses, and is replayed from then
 * on; beyond max_graphs the least recently used graph is dropped. A key whose capture fails (the
 * run synchronises, shapes depend on the data) is remembered and runs plainly from then on: the
 * capture is ended cleanly, the stream left out of capture mode, the error cleared, and the
 * reason kept for ferry_backend_context_graph_failure. max_graphs 0 turns it off again, dropping
 * the graphs; a negative count is an INVALID_ARGUMENT error.
 *
 * *refusal is NULL when the context will, else why it will not, in one line (valid until the
 * context is destroyed or this function is called again). ferry enqueues a context on one stream
 * for its whole life (its slot's) and one request at a time, so graphs of one context may share
 * their pool. Left out (a version 1 backend): ferry takes it as a refusal and runs without graphs. */
FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_use_graphs(ferry_backend_context* context,
                                                                           int32_t max_graphs, const char** refusal);

/* Optional (version 2). Why the context's first failed capture of its own failed, in one line,
 * or NULL while none has (valid until the context is destroyed or this function is called again).
 * ferry reads it after warm-up and after a measurement to say why requests ran without a graph. */
FERRY_BACKEND_EXPORT const char* ferry_backend_context_graph_failure(const ferry_backend_context* context);

/* ---- Smaller batches (API version 3) --------------------------------------------------------- */

/* Optional (version 3). Runs the context's later enqueues at another resolution of the model
 * (`dims` as resolve wrote them: the same tensors at, typically, a smaller batch), keeping its
 * bindings: ferry binds a tensor once at its largest size and runs a smaller batch in the first
 * rows of the same memory. *reshaped is 1 when the context will, 0 when it cannot (then ferry
 * makes a context per resolution instead). A context with graphs of its own keys them by shape,
 * so each batch size gets its graph on the context's one pool. Left out (a version 1 or 2
 * backend): ferry makes a context per resolution. */
FERRY_BACKEND_EXPORT ferry_backend_error* ferry_backend_context_reshape(ferry_backend_context* context,
                                                                        const int64_t* dims, size_t dims_count,
                                                                        int32_t* reshaped);

#ifdef __cplusplus
}
#endif

#endif /* FERRY_BACKEND_API_H */
