// with_u8_normalize: images cross the bus as u8 HWC bytes and become the inner engine's normalised
// f32/f16 CHW input on the GPU (see u8_normalize_kernel.cu). The wrapper renames nothing: its
// first input keeps the inner first input's name, with dtype u8 and shape [batch, H, W, 3];
// every other tensor passes through. Each context owns the device buffer the kernel writes and
// the inner context reads.
#include <cmath>
#include <limits>
#include <utility>

#include "core/device_memory.hpp"
#include "engines/builtin/host_reference.hpp"
#include "engines/builtin/host_views.hpp"
#include "engines/builtin/kernels.hpp"
#include "engines/builtin/launch_support.hpp"
#include "engines/builtin/tensor_checks.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/builtin.hpp"

namespace ferry {
namespace {

using builtin::channel_affine;

// How batch items map onto the inner first input's shape.
enum class image_feed {
  static_images,  // fully static shape holding a whole number of images
  batch_major,    // [dyn, ...] whose static dims hold exactly one image (e.g. [dyn, 3, H, W])
  flat_dynamic,   // [dyn]: batch * 3 * H * W values
};

constexpr std::int64_t max_image_side = std::int64_t{1} << 20;

channel_affine make_affine(const normalize_options& options) {
  channel_affine affine{};
  for (int c = 0; c < 3; ++c) {
    affine.scale[c] = 1.0F / (255.0F * options.stddev[c]);
    affine.bias[c] = -options.mean[c] / options.stddev[c];
  }
  return affine;
}

std::size_t index_of_first_input(const std::vector<tensor_spec>& io) {
  for (std::size_t i = 0; i < io.size(); ++i)
    if (io[i].role == tensor_role::input) return i;
  return io.size();
}

std::size_t index_of(const std::vector<tensor_spec>& io, const std::string& name) {
  for (std::size_t i = 0; i < io.size(); ++i)
    if (io[i].name == name) return i;
  return io.size();
}

class u8_normalize_context final : public engine_context {
 public:
  u8_normalize_context(std::string engine_name, std::vector<std::string> tensor_names, std::size_t image_index,
                       std::unique_ptr<engine_context> inner, core::device_memory normalized, dtype normalized_type,
                       std::int64_t batch, const normalize_options& options, const channel_affine& affine)
      : engine_context(std::move(engine_name), std::move(tensor_names)),
        image_index_(image_index),
        normalized_(std::move(normalized)),
        inner_(std::move(inner)),
        normalized_type_(normalized_type),
        batch_(batch),
        height_(options.height),
        width_(options.width),
        affine_(affine),
        max_blocks_(builtin::grid_limit(ordinal())) {}

 private:
  // Every tensor but the image is the inner engine's own; the image is read at launch.
  void do_bind(std::size_t index, void* device_address) override {
    if (index != image_index_) inner_->bind(tensor_name(index), device_address);
  }

  void do_enqueue(stream_ref stream) override {
    const auto* images = static_cast<const std::uint8_t*>(device_addresses()[image_index_]);
    if (normalized_type_ == dtype::f32)
      builtin::launch_u8_hwc_to_chw(images, static_cast<float*>(normalized_.get()), batch_, height_, width_, affine_,
                                    max_blocks_, stream.get());
    else
      builtin::launch_u8_hwc_to_chw(images, static_cast<__half*>(normalized_.get()), batch_, height_, width_, affine_,
                                    max_blocks_, stream.get());
    inner_->enqueue(stream);
  }

  std::size_t image_index_;
  core::device_memory normalized_;
  std::unique_ptr<engine_context> inner_;  // after normalized_: destroyed before the buffer it reads
  dtype normalized_type_;
  std::int64_t batch_;
  std::int64_t height_;
  std::int64_t width_;
  channel_affine affine_;
  int max_blocks_;
};

// Everything the wrapper does, shared by its engine and host_reference_engine faces.
class u8_normalize_core {
 public:
  u8_normalize_core(std::unique_ptr<engine> inner, const normalize_options& options)
      : inner_(std::move(inner)), options_(options) {
    if (inner_ == nullptr) throw invalid_argument("with_u8_normalize: the inner engine is null");
    reference_ = dynamic_cast<const host_reference_engine*>(inner_.get());
    name_ = "u8-normalize+" + std::string(inner_->name());
    check_options();
    affine_ = make_affine(options_);
    image_elements_ = 3 * options_.height * options_.width;

    io_ = inner_->io();
    first_ = index_of_first_input(io_);
    if (first_ == io_.size()) throw invalid_argument(name_ + ": the inner engine has no input");
    const tensor_spec& target = io_[first_];
    image_name_ = target.name;
    normalized_type_ = target.type;
    if (target.type != dtype::f32 && target.type != dtype::f16)
      throw invalid_argument(name_ + ": inner input '" + target.name + "' is " + std::string(to_string(target.type)) +
                             "; u8-normalize can feed only FP32 or FP16");
    target_shape_ = target.shape;
    std::int64_t batch = dynamic_dim;
    classify_target(target, batch);
    io_[first_] =
        builtin::make_tensor(image_name_, dtype::u8, {batch, options_.height, options_.width, 3}, tensor_role::input);
  }

