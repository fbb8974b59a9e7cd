#include "engines/torch/aoti_engine.hpp"

#include <filesystem>
#include <optional>

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/version.h>

#include "engines/graph_cache.hpp"
#include "engines/torch/aoti_graphs.hpp"
#include "engines/torch/aoti_package.hpp"
#include "engines/torch/call_spec.hpp"
#include "engines/torch/compiled_io.hpp"
#include "ferry/core/error.hpp"

// No fmt here: libtorch ships its own fmt headers, which would shadow the system's in this file.
namespace ferry {
namespace {

at::ScalarType scalar_type(dtype t) {
  switch (t) {
    case dtype::f32:
      return at::kFloat;
    case dtype::f16:
      return at::kHalf;
    case dtype::bf16:
      return at::kBFloat16;
    case dtype::i8:
      return at::kChar;
    case dtype::u8:
      return at::kByte;
    case dtype::i32:
      return at::kInt;
    case dtype::i64:
      return at::kLong;
    case dtype::boolean:
      return at::kBool;
  }
  throw invalid_argument("unknown dtype");
}

dtype ferry_dtype(at::ScalarType t) {
  for (const dtype d :
       {dtype::f32, dtype::f16, dtype::bf16, dtype::i8, dtype::u8, dtype::i32, dtype::i64, dtype::boolean})
    if (scalar_type(d) == t) return d;
  throw invalid_argument(std::string("the package produces ") + c10::toString(t) + ", a dtype ferry does not handle");
}

// libtorch's messages carry a C++ backtrace after the first line; users need the first line.
std::string first_line(const char* what) {
  const std::string text(what);
  return text.substr(0, text.find('\n'));
}

class aoti_context final : public engine_context {
 public:
  aoti_context(torch::inductor::AOTIModelPackageLoader& loader, aoti::capture_runner& captures,
               std::vector<tensor_spec> io, int device, const std::string& name)
      : engine_context(name, tensor_names(io)),
        loader_(loader),
        captures_(captures),
        io_(std::move(io)),
        addresses_(io_.size(), nullptr),
        device_(device) {}

 private:
  // engine_context checked the name and the alignment; the index is io_'s.
  void do_bind(std::size_t index, void* device_address) override {
    addresses_[index] = device_address;
    inputs_.clear();  // rebuilt on the next enqueue
    key_.reset();
  }

  // A capture tried on a GPU failed inside the package's run, and a later run of the same loader
  // failed too: the refusal keeps a session from leaving the loader unusable. The context captures
  // its own graphs instead (do_use_own_graphs), through a runner made for it.
  [[nodiscard]] std::optional<std::string> do_capture_refusal() const override {
    return "an AOTInductor package allocates through libtorch's caching allocator while it runs, which a plain "
           "stream capture cannot record";
  }

  [[nodiscard]] std::optional<std::string> do_use_own_graphs(int max_graphs) override {
    if (max_graphs == 0) {
      graphs_.reset();
      return std::nullopt;
    }
    if (graphs_ && graphs_->max_graphs() == static_cast<std::size_t>(max_graphs)) return std::nullopt;
    graphs_.reset();  // a new bound starts afresh, on a fresh pool
    try {
      graphs_.emplace(captures_, static_cast<std::size_t>(max_graphs), device_);
    } catch (const unsupported& e) {
      return std::string(e.what());
    }
    return std::nullopt;
  }

  [[nodiscard]] std::optional<std::string> do_own_graphs_failure() const override {
    if (!graphs_) return std::nullopt;
    return graphs_->first_failure();
  }

  // A package takes any batch its export allowed: the inputs are wrapped again at the new shapes
  // on the next enqueue, and the graphs, keyed by shape, share the context's pool.
  [[nodiscard]] bool do_reshape(std::span<const tensor_spec> concrete_io) override {
    io_.assign(concrete_io.begin(), concrete_io.end());
    inputs_.clear();
    key_.reset();
    return true;
  }

  void do_enqueue(stream_ref stream) override {
    if (inputs_.empty()) wrap_inputs();
    // Allocations the package makes (outputs, workspaces) come from libtorch's caching allocator
    // on the current stream: making it the slot's stream keeps their reuse stream-ordered, and a
    // graph's capture and replay happen on it.
    c10::cuda::CUDAStreamGuard guard(
        c10::cuda::getStreamFromExternal(stream.get(), static_cast<c10::DeviceIndex>(device_)));
    const aoti::package_run run = [this, stream](torch::inductor::AOTIModelPackageLoader& loader) {
      run_package(loader, stream);
    };
    if (!graphs_) {
      run(loader_);
      return;
    }
    if (!key_) key_ = graph_key_of();
    graphs_->enqueue(*key_, loader_, run);
  }

