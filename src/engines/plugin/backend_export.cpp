#include "engines/plugin/backend_export.hpp"

#include <exception>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/engines/backend_api.h"

using ferry::plugin::backend_to_export;

struct ferry_backend_error {
  ferry_backend_error_kind kind;
  std::string message;
};

struct ferry_backend_model {
  std::unique_ptr<ferry::engine> engine;
};

struct ferry_backend_context {
  ferry::engine* engine = nullptr;  // the model's, which outlives its contexts (the ABI's rule)
  std::unique_ptr<ferry::engine_context> context;
  std::vector<std::string> names;
  std::optional<std::string> capture_refusal;
  // What ferry_backend_context_use_graphs and _graph_failure last handed out, kept for their
  // pointers' lifetime.
  std::optional<std::string> graphs_refusal;
  mutable std::optional<std::string> graph_failure;  // the ABI's const is the context's own state
};

namespace {

// The first line: framework messages often carry a backtrace after it.
std::string first_line(const char* text) {
  std::string line(text != nullptr ? text : "");
  return line.substr(0, line.find('\n'));
}

// Runs `body`, turning any exception into an error of its kind: no exception crosses the ABI.
template <class Body>
ferry_backend_error* guarded(Body&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const ferry::device_fault& e) {
    return new (std::nothrow) ferry_backend_error{FERRY_BACKEND_ERROR_DEVICE_FAULT, first_line(e.what())};
  } catch (const ferry::invalid_argument& e) {
    return new (std::nothrow) ferry_backend_error{FERRY_BACKEND_ERROR_INVALID_ARGUMENT, first_line(e.what())};
  } catch (const ferry::unsupported& e) {
    return new (std::nothrow) ferry_backend_error{FERRY_BACKEND_ERROR_UNSUPPORTED, first_line(e.what())};
  } catch (const ferry::out_of_memory& e) {
    return new (std::nothrow) ferry_backend_error{FERRY_BACKEND_ERROR_OUT_OF_MEMORY, first_line(e.what())};
  } catch (const std::bad_alloc&) {
    return new (std::nothrow) ferry_backend_error{FERRY_BACKEND_ERROR_OUT_OF_MEMORY, "out of host memory"};
  } catch (const std::exception& e) {
    return new (std::nothrow) ferry_backend_error{FERRY_BACKEND_ERROR_RUNTIME, first_line(e.what())};
  } catch (...) {
    return new (std::nothrow) ferry_backend_error{FERRY_BACKEND_ERROR_RUNTIME, "unknown error"};
  }
}

// The declared I/O with `dims` (every tensor's, one after the other) as its shapes.
std::vector<ferry::tensor_spec> concrete_io(const ferry::engine& engine, const int64_t* dims, size_t count) {
  std::vector<ferry::tensor_spec> io = engine.io();
  size_t k = 0;
  for (auto& t : io)
    for (auto& d : t.shape) {
      if (k >= count) throw ferry::invalid_argument("fewer dims than the model's tensors have");
      d = dims[k++];
    }
  if (k != count) throw ferry::invalid_argument("more dims than the model's tensors have");
  return io;
}

}  // namespace