  [[nodiscard]] std::string_view name() const { return name_; }
  [[nodiscard]] const std::vector<tensor_spec>& io() const { return io_; }
  [[nodiscard]] std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const {
    return resolve_both(inputs).outer;
  }

  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) {
    const resolution both = resolve_both(builtin::input_shapes_of(concrete_io));
    builtin::require_same_io(name_, both.outer, concrete_io);
    const tensor_spec& target = both.inner[index_of(both.inner, image_name_)];
    auto inner_context = inner_->make_context(both.inner);
    core::device_memory normalized = core::allocate_device(target.bytes());
    inner_context->bind(image_name_, normalized.get());
    const std::size_t image_index = index_of(concrete_io, image_name_);
    return std::make_unique<u8_normalize_context>(name_, tensor_names(concrete_io), image_index,
                                                  std::move(inner_context), std::move(normalized), normalized_type_,
                                                  concrete_io[image_index].shape[0], options_, affine_);
  }

  void run_on_host(std::span<const std::span<const std::byte>> inputs,
                   std::span<const std::span<std::byte>> outputs) const {
    std::size_t input_count = 0;
    for (const auto& t : io_) input_count += t.role == tensor_role::input ? 1 : 0;
    builtin::require_span_counts(name_, inputs.size(), input_count, outputs.size(), io_.size() - input_count);
    // The first input is the images: inputs[0] in resolve() order.
    const auto image_bytes = static_cast<std::size_t>(image_elements_);
    const std::size_t batch = inputs[0].size() / image_bytes;
    if (batch == 0 || inputs[0].size() % image_bytes != 0)
      throw invalid_argument(name_ + ": run_on_host got " + std::to_string(inputs[0].size()) + " bytes for '" +
                             image_name_ + "', not a positive multiple of one " + std::to_string(options_.height) +
                             "x" + std::to_string(options_.width) + "x3 image");
    const auto images = builtin::typed_view<std::uint8_t>(name_, image_name_, inputs[0], batch * image_bytes);

    std::vector<std::span<const std::byte>> inner_inputs(inputs.begin(), inputs.end());
    std::vector<float> as_f32;
    std::vector<__half> as_f16;
    if (normalized_type_ == dtype::f32) {
      as_f32.resize(images.size());
      builtin::u8_hwc_to_chw_on_host(images, options_.height, options_.width, affine_, as_f32);
      inner_inputs[0] = std::as_bytes(std::span<const float>(as_f32));
    } else {
      as_f16.resize(images.size());
      builtin::u8_hwc_to_chw_on_host(images, options_.height, options_.width, affine_, as_f16);
      inner_inputs[0] = std::as_bytes(std::span<const __half>(as_f16));
    }
    reference_->run_on_host(inner_inputs, outputs);
  }

  [[nodiscard]] double flops_per_request(std::span<const tensor_spec> concrete_io) const {
    const std::vector<tensor_spec> outer(concrete_io.begin(), concrete_io.end());
    const resolution both = resolve_both(builtin::input_shapes_of(outer));
    const double conversion =
        2.0 * static_cast<double>(outer[index_of(outer, image_name_)].elements());  // one fma per value
    return conversion + reference_->flops_per_request(both.inner);
  }

 private:
  struct resolution {
    std::vector<tensor_spec> outer;
    std::vector<tensor_spec> inner;
  };

  void check_options() const {
    if (options_.height < 1 || options_.width < 1 || options_.height > max_image_side ||
        options_.width > max_image_side)
      throw invalid_argument(name_ + ": image height and width must be in [1, " + std::to_string(max_image_side) +
                             "], got " + std::to_string(options_.height) + "x" + std::to_string(options_.width));
    for (int c = 0; c < 3; ++c) {
      if (!std::isfinite(options_.mean[c]) || !std::isfinite(options_.stddev[c]) || !(options_.stddev[c] > 0.0F))
        throw invalid_argument(name_ + ": channel " + std::to_string(c) +
                               " needs a finite mean and a finite stddev > 0");
    }
  }

  // Decides how images map onto the inner first input; sets batch for a static one.
  void classify_target(const tensor_spec& target, std::int64_t& batch) {
    const std::string shape = builtin::format_shape(target.shape);
    const std::string image = "3x" + std::to_string(options_.height) + "x" + std::to_string(options_.width);
    if (!target.is_dynamic()) {
      const auto elements = static_cast<std::int64_t>(target.elements());
      if (elements % image_elements_ != 0)
        throw invalid_argument(name_ + ": inner input '" + target.name + "' " + shape +
                               " does not hold a whole number of " + image + " images; size it for batch * " +
                               std::to_string(image_elements_) + " values");
      feed_ = image_feed::static_images;
      batch = elements / image_elements_;
      return;
    }
    if (target.shape.size() == 1) {
      feed_ = image_feed::flat_dynamic;
      return;
    }
    std::int64_t per_item = 1;
    bool rest_static = true;
    for (std::size_t d = 1; d < target.shape.size(); ++d) {
      rest_static = rest_static && target.shape[d] != dynamic_dim;
      per_item *= target.shape[d];
    }
    if (target.shape[0] != dynamic_dim || !rest_static || per_item != image_elements_)
      throw invalid_argument(name_ + ": inner input '" + target.name + "' " + shape + " cannot take " + image +
                             " images; it needs [batch, 3, H, W], [batch, 3*H*W] or [n]");
    feed_ = image_feed::batch_major;
  }

