#include "engines/plugin/plugin_engine.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engines/plugin/backend_library.hpp"
#include "ferry/core/device_fault.hpp"
#include "ferry/core/error.hpp"

namespace ferry::plugin {
namespace {

// The model handle, unloaded through its backend once the engine and every context are gone.
struct loaded_model {
  std::shared_ptr<const backend_library> library;
  ferry_backend_model* handle = nullptr;

  loaded_model(std::shared_ptr<const backend_library> lib, ferry_backend_model* model)
      : library(std::move(lib)), handle(model) {}
  loaded_model(const loaded_model&) = delete;
  loaded_model& operator=(const loaded_model&) = delete;
  // After a device fault the backend is not asked to release anything: its GPU memory went with
  // the context, and a framework's cleanup in a lost context fails or aborts.
  ~loaded_model() {
    if (device_faulted()) return;
    library->functions().model_unload(handle);
  }

  [[nodiscard]] const backend_functions& call() const noexcept { return library->functions(); }
  void check(ferry_backend_error* error, const std::string& what) const { library->check(error, what); }
};

dtype dtype_of(int32_t code, const std::string& backend, const std::string& tensor) {
  if (code < FERRY_BACKEND_F32 || code > FERRY_BACKEND_BOOL)
    throw unsupported(
        fmt::format("backend '{}' declares tensor '{}' with dtype code {}, which backend API version "
                    "{} does not define",
                    backend, tensor, code, FERRY_BACKEND_API_VERSION));
  // The ABI's codes follow ferry::dtype's order (static_asserts below).
  return static_cast<dtype>(code);
}
static_assert(static_cast<int>(dtype::f32) == FERRY_BACKEND_F32 && static_cast<int>(dtype::f16) == FERRY_BACKEND_F16 &&
              static_cast<int>(dtype::bf16) == FERRY_BACKEND_BF16 && static_cast<int>(dtype::i8) == FERRY_BACKEND_I8 &&
              static_cast<int>(dtype::u8) == FERRY_BACKEND_U8 && static_cast<int>(dtype::i32) == FERRY_BACKEND_I32 &&
              static_cast<int>(dtype::i64) == FERRY_BACKEND_I64 &&
              static_cast<int>(dtype::boolean) == FERRY_BACKEND_BOOL);

// The model's declared tensors as ferry's tensor_specs, checked: inputs first, names unique and
// non-empty, dims positive or dynamic.
std::vector<tensor_spec> declared_io(const loaded_model& model) {
  const std::string& backend = model.library->name();
  const std::size_t count = model.call().model_tensor_count(model.handle);
  std::vector<tensor_spec> io;
  std::set<std::string> names;
  bool output_seen = false;
  for (std::size_t i = 0; i < count; ++i) {
    ferry_backend_tensor t{};
    model.call().model_tensor(model.handle, i, &t);
    const std::string name = t.name != nullptr ? t.name : "";
    if (name.empty() || !names.insert(name).second)
      throw unsupported(fmt::format("backend '{}' declares tensor {} with {} name '{}'", backend, i,
                                    name.empty() ? "an empty" : "a repeated", name));
    if (t.role != FERRY_BACKEND_INPUT && t.role != FERRY_BACKEND_OUTPUT)
      throw unsupported(fmt::format("backend '{}' declares tensor '{}' with role code {}", backend, name, t.role));
    const bool input = t.role == FERRY_BACKEND_INPUT;
    if (input && output_seen)
      throw unsupported(
          fmt::format("backend '{}' declares input '{}' after an output; inputs come first", backend, name));
    output_seen = output_seen || !input;
    if (t.rank < 0 || (t.rank > 0 && t.dims == nullptr))
      throw unsupported(
          fmt::format("backend '{}' declares tensor '{}' with rank {} and no dims", backend, name, t.rank));
    tensor_spec spec{.name = name,
                     .type = dtype_of(t.dtype, backend, name),
                     .shape = {},
                     .role = input ? tensor_role::input : tensor_role::output,
                     .index_bound = std::nullopt};
    for (int32_t d = 0; d < t.rank; ++d) {
      if (t.dims[d] < 1 && t.dims[d] != FERRY_BACKEND_DYNAMIC_DIM)
        throw unsupported(
            fmt::format("backend '{}' declares tensor '{}' with dim {} = {}", backend, name, d, t.dims[d]));
      spec.shape.push_back(t.dims[d]);
    }
    if (t.index_bound > 0) spec.index_bound = t.index_bound;
    io.push_back(std::move(spec));
  }
  return io;
}

std::size_t dims_total(const std::vector<tensor_spec>& io) {
  return std::accumulate(io.begin(), io.end(), std::size_t{0},
                         [](std::size_t n, const tensor_spec& t) { return n + t.shape.size(); });
}

// Every tensor's dims, one after the other, as the C ABI passes a resolution.
std::vector<int64_t> flat_dims(const std::vector<tensor_spec>& io) {
  std::vector<int64_t> dims;
  for (const auto& t : io) dims.insert(dims.end(), t.shape.begin(), t.shape.end());
  return dims;
}

std::size_t index_of(const std::vector<tensor_spec>& io, std::string_view name, std::string_view model) {
  for (std::size_t i = 0; i < io.size(); ++i)
    if (io[i].name == name) return i;
  std::string names;
  for (const auto& t : io) names += (names.empty() ? "" : ", ") + t.name;
  throw invalid_argument(fmt::format("model '{}' has no tensor '{}'; its tensors are: {}", model, name, names));
}

class plugin_context final : public engine_context {
 public:
  plugin_context(std::shared_ptr<const loaded_model> model, ferry_backend_context* handle,
                 const std::vector<tensor_spec>& io, const std::string& model_name)
      : engine_context(model_name, tensor_names(io)), model_(std::move(model)), handle_(handle) {}
  plugin_context(const plugin_context&) = delete;
  plugin_context& operator=(const plugin_context&) = delete;
  ~plugin_context() override {
    if (!device_faulted()) model_->call().context_destroy(handle_);
  }