extern "C" {

uint32_t ferry_backend_api_version(void) { return FERRY_BACKEND_API_VERSION; }
const char* ferry_backend_name(void) { return backend_to_export().name; }
const char* ferry_backend_version(void) { return backend_to_export().version; }

ferry_backend_error_kind ferry_backend_error_kind_of(const ferry_backend_error* error) { return error->kind; }
const char* ferry_backend_error_message(const ferry_backend_error* error) { return error->message.c_str(); }
void ferry_backend_error_release(ferry_backend_error* error) { delete error; }

ferry_backend_error* ferry_backend_model_load(const char* path, const ferry_backend_load_options* options,
                                              ferry_backend_model** model) {
  return guarded([&] {
    const ferry::model_engine_options o{
        .device = options->device, .max_concurrency = options->max_concurrency, .backend_directories = {}};
    auto loaded = std::make_unique<ferry_backend_model>();
    loaded->engine = backend_to_export().load(path, o);
    *model = loaded.release();
  });
}

void ferry_backend_model_unload(ferry_backend_model* model) { delete model; }

const char* ferry_backend_model_name(const ferry_backend_model* model) {
  // name() views a string the engine owns for its lifetime (every ferry engine's does).
  return model->engine->name().data();
}

size_t ferry_backend_model_tensor_count(const ferry_backend_model* model) { return model->engine->io().size(); }

void ferry_backend_model_tensor(const ferry_backend_model* model, size_t index, ferry_backend_tensor* tensor) {
  const ferry::tensor_spec& t = model->engine->io().at(index);
  *tensor = {.name = t.name.c_str(),
             .dtype = static_cast<int32_t>(t.type),
             .role = t.role == ferry::tensor_role::input ? FERRY_BACKEND_INPUT : FERRY_BACKEND_OUTPUT,
             .rank = static_cast<int32_t>(t.shape.size()),
             .dims = t.shape.data(),
             .index_bound = t.index_bound.value_or(0)};
}

ferry_backend_error* ferry_backend_model_resolve(const ferry_backend_model* model, const ferry_backend_shape* inputs,
                                                 size_t input_count, int64_t* dims, size_t dims_count) {
  return guarded([&] {
    std::vector<ferry::shape_binding> shapes;
    for (size_t i = 0; i < input_count; ++i)
      shapes.push_back({inputs[i].name, std::vector<int64_t>(inputs[i].dims, inputs[i].dims + inputs[i].rank)});
    size_t k = 0;
    for (const auto& t : model->engine->resolve(shapes))
      for (const auto d : t.shape) {
        if (k >= dims_count) throw ferry::invalid_argument("the dims array is shorter than the model's tensors");
        dims[k++] = d;
      }
  });
}

uint64_t ferry_backend_model_input_bytes_read(const ferry_backend_model* model, size_t tensor, const int64_t* dims) {
  try {
    ferry::tensor_spec t = model->engine->io().at(tensor);
    for (auto& d : t.shape) d = *dims++;
    return model->engine->input_bytes_read(t);
  } catch (...) {
    return UINT64_MAX;  // no error channel here: ferry caps it at the tensor's size, i.e. all of it
  }
}

ferry_backend_error* ferry_backend_context_create(ferry_backend_model* model, const int64_t* dims, size_t dims_count,
                                                  ferry_backend_context** context) {
  return guarded([&] {
    const auto io = concrete_io(*model->engine, dims, dims_count);
    auto made = std::make_unique<ferry_backend_context>();
    made->engine = model->engine.get();
    made->context = model->engine->make_context(io);
    for (const auto& t : io) made->names.push_back(t.name);
    made->capture_refusal = made->context->capture_refusal();
    *context = made.release();
  });
}

void ferry_backend_context_destroy(ferry_backend_context* context) { delete context; }

ferry_backend_error* ferry_backend_context_bind(ferry_backend_context* context, size_t index, void* device_address) {
  return guarded([&] { context->context->bind(context->names.at(index), device_address); });
}

ferry_backend_error* ferry_backend_context_enqueue(ferry_backend_context* context, struct CUstream_st* stream) {
  return guarded([&] { context->context->enqueue(ferry::stream_ref(stream)); });
}

ferry_backend_error* ferry_backend_context_signal_inputs_consumed(ferry_backend_context* context,
                                                                  struct CUevent_st* consumed, int32_t* will_record) {
  return guarded([&] { *will_record = context->context->signal_inputs_consumed(consumed) ? 1 : 0; });
}

const char* ferry_backend_context_capture_refusal(const ferry_backend_context* context) {
  return context->capture_refusal ? context->capture_refusal->c_str() : nullptr;
}

ferry_backend_error* ferry_backend_context_use_graphs(ferry_backend_context* context, int32_t max_graphs,
                                                      const char** refusal) {
  return guarded([&] {
    if (refusal == nullptr) throw ferry::invalid_argument("use_graphs: no place for the refusal (refusal is NULL)");
    context->graphs_refusal = context->context->use_own_graphs(max_graphs);
    *refusal = context->graphs_refusal ? context->graphs_refusal->c_str() : nullptr;
  });
}

const char* ferry_backend_context_graph_failure(const ferry_backend_context* context) {
  auto& kept = context->graph_failure;
  try {
    kept = context->context->own_graphs_failure();
  } catch (...) {
    kept = "the backend failed to say why its capture failed";
  }
  return kept ? kept->c_str() : nullptr;
}

ferry_backend_error* ferry_backend_context_reshape(ferry_backend_context* context, const int64_t* dims,
                                                   size_t dims_count, int32_t* reshaped) {
  return guarded([&] {
    if (reshaped == nullptr) throw ferry::invalid_argument("reshape: no place for the answer (reshaped is NULL)");
    const auto io = concrete_io(*context->engine, dims, dims_count);
    *reshaped = context->context->reshape(io) ? 1 : 0;
  });
}

}  // extern "C"