  void run_package(torch::inductor::AOTIModelPackageLoader& loader, stream_ref stream) {
    std::vector<at::Tensor> outputs;
    try {
      outputs = loader.run(inputs_, stream.get());
    } catch (const std::exception& e) {
      throw error("AOTInductor run failed: " + first_line(e.what()));
    }
    std::size_t k = 0;
    for (std::size_t i = 0; i < io_.size(); ++i) {
      if (io_[i].role != tensor_role::output) continue;
      if (k >= outputs.size())
        throw error("the package returned " + std::to_string(outputs.size()) +
                    " outputs; its description lists more (missing '" + io_[i].name + "')");
      deliver(outputs[k++], io_[i], addresses_[i], stream);
    }
    if (k != outputs.size())
      throw error("the package returned " + std::to_string(outputs.size()) + " outputs; its description lists " +
                  std::to_string(k));
  }

  void wrap_inputs() {
    for (std::size_t i = 0; i < io_.size(); ++i) {
      if (addresses_[i] == nullptr) throw invalid_argument("tensor '" + io_[i].name + "' is not bound");
      if (io_[i].role != tensor_role::input) continue;
      // No copy: the tensor is a view of the strategy's device address (device memory, mapped
      // host memory or managed memory alike).
      inputs_.push_back(at::from_blob(addresses_[i], io_[i].shape,
                                      at::TensorOptions().dtype(scalar_type(io_[i].type)).device(at::kCUDA, device_)));
    }
  }

  // What a graph of this run fixes: the concrete shapes and every bound address.
  [[nodiscard]] graph_key graph_key_of() const {
    graph_key key;
    for (const auto& t : io_) key.dims.insert(key.dims.end(), t.shape.begin(), t.shape.end());
    key.addresses.assign(addresses_.begin(), addresses_.end());
    return key;
  }

  static void deliver(at::Tensor out, const tensor_spec& spec, void* destination, stream_ref stream) {
    if (out.scalar_type() != scalar_type(spec.type) || static_cast<std::size_t>(out.numel()) != spec.elements())
      throw error("output '" + spec.name + "': the package produced " + std::to_string(out.numel()) + " x " +
                  c10::toString(out.scalar_type()) + ", the description says " + std::to_string(spec.elements()) +
                  " x " + std::string(to_string(spec.type)));
    if (!out.is_contiguous()) out = out.contiguous();
    FERRY_CUDA_TRY(cudaMemcpyAsync(destination, out.data_ptr(), spec.bytes(), cudaMemcpyDefault, stream.get()));
  }

  torch::inductor::AOTIModelPackageLoader& loader_;
  aoti::capture_runner& captures_;
  std::vector<tensor_spec> io_;
  std::vector<void*> addresses_;
  std::vector<at::Tensor> inputs_;
  int device_;
  std::optional<graph_key> key_;                // of the current bindings, made on first use
  std::optional<aoti::context_graphs> graphs_;  // with graphs of its own (use_own_graphs)
};

class aoti_engine final : public engine {
 public:
  aoti_engine(std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader, io_description d,
              const std::string& path, int device)
      : loader_(std::move(loader)), description_(std::move(d)), captures_(path, device), device_(device) {}

  [[nodiscard]] std::string_view name() const override { return description_.name; }
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return description_.tensors; }
  [[nodiscard]] std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const override {
    return resolve_io(description_, inputs);
  }
  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& io) override {
    return std::make_unique<aoti_context>(*loader_, captures_, io, device_, description_.name);
  }

 private:
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
  io_description description_;
  aoti::capture_runner captures_;  // loaded when a context first asks for graphs of its own
  int device_;
};

// The C++ AOTInductor generated for the model, kept in the package beside the compiled library.
std::string wrapper_source(const std::string& path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    for (const auto& record : reader.getAllRecords()) {
      if (!record.starts_with("data/aotinductor/model/") || !record.ends_with(".wrapper.cpp")) continue;
      auto [data, size] = reader.getRecord(record);
      return std::string(static_cast<const char*>(data.get()), size);
    }
  } catch (const c10::Error& e) {
    throw invalid_argument("its archive cannot be read: " + first_line(e.what()));
  }
  throw invalid_argument("it holds no generated code (data/aotinductor/model/*.wrapper.cpp) to read its inputs from");
}

