#include "ferry/bench/workload_factory.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "ferry/core/error.hpp"
#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"

namespace ferry::bench {

shape_binding parse_shape(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size())
    throw invalid_argument("bad shape '" + std::string(text) + "': expected NAME:D1xD2x..., e.g. input:16x3x224x224");
  shape_binding b{std::string(text.substr(0, colon)), {}};
  std::string_view dims = text.substr(colon + 1);
  while (!dims.empty()) {
    const auto x = dims.find('x');
    const auto item = dims.substr(0, x);
    std::int64_t d = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (ec != std::errc() || end != item.data() + item.size() || d <= 0)
      throw invalid_argument("bad dimension '" + std::string(item) + "' in shape '" + std::string(text) + "'");
    b.dims.push_back(d);
    if (x == std::string_view::npos) break;
    dims.remove_prefix(x + 1);
  }
  return b;
}

namespace {

// Lends a loaded model to each cell without loading it again: a model loads in seconds (weights,
// kernels), a cell runs in a fraction of one.
class shared_engine final : public engine {
 public:
  explicit shared_engine(std::shared_ptr<engine> inner) : inner_(std::move(inner)) {}
  [[nodiscard]] std::string_view name() const override { return inner_->name(); }
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return inner_->io(); }
  [[nodiscard]] std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const override {
    return inner_->resolve(inputs);
  }
  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& io) override {
    return inner_->make_context(io);
  }
  [[nodiscard]] std::size_t input_bytes_read(const tensor_spec& input) const override {
    return inner_->input_bytes_read(input);
  }

 private:
  std::shared_ptr<engine> inner_;
};

// A model file's first input's leading dynamic dim is the batch: --batch binds it unless --shape
// names that input already.
std::vector<shape_binding> model_shapes(const engine& eng, const workload_request& request) {
  std::vector<shape_binding> shapes = request.shapes;
  for (const auto& spec : eng.io()) {
    if (spec.role != tensor_role::input || !spec.is_dynamic()) continue;
    const bool named =
        std::any_of(shapes.begin(), shapes.end(), [&](const shape_binding& b) { return b.name == spec.name; });
    if (named) continue;
    std::vector<std::int64_t> dims = spec.shape;
    if (!dims.empty() && dims.front() == dynamic_dim) dims.front() = request.batch;
    if (std::any_of(dims.begin(), dims.end(), [](std::int64_t d) { return d == dynamic_dim; }))
      throw invalid_argument("input '" + spec.name + "' of '" + request.engine +
                             "' has dynamic dims besides the batch; give them with --shape " + spec.name + ":...");
    shapes.push_back({spec.name, std::move(dims)});
  }
  return shapes;
}

workload model_workload(const workload_request& request) {
  if (!request.preprocess.empty())
    throw invalid_argument("--preprocess applies to built-in workloads only, not to '" + request.engine + "'");
  if (request.devices.empty()) throw invalid_argument("no GPU to load '" + request.engine + "' onto");
  // A model's contexts live on the GPU it was loaded on: one load per GPU of the run, all up front
  // so a bad file fails before any cell runs.
  std::map<int, std::shared_ptr<engine>> loaded;
  for (const int device : request.devices)
    loaded.emplace(device, load_model_engine(request.engine, {.device = device,
                                                              .max_concurrency = request.max_concurrency,
                                                              .backend_directories = request.backend_directories,
                                                              .index_bounds = request.index_bounds}));
  const engine& first = *loaded.begin()->second;
  workload w;
  w.label = std::string(first.name());
  w.shapes = model_shapes(first, request);
  (void)first.resolve(w.shapes);  // a bad --shape fails now, naming the tensor
  w.make_engine = [loaded, label = request.engine](int device) -> std::unique_ptr<engine> {
    const auto found = loaded.find(device);
    if (found == loaded.end())
      throw invalid_argument("'" + label + "' was not loaded onto GPU " + std::to_string(device));
    return std::make_unique<shared_engine>(found->second);
  };
  return w;
}

}  // namespace

workload make_workload(const workload_request& request) {
  const std::string& spec = request.engine;
  if (!request.preprocess.empty() && request.preprocess != "u8-normalize")
    throw invalid_argument("unknown preprocess stage '" + request.preprocess + "'; the only one is u8-normalize");
  if (is_model_engine_spec(spec)) return model_workload(request);
  // Built-in workloads declare their own bounds; --index-bound names model files' inputs
  // (validate() refuses it where no model file is run).

  builtin_options options{.input_bytes = request.input_bytes, .batch = request.batch};
  const bool images = request.preprocess == "u8-normalize";
  normalize_options normalize{.height = request.image_height, .width = request.image_width};
  if (images && spec.rfind("mlp", 0) != 0) {
    // The inner engine takes the float tensor the images turn into.
    options.input_bytes =
        static_cast<std::size_t>(request.batch * 3 * request.image_height * request.image_width) * sizeof(float);
  }
  // Made once, here (a bad spec fails now, with the message, rather than inside the first
  // measured cell), and lent to every cell as a loaded model is: mlp:32x4096's weights are 1 GB of
  // fp16 generated on the CPU, seconds each time, and `--inflight auto` makes a dozen sessions
  // per strategy. Built-in engines keep their device state per context or per GPU (mlp's weights
  // are uploaded once per GPU, under a lock), so cells and GPUs may share one.
  const std::shared_ptr<engine> built = make_builtin_engine(spec, options);

  workload w;
  w.label = images ? "u8-normalize+" + spec : spec;
  w.shapes = request.shapes;
  w.make_engine = [built, images, normalize](int /*device*/) -> std::unique_ptr<engine> {
    auto lent = std::make_unique<shared_engine>(built);
    if (!images) return lent;
    return with_u8_normalize(std::move(lent), normalize);
  };
  return w;
}

}  // namespace ferry::bench