 private:
  // The backend's index is the concrete I/O's, the order engine_context was given.
  void do_bind(std::size_t index, void* device_address) override {
    model_->check(model_->call().context_bind(handle_, index, device_address),
                  fmt::format("binding '{}'", tensor_name(index)));
  }

  void do_enqueue(stream_ref stream) override {
    try {
      model_->check(model_->call().context_enqueue(handle_, stream.get()), "enqueue");
    } catch (const device_fault&) {
      throw;
    } catch (const error& e) {
      throw_if_context_lost(stream, e.what());
      throw;
    }
  }

  // A backend of API version 1, or a framework's exception text, reports a lost context as an
  // ordinary failure: the stream says whether the context is gone, so the fault is noted here
  // rather than at ferry's next call.
  static void throw_if_context_lost(stream_ref stream, const std::string& message) {
    const cudaError_t state = cudaStreamQuery(stream.get());
    if (!is_sticky(state)) return;
    raise_device_fault(state, fmt::format("{} (the GPU's context is lost: {})", message, cudaGetErrorName(state)));
  }

  [[nodiscard]] bool do_signal_inputs_consumed(cudaEvent_t consumed) override {
    const auto signal = model_->call().context_signal_inputs_consumed;
    if (signal == nullptr) return false;
    int32_t will_record = 0;
    model_->check(signal(handle_, consumed, &will_record), "asking for the inputs-consumed event");
    return will_record != 0;
  }

  [[nodiscard]] std::optional<std::string> do_capture_refusal() const override {
    const auto refusal = model_->call().context_capture_refusal;
    if (refusal == nullptr) return std::nullopt;
    const char* why = refusal(handle_);
    if (why == nullptr) return std::nullopt;
    return std::string(why);
  }

  [[nodiscard]] std::optional<std::string> do_use_own_graphs(int max_graphs) override {
    const auto use_graphs = model_->call().context_use_graphs;
    if (use_graphs == nullptr) {
      if (max_graphs == 0) return std::nullopt;  // nothing to turn off
      return fmt::format("backend '{}' (backend API version {}) does not capture CUDA graphs of its own",
                         model_->library->name(), model_->library->api_version());
    }
    const char* refusal = nullptr;
    model_->check(use_graphs(handle_, static_cast<int32_t>(max_graphs), &refusal), "asking for graphs of its own");
    if (refusal == nullptr) return std::nullopt;
    return std::string(refusal);
  }

  [[nodiscard]] bool do_reshape(std::span<const tensor_spec> concrete_io) override {
    const auto reshape = model_->call().context_reshape;
    if (reshape == nullptr) return false;
    const auto dims = flat_dims({concrete_io.begin(), concrete_io.end()});
    int32_t reshaped = 0;
    model_->check(reshape(handle_, dims.data(), dims.size(), &reshaped), "running a context at another batch size");
    return reshaped != 0;
  }

