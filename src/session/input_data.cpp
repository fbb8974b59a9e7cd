#include "ferry/session/input_data.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "ferry/core/error.hpp"
#include "ferry/session/index_check.hpp"
#include "session/input_file.hpp"

namespace ferry {
namespace {

bool is_wide_integer(dtype t) noexcept { return t == dtype::i32 || t == dtype::i64; }
bool is_float(dtype t) noexcept { return t == dtype::f32 || t == dtype::f16 || t == dtype::bf16; }

// The position-keyed hashes behind every random fill: element `i` of request `request`'s values
// from (i, salt) alone, so any piece of an input is written without the pieces before it, and the
// loops vectorise (several GB/s: filling 64 MB does not dominate a benchmark's wall time).
constexpr std::uint32_t hash32(std::uint64_t i, std::uint32_t salt) noexcept {
  return (static_cast<std::uint32_t>(i) ^ salt) * 2654435761U;
}
constexpr std::uint64_t hash64(std::uint64_t x) noexcept {  // splitmix64's finaliser
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
std::uint64_t salt_of(std::uint64_t request) noexcept { return hash64(request * 0x9E3779B97F4A7C15ULL + 1); }

// Floats in [-0.5, 0.5).
void random_f32(std::span<std::byte> piece, std::size_t first_byte, std::uint32_t salt) {
  const std::size_t first = first_byte / 4, n = piece.size() / 4;
  auto* out = reinterpret_cast<float*>(piece.data());  // pieces start on 8-byte boundaries
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(hash32(first + i, salt) >> 8) * (1.0F / 16777216.0F) - 0.5F;
}

// Halves of magnitude in [0.5, 1), random sign and mantissa, exponent fixed (never Inf, NaN or
// denormal), two per 32-bit word so the loop runs as fast as the f32 one.
void random_halves(std::span<std::byte> piece, std::size_t first_byte, std::uint32_t salt, bool bf16) {
  const std::uint32_t keep16 = bf16 ? 0x807FU : 0x83FFU;
  const std::uint32_t exponent16 = bf16 ? 0x3F00U : 0x3800U;
  const std::uint32_t keep = keep16 | (keep16 << 16), exponent = exponent16 | (exponent16 << 16);
  const std::size_t first = first_byte / 4, n = piece.size() / 4;
  auto* out = reinterpret_cast<std::uint32_t*>(piece.data());
  for (std::size_t i = 0; i < n; ++i) out[i] = (hash32(first + i, salt) & keep) | exponent;
  if (n * 4 + 2 <= piece.size()) {  // an odd count of halves: the last one on its own
    const auto last = static_cast<std::uint16_t>(exponent16 | (hash32(first + n, salt) & keep16));
    std::memcpy(piece.data() + n * 4, &last, sizeof last);
  }
}

void random_bytes(std::span<std::byte> piece, std::size_t first_byte, std::uint32_t salt) {
  const std::size_t first = first_byte / 4, n = piece.size() / 4;
  auto* out = reinterpret_cast<std::uint32_t*>(piece.data());
  for (std::size_t i = 0; i < n; ++i) out[i] = hash32(first + i, salt) ^ salt;
  for (std::size_t i = n * 4; i < piece.size(); ++i)  // keyed by the byte's place in the whole input
    piece[i] = static_cast<std::byte>(hash32(first_byte + i, salt) >> 24);
}

template <class T>
void random_indices(std::span<std::byte> piece, std::size_t first_byte, std::uint64_t salt, std::uint64_t bound) {
  const std::size_t first = first_byte / sizeof(T), n = piece.size() / sizeof(T);
  auto* out = reinterpret_cast<T*>(piece.data());
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(hash64((first + i) ^ salt) % bound);
}

void random_booleans(std::span<std::byte> piece, std::size_t first_byte, std::uint32_t salt) {
  for (std::size_t i = 0; i < piece.size(); ++i)
    piece[i] = std::byte{static_cast<std::uint8_t>((hash32(first_byte + i, salt) >> 17) & 1U)};
}

std::string bound_text(const tensor_spec& spec) { return fmt::format("[0, {})", *spec.index_bound); }

}  // namespace

input_data input_data::zeros() {
  input_data d;
  d.source_ = input_source::zero;
  return d;
}

input_data input_data::random() {
  input_data d;
  d.source_ = input_source::random;
  return d;
}

input_data input_data::from_file(const std::filesystem::path& path) {
  input_data d;
  d.source_ = input_source::file;
  d.file_ = path.string();
  d.given_ = std::make_shared<const std::vector<detail::given_input>>(detail::read_input_file(path));
  return d;
}

input_data input_data::parse(std::string_view spec, const std::filesystem::path& base) {
  if (spec == "auto") return {};
  if (spec == "zero" || spec == "zeros") return zeros();
  if (spec == "random") return random();
  if (spec.empty()) throw invalid_argument("input data: give auto, zero, random or a .json/.npz file");
  std::filesystem::path path(spec);
  if (path.is_relative() && !base.empty()) path = base / path;
  return from_file(path);
}

std::string input_data::name() const {
  switch (source_) {
    case input_source::automatic:
      return "auto";
    case input_source::zero:
      return "zero";
    case input_source::random:
      return "random";
    case input_source::file:
      break;
  }
  return file_;
}

input_fill input_data::fill_for(const tensor_spec& spec) const {
  switch (source_) {
    case input_source::zero:
      return input_fill::zeros;
    case input_source::file:
      (void)given_for(spec);
      return input_fill::given;
    case input_source::automatic:
    case input_source::random:
      break;
  }
  if (is_float(spec.type)) return input_fill::random_floats;
  if (spec.type == dtype::boolean)
    return source_ == input_source::random ? input_fill::random_booleans : input_fill::zeros;
  if (!is_wide_integer(spec.type)) return input_fill::random_bytes;
  if (spec.index_bound) return input_fill::random_indices;
  if (source_ == input_source::automatic) return input_fill::zeros;
  throw invalid_argument(fmt::format(
      "input '{}' is {} with no index_bound, so random values could be ids the model cannot take (an embedding "
      "asserts on them, and the GPU is lost): give its bound in the model's description (\"index_bound\": N, see "
      "docs/USAGE.md), or use --input-data zero or a file of real values",
      spec.name, to_string(spec.type)));
}

const detail::given_input& input_data::given_for(const tensor_spec& spec) const {
  const auto& given = *given_;
  const auto it = std::find_if(given.begin(), given.end(), [&](const auto& g) { return g.name == spec.name; });
  if (it == given.end()) {
    std::string names;
    for (const auto& g : given) names += (names.empty() ? "'" : ", '") + g.name + "'";
    throw invalid_argument(
        fmt::format("input data '{}' has no values for input '{}' (it gives {})", file_, spec.name, names));
  }
  return *it;
}

input_data input_data::bound_to(std::span<const tensor_spec> concrete_io) const {
  input_data bound = *this;
  std::vector<const tensor_spec*> inputs;
  for (const auto& spec : concrete_io)
    if (spec.role == tensor_role::input) inputs.push_back(&spec);
  for (const tensor_spec* spec : inputs) (void)fill_for(*spec);
  if (source_ != input_source::file) return bound;
  for (const auto& g : *given_)
    if (std::none_of(inputs.begin(), inputs.end(), [&](const tensor_spec* s) { return s->name == g.name; })) {
      std::string names;
      for (const tensor_spec* s : inputs) names += (names.empty() ? "'" : ", '") + s->name + "'";
      throw invalid_argument(fmt::format(
          "input data '{}' gives input '{}', which the engine does not have (its inputs: {})", file_, g.name, names));
    }
  auto values = std::make_shared<std::vector<detail::given_input>>();
  for (const tensor_spec* spec : inputs) {
    detail::given_input b = detail::bind_values(given_for(*spec), *spec, file_);
    for (std::size_t s = 0; s < b.samples.size(); ++s)
      if (auto v = find_index_violation(b.samples[s], *spec, spec->shape))
        throw invalid_argument(fmt::format("input data '{}': sample {}: {}", file_, s, ferry::describe(*v)));
    values->push_back(std::move(b));
  }
  bound.given_ = std::move(values);
  bound.bound_ = true;
  return bound;
}

void input_data::fill(std::span<std::byte> piece, std::size_t first_byte, const tensor_spec& spec,
                      std::uint64_t request) const {
  if (piece.empty()) return;  // nothing to write, and memset/memcpy take no null pointer even for 0 bytes
  // Inputs of one request differ by their names; a file's samples are taken whole per request.
  const std::uint64_t salt = salt_of(request ^ std::hash<std::string>{}(spec.name));
  const auto salt32 = static_cast<std::uint32_t>(salt);
  switch (fill_for(spec)) {
    case input_fill::zeros:
      std::memset(piece.data(), 0, piece.size());
      return;
    case input_fill::random_floats:
      if (spec.type == dtype::f32) {
        random_f32(piece, first_byte, salt32);
        std::fill(piece.begin() + static_cast<std::ptrdiff_t>(piece.size() / 4 * 4), piece.end(), std::byte{0});
      } else {
        random_halves(piece, first_byte, salt32, spec.type == dtype::bf16);
        if (piece.size() % 2 != 0) piece.back() = std::byte{0};
      }
      return;
    case input_fill::random_bytes:
      random_bytes(piece, first_byte, salt32);
      return;
    case input_fill::random_indices: {
      const auto bound = static_cast<std::uint64_t>(std::max<std::int64_t>(*spec.index_bound, 1));
      if (spec.type == dtype::i64)
        random_indices<std::int64_t>(piece, first_byte, salt, bound);
      else
        random_indices<std::int32_t>(piece, first_byte, salt, bound);
      std::fill(piece.begin() + static_cast<std::ptrdiff_t>(piece.size() / size_of(spec.type) * size_of(spec.type)),
                piece.end(), std::byte{0});
      return;
    }
    case input_fill::random_booleans:
      random_booleans(piece, first_byte, salt32);
      return;
    case input_fill::given:
      break;
  }
  if (!bound_)
    throw invalid_argument("input data '" + file_ + "' is used before it was checked against the engine's inputs");
  const auto& samples = given_for(spec).samples;
  const auto& sample = samples[request % samples.size()];
  if (first_byte + piece.size() > sample.size())
    throw invalid_argument(fmt::format("input '{}': {} bytes asked of a {}-byte sample", spec.name,
                                       first_byte + piece.size(), sample.size()));
  std::memcpy(piece.data(), sample.data() + first_byte, piece.size());
}

std::string input_data::describe(const tensor_spec& spec) const {
  const std::string type(to_string(spec.type));
  switch (fill_for(spec)) {
    case input_fill::zeros:
      if (source_ == input_source::zero) return fmt::format("{}: zeros", spec.name);
      return spec.type == dtype::boolean ? fmt::format("{}: false", spec.name)
                                         : fmt::format("{}: zeros ({} with no index_bound)", spec.name, type);
    case input_fill::random_floats:
      return fmt::format("{}: random {} values", spec.name, type);
    case input_fill::random_bytes:
      return fmt::format("{}: random {} values", spec.name, type);
    case input_fill::random_indices:
      return fmt::format("{}: random in {}", spec.name, bound_text(spec));
    case input_fill::random_booleans:
      return fmt::format("{}: random true/false", spec.name);
    case input_fill::given:
      break;
  }
  const auto& given = given_for(spec);
  const auto count = given.values.empty() ? given.samples.size() : given.values.size();
  return fmt::format("{}: from {} ({} sample{})", spec.name, file_, count, count == 1 ? "" : "s");
}

}  // namespace ferry