  // The inner engine's binding for `batch` images.
  [[nodiscard]] std::vector<std::int64_t> target_dims(std::int64_t batch) const {
    switch (feed_) {
      case image_feed::static_images:
        return target_shape_;
      case image_feed::flat_dynamic:
        if (batch > std::numeric_limits<std::int64_t>::max() / image_elements_)
          throw invalid_argument(name_ + ": batch " + std::to_string(batch) + " is too large");
        return {batch * image_elements_};
      case image_feed::batch_major:
        break;
    }
    std::vector<std::int64_t> dims = target_shape_;
    dims[0] = batch;
    return dims;
  }

  [[nodiscard]] resolution resolve_both(std::span<const shape_binding> inputs) const {
    builtin::check_bindings(name_, io_, inputs);
    std::vector<shape_binding> inner_inputs;
    for (const auto& binding : inputs) {
      if (binding.name == image_name_)
        inner_inputs.push_back({image_name_, target_dims(binding.dims[0])});
      else
        inner_inputs.push_back(binding);
    }
    resolution both;
    both.inner = inner_->resolve(inner_inputs);
    const std::size_t target = index_of(both.inner, image_name_);
    if (target == both.inner.size())
      throw error(name_ + ": the inner engine's resolve() lost input '" + image_name_ + "'");
    const auto elements = static_cast<std::int64_t>(both.inner[target].elements());
    if (elements % image_elements_ != 0)
      throw invalid_argument(name_ + ": the inner engine's default '" + image_name_ + "' " +
                             builtin::format_shape(both.inner[target].shape) +
                             " is not a whole number of images; bind '" + image_name_ + "' explicitly");
    both.outer = both.inner;
    both.outer[target] = builtin::make_tensor(
        image_name_, dtype::u8, {elements / image_elements_, options_.height, options_.width, 3}, tensor_role::input);
    return both;
  }

  std::unique_ptr<engine> inner_;
  const host_reference_engine* reference_ = nullptr;  // inner_ when it has a CPU reference
  normalize_options options_;
  channel_affine affine_{};
  std::string name_;
  std::vector<tensor_spec> io_;
  std::size_t first_ = 0;
  std::string image_name_;
  dtype normalized_type_ = dtype::f32;
  std::vector<std::int64_t> target_shape_;
  std::int64_t image_elements_ = 0;
  image_feed feed_ = image_feed::batch_major;
};

// The engine seam forwarded to the core; Base is engine, or host_reference_engine when the
// inner engine can also run on the CPU.
template <class Base>
class u8_normalize_facade : public Base {
 public:
  explicit u8_normalize_facade(u8_normalize_core core) : core_(std::move(core)) {}
  [[nodiscard]] std::string_view name() const override { return core_.name(); }
  [[nodiscard]] const std::vector<tensor_spec>& io() const override { return core_.io(); }
  [[nodiscard]] std::vector<tensor_spec> resolve(std::span<const shape_binding> inputs) const override {
    return core_.resolve(inputs);
  }
  [[nodiscard]] std::unique_ptr<engine_context> make_context(const std::vector<tensor_spec>& concrete_io) override {
    return core_.make_context(concrete_io);
  }

 protected:
  u8_normalize_core core_;
};

class u8_normalize_engine final : public u8_normalize_facade<engine> {
 public:
  using u8_normalize_facade::u8_normalize_facade;
};

class u8_normalize_reference_engine final : public u8_normalize_facade<host_reference_engine> {
 public:
  using u8_normalize_facade::u8_normalize_facade;
  void run_on_host(std::span<const std::span<const std::byte>> inputs,
                   std::span<const std::span<std::byte>> outputs) const override {
    core_.run_on_host(inputs, outputs);
  }
  [[nodiscard]] double flops_per_request(std::span<const tensor_spec> concrete_io) const override {
    return core_.flops_per_request(concrete_io);
  }
};

}  // namespace

std::unique_ptr<engine> with_u8_normalize(std::unique_ptr<engine> inner, const normalize_options& options) {
  if (dynamic_cast<host_reference_engine*>(inner.get()) != nullptr) {
    std::unique_ptr<host_reference_engine> reference(static_cast<host_reference_engine*>(inner.release()));
    return with_u8_normalize(std::move(reference), options);
  }
  return std::make_unique<u8_normalize_engine>(u8_normalize_core(std::move(inner), options));
}

std::unique_ptr<host_reference_engine> with_u8_normalize(std::unique_ptr<host_reference_engine> inner,
                                                         const normalize_options& options) {
  return std::make_unique<u8_normalize_reference_engine>(u8_normalize_core(std::move(inner), options));
}

}  // namespace ferry