  [[nodiscard]] std::optional<std::string> do_own_graphs_failure() const override {
    const auto failure = model_->call().context_graph_failure;
    if (failure == nullptr) return std::nullopt;
    const char* why = failure(handle_);
    if (why == nullptr) return std::nullopt;
    return std::string(why);
  }

  std::shared_ptr<const loaded_model> model_;
  ferry_backend_context* handle_;
};

// The user's bounds for integer inputs the model file does not bound (model_engine_options).
void apply_index_bounds(std::vector<tensor_spec>& io, std::span<const index_bound_override> bounds,
                        const std::string& model) {
  for (const auto& b : bounds) {
    const auto it = std::find_if(
        io.begin(), io.end(), [&](const tensor_spec& t) { return t.name == b.input && t.role == tensor_role::input; });
    if (it == io.end()) {
      std::string inputs;
      for (const auto& t : io)
        if (t.role == tensor_role::input) inputs += (inputs.empty() ? "" : ", ") + t.name;
      throw invalid_argument(
          fmt::format("model '{}' has no input '{}' to bound; its inputs are: {}", model, b.input, inputs));
    }
    if (it->type != dtype::i32 && it->type != dtype::i64)
      throw invalid_argument(fmt::format("model '{}': input '{}' is {}; an index bound is for INT32 and INT64 inputs",
                                         model, b.input, to_string(it->type)));
    it->index_bound = b.bound;
  }
}

class loaded_plugin_engine final : public plugin_engine {
 public:
  loaded_plugin_engine(std::shared_ptr<const loaded_model> model, std::span<const index_bound_override> bounds)
      : model_(std::move(model)), io_(declared_io(*model_)) {
    const char* name = model_->call().model_name(model_->handle);
    name_ = name != nullptr && *name != '\0' ? name : model_->library->name();
    apply_index_bounds(io_, bounds, name_);
  }

  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return io_; }
  [[nodiscard]] bool computes_on_host() const noexcept override { return model_->library->computes_on_host(); }
  [[nodiscard]] const backend_library& library() const noexcept override { return *model_->library; }

  [[nodiscard]] std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const override {
    std::vector<ferry_backend_shape> shapes;
    shapes.reserve(inputs.size());
    for (const auto& b : inputs)
      shapes.push_back({.name = b.name.c_str(), .rank = static_cast<int32_t>(b.dims.size()), .dims = b.dims.data()});
    std::vector<int64_t> dims(dims_total(io_));
    model_->check(model_->call().model_resolve(model_->handle, shapes.data(), shapes.size(), dims.data(), dims.size()),
                  fmt::format("resolving the shapes of model '{}'", name_));
    std::vector<tensor_spec> concrete = io_;
    std::size_t k = 0;
    for (auto& t : concrete)
      for (auto& d : t.shape) {
        if (dims[k] < 0)
          throw error(fmt::format("backend '{}' resolved tensor '{}' with a dim of {}", model_->library->name(), t.name,
                                  dims[k]));
        d = dims[k++];
      }
    return concrete;
  }

  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) override {
    check_matches_declaration(concrete_io);
    const auto dims = flat_dims(concrete_io);
    ferry_backend_context* handle = nullptr;
    model_->check(model_->call().context_create(model_->handle, dims.data(), dims.size(), &handle),
                  fmt::format("making a context of model '{}'", name_));
    return std::make_unique<plugin_context>(model_, handle, concrete_io, name_);
  }

  [[nodiscard]] std::size_t input_bytes_read(const tensor_spec& input) const override {
    const auto bytes_read = model_->call().model_input_bytes_read;
    if (bytes_read == nullptr) return input.bytes();
    const std::size_t index = index_of(io_, input.name, name_);
    const std::size_t read = bytes_read(model_->handle, index, input.shape.data());
    return std::min(read, input.bytes());  // never more than the tensor holds
  }