// A package with no written description: its inputs from the generated code, its outputs from two
// runs on zeros (compiled_io.hpp says how).
io_description describe_from_package(torch::inductor::AOTIModelPackageLoader& loader, const std::string& path,
                                     int device) {
  auto io = aoti::parse_compiled_io(wrapper_source(path), path);
  // The generated code names inputs by the graph's placeholders (arg73_1); the caller's keyword
  // names (input_ids) are in the call spec, and files and flags use those. A spec that cannot be
  // read leaves the generated names, which work as well.
  try {
    const auto spec = loader.get_call_spec();
    if (!spec.empty()) (void)aoti::apply_caller_names(io, aoti::caller_input_names(spec.front()));
  } catch (const std::exception&) {
  }
  std::vector<aoti::probe_run> runs;
  for (const auto& values : aoti::probe_values(io)) {
    std::vector<at::Tensor> inputs;
    const auto shapes = aoti::probe_shapes(io, values);
    for (std::size_t i = 0; i < shapes.size(); ++i)
      inputs.push_back(at::zeros(shapes[i].dims,
                                 at::TensorOptions().dtype(scalar_type(io.inputs[i].type)).device(at::kCUDA, device)));
    std::vector<at::Tensor> outputs;
    try {
      outputs = loader.run(inputs);
    } catch (const std::exception& e) {
      throw invalid_argument("a run on zeros failed: " + first_line(e.what()));
    }
    aoti::probe_run run{values, {}};
    for (const auto& out : outputs) run.outputs.push_back({ferry_dtype(out.scalar_type()), out.sizes().vec()});
    runs.push_back(std::move(run));
  }
  c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).synchronize();
  return aoti::describe_compiled(std::filesystem::path(path).stem().string(), io, runs);
}

// The architecture AOTInductor recorded in the package ("sm_90", "cpu"), or "" when it did not.
std::string compiled_architecture(const std::unordered_map<std::string, std::string>& metadata) {
  if (const auto key = metadata.find("AOTI_DEVICE_KEY"); key != metadata.end() && key->second == "cpu") return "cpu";
  const auto cc = metadata.find("AOTI_COMPUTE_CAPABILITY");
  return cc == metadata.end() || cc->second.empty() ? "" : "sm_" + cc->second;
}

}  // namespace

std::unique_ptr<engine> load_aoti_engine(const std::string& path, const model_engine_options& options) {
  aoti::check_package_file(path);
  c10::cuda::CUDAGuard on_device(static_cast<c10::DeviceIndex>(options.device));
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
  try {
    loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
        path, "model", /*run_single_threaded=*/false, static_cast<std::size_t>(std::max(1, options.max_concurrency)),
        static_cast<c10::DeviceIndex>(options.device));
  } catch (const std::exception& e) {
    throw invalid_argument("model file '" + path + "' is a zip archive but not a loadable AOTInductor package " +
                           "(corrupt, truncated, or made for another PyTorch): " + first_line(e.what()));
  }
  std::optional<std::string> metadata;
  const auto all = loader->get_metadata();
  if (const auto it = all.find(std::string(aoti::io_metadata_key)); it != all.end()) metadata = it->second;
  auto written = aoti::find_io_description(path, metadata);

  // Checked before anything of the package runs here, written description or not.
  io_description compiled_for;
  compiled_for.cuda_arch = written && !written->cuda_arch.empty() ? written->cuda_arch : compiled_architecture(all);
  if (written) compiled_for.exported_with_torch = written->exported_with_torch;
  int major = 0, minor = 0;
  FERRY_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, options.device));
  FERRY_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, options.device));
  if (auto why = aoti::incompatibility(compiled_for, major, minor, TORCH_VERSION))
    throw invalid_argument("model file '" + path + "' cannot run here: " + *why);

  if (!written) {
    try {
      written = describe_from_package(*loader, path, options.device);
    } catch (const invalid_argument& e) {
      throw invalid_argument(aoti::no_description_message(path, e.what()));
    }
  }
  return std::make_unique<aoti_engine>(std::move(loader), std::move(*written), path, options.device);
}

}  // namespace ferry
