// The values ferry writes into inputs it makes itself: warm-up, `ferry bench`, calibration, the
// in-flight depth search, the recipes, and a server's warm-up.
//
// Real models do not take every bit pattern: a token id past the vocabulary trips a device-side
// assert that loses the GPU's context (ferry/core/device_fault.hpp). So no input ever gets garbage:
//   automatic (the default)  floats: random finite values; 8-bit integers: random bytes (pixels);
//                            int32/int64 with an index_bound: random in [0, bound); int32/int64
//                            without one: zeros (0 is a valid id in every table); booleans: false
//   zero                     every input all zeros (false)
//   random                   as automatic, and booleans random; an int32/int64 input with no
//                            index_bound is refused, since nothing says which values it takes
//   a file                   the user's own values, per input: JSON (perf_analyzer's "data" form)
//                            or NumPy's .npz, with shapes and dtypes checked against the engine and
//                            index values against their bounds; several samples are used in turn
// Index bounds come from the engine (a model's description or sidecar, a built-in's spec).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/engines/engine.hpp"

namespace ferry {

enum class input_source { automatic, zero, random, file };

// How one input is filled, as decided by input_data::fill_for.
enum class input_fill {
  random_floats,    // finite values of moderate magnitude
  random_bytes,     // any bit pattern (8-bit integers: pixels, quantized values)
  random_indices,   // integers in [0, index_bound)
  random_booleans,  // 0 or 1
  zeros,            // all bytes 0: 0, 0.0, false
  given,            // the file's values
};

namespace detail {
struct given_input;  // one input's values read from a file (src/session/input_file.hpp)
}

class input_data {
 public:
  input_data() = default;  // automatic
  [[nodiscard]] static input_data zeros();
  [[nodiscard]] static input_data random();
  // Reads a .json or .npz file (input_file.cpp says what each may hold). Throws invalid_argument
  // naming the file and what is wrong with it: missing, unreadable, malformed, a dtype or shape
  // that cannot be a tensor's.
  [[nodiscard]] static input_data from_file(const std::filesystem::path& path);
  // What --input-data and a served model's warm-up take: "auto", "zero", "random", or a file.
  // `base` resolves a relative file path (a model's folder); empty: the working directory.
  [[nodiscard]] static input_data parse(std::string_view spec, const std::filesystem::path& base = {});

  [[nodiscard]] input_source source() const noexcept { return source_; }
  // How input `spec` is filled. Throws invalid_argument for random values of an int32/int64 input
  // with no index_bound (saying how to give one), and for a file that lacks the input.
  [[nodiscard]] input_fill fill_for(const tensor_spec& spec) const;
  // This data made ready for an engine's concrete I/O (outputs are skipped): fill_for every input,
  // and for a file every input present with its dtype and shape (a file may hold one sample of
  // the input's shape, or several along a leading dim), no input the engine lacks, JSON numbers
  // converted to the inputs' dtypes, every index value inside its bound. Throws invalid_argument
  // naming the input and the problem.
  [[nodiscard]] input_data bound_to(std::span<const tensor_spec> concrete_io) const;
  // Writes bytes [first_byte, first_byte + piece.size()) of input `spec`'s values for request
  // `request`: fresh random values per request, or the file's samples in turn. `first_byte` is a
  // multiple of 8 (pieces of any size give the same bytes as one piece). A file's data is used
  // bound_to the engine; fill throws invalid_argument otherwise.
  void fill(std::span<std::byte> piece, std::size_t first_byte, const tensor_spec& spec, std::uint64_t request) const;
  // What input `spec` gets, for reports: "input_ids: random in [0, 30522)",
  // "attention_mask: zeros (int64 with no index_bound)", "x: from in.npz (4 samples)".
  [[nodiscard]] std::string describe(const tensor_spec& spec) const;
  // "auto", "zero", "random" or the file's path.
  [[nodiscard]] std::string name() const;

 private:
  input_source source_ = input_source::automatic;
  std::string file_;
  bool bound_ = false;
  std::shared_ptr<const std::vector<detail::given_input>> given_;  // shared: copies stay cheap
  [[nodiscard]] const detail::given_input& given_for(const tensor_spec& spec) const;
};

}  // namespace ferry