  void run_on_host(std::span<const std::span<const std::byte>> inputs,
                   std::span<const std::span<std::byte>> outputs) const override {
    const auto run_host = model_->call().model_run_host;
    if (run_host == nullptr)
      throw unsupported(fmt::format("backend '{}' cannot compute on the CPU (it has no ferry_backend_model_run_host)",
                                    model_->library->name()));
    const auto concrete = resolve(shapes_from_sizes(inputs));
    std::vector<const void*> in;
    std::vector<std::size_t> in_bytes, out_bytes;
    std::vector<void*> out;
    std::size_t i = 0, o = 0;
    for (const auto& t : concrete) {
      const bool input = t.role == tensor_role::input;
      const std::size_t given =
          input ? (i < inputs.size() ? inputs[i].size() : 0) : (o < outputs.size() ? outputs[o].size() : 0);
      if ((input ? i >= inputs.size() : o >= outputs.size()) || given != t.bytes())
        throw invalid_argument(fmt::format("model '{}': {} '{}' needs {} bytes, got {}", name_,
                                           input ? "input" : "output", t.name, t.bytes(), given));
      if (input) {
        in.push_back(inputs[i].data());
        in_bytes.push_back(inputs[i++].size());
      } else {
        out.push_back(outputs[o].data());
        out_bytes.push_back(outputs[o++].size());
      }
    }
    if (i != inputs.size() || o != outputs.size())
      throw invalid_argument(fmt::format("model '{}' takes {} inputs and {} outputs, got {} and {}", name_, i, o,
                                         inputs.size(), outputs.size()));
    const auto dims = flat_dims(concrete);
    model_->check(
        run_host(model_->handle, dims.data(), dims.size(), in.data(), in_bytes.data(), out.data(), out_bytes.data()),
        fmt::format("computing model '{}' on the CPU", name_));
  }

 private:
  // A concrete I/O must keep the declared tensors in their order, rank and static dims.
  void check_matches_declaration(const std::vector<tensor_spec>& concrete) const {
    bool same = concrete.size() == io_.size();
    for (std::size_t t = 0; same && t < io_.size(); ++t) {
      same = concrete[t].name == io_[t].name && concrete[t].shape.size() == io_[t].shape.size() &&
             !concrete[t].is_dynamic();
      for (std::size_t d = 0; same && d < io_[t].shape.size(); ++d)
        same = io_[t].shape[d] == dynamic_dim || io_[t].shape[d] == concrete[t].shape[d];
    }
    if (!same)
      throw invalid_argument(fmt::format("model '{}': a context needs the concrete I/O that resolve() gives", name_));
  }

  // The inputs' shapes as host spans give them: one dynamic dim per input at most, read off the
  // size (as the built-in engines read a batch off their first input).
  [[nodiscard]] std::vector<shape_binding> shapes_from_sizes(std::span<const std::span<const std::byte>> inputs) const {
    std::vector<shape_binding> shapes;
    std::size_t i = 0;
    for (const auto& t : io_) {
      if (t.role != tensor_role::input || i >= inputs.size()) continue;
      const std::size_t bytes = inputs[i++].size();
      shape_binding b{t.name, t.shape};
      const auto dynamic = std::count(b.dims.begin(), b.dims.end(), dynamic_dim);
      if (dynamic > 1)
        throw invalid_argument(
            fmt::format("model '{}': input '{}' has {} dynamic dims, so its shape cannot be told from "
                        "its size",
                        name_, t.name, dynamic));
      if (dynamic == 1) {
        std::size_t fixed = size_of(t.type);
        for (const auto d : b.dims)
          if (d != dynamic_dim) fixed *= static_cast<std::size_t>(d);
        if (fixed == 0 || bytes % fixed != 0 || bytes == 0)
          throw invalid_argument(fmt::format("model '{}': input '{}' of {} bytes is no whole number of {}-byte rows",
                                             name_, t.name, bytes, fixed));
        *std::find(b.dims.begin(), b.dims.end(), dynamic_dim) = static_cast<std::int64_t>(bytes / fixed);
      }
      shapes.push_back(std::move(b));
    }
    return shapes;
  }

  std::shared_ptr<const loaded_model> model_;
  std::vector<tensor_spec> io_;
  std::string name_;
};

}  // namespace

std::unique_ptr<plugin_engine> load_plugin_engine(std::shared_ptr<const backend_library> library,
                                                  const std::filesystem::path& model_file,
                                                  const model_engine_options& options) {
  const ferry_backend_load_options load{.device = options.device,
                                        .max_concurrency = std::max(1, options.max_concurrency)};
  ferry_backend_model* handle = nullptr;
  library->check(library->functions().model_load(model_file.c_str(), &load, &handle),
                 fmt::format("loading '{}'", model_file.string()));
  if (handle == nullptr)
    throw error(fmt::format("backend '{}' loaded '{}' but returned no model", library->name(), model_file.string()));
  auto model = std::make_shared<const loaded_model>(std::move(library), handle);
  return std::make_unique<loaded_plugin_engine>(std::move(model), options.index_bounds);
}

}  // namespace ferry::plugin
