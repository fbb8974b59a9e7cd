#include "session/input_file.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#ifdef FERRY_HAVE_LIBZIP
#include <zip.h>
#endif

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferry/core/error.hpp"

namespace ferry::detail {
namespace {

using json = nlohmann::json;

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& why) {
  throw invalid_argument(fmt::format("input data '{}': {}", path.string(), why));
}

std::string shape_text(const std::vector<std::int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::size_t count_of(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (const auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

// ---- JSON ----

// Appends the leaves of a (nested) array to `flat`, and the shape its nesting gives; throws for a
// ragged array or a leaf that is no number or boolean.
void flatten(const json& value, std::vector<std::int64_t>& shape, std::size_t depth, json& flat,
             const std::string& where) {
  if (!value.is_array()) {
    if (!value.is_number() && !value.is_boolean())
      throw invalid_argument(where + ": an element is neither a number nor true/false");
    if (depth != shape.size()) throw invalid_argument(where + ": its nested arrays are not all of one depth");
    flat.push_back(value);
    return;
  }
  if (depth == shape.size()) {
    if (!flat.empty()) throw invalid_argument(where + ": its nested arrays are not all of one depth");
    shape.push_back(static_cast<std::int64_t>(value.size()));
  } else if (depth > shape.size() || shape[depth] != static_cast<std::int64_t>(value.size())) {
    throw invalid_argument(where + ": its nested arrays are ragged (rows of different lengths)");
  }
  for (const auto& v : value) flatten(v, shape, depth + 1, flat, where);
}

given_input json_input(const std::string& name, const json& value, const std::string& where) {
  given_input g{.name = name, .type = std::nullopt, .shape = std::nullopt, .samples = {}, .values = {}};
  json flat = json::array();
  std::vector<std::int64_t> nested;
  if (value.is_object()) {
    if (!value.contains("content"))
      throw invalid_argument(where + ": an object needs \"content\" (and may give \"shape\")");
    flatten(value.at("content"), nested, 0, flat, where);
    if (value.contains("shape")) {
      std::vector<std::int64_t> shape;
      try {
        shape = value.at("shape").get<std::vector<std::int64_t>>();
      } catch (const json::exception&) {
        throw invalid_argument(where + ": \"shape\" is not a list of integers");
      }
      for (const auto d : shape)
        if (d < 0) throw invalid_argument(where + ": \"shape\" has a negative dim");
      if (count_of(shape) != flat.size())
        throw invalid_argument(fmt::format("{}: \"shape\" {} holds {} elements, \"content\" {}", where,
                                           shape_text(shape), count_of(shape), flat.size()));
      g.shape = shape;
    } else if (nested.size() > 1) {
      g.shape = nested;
    }
  } else if (value.is_array()) {
    flatten(value, nested, 0, flat, where);
    if (nested.size() > 1) g.shape = nested;  // a flat list says only how many elements
  } else {
    throw invalid_argument(where + ": an input's values are an array or {\"content\": ..., \"shape\": ...}");
  }
  g.values.push_back(std::move(flat));
  return g;
}

std::vector<given_input> read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    refuse(path, fmt::format("not valid JSON (at byte {})", e.byte));
  }
  std::vector<json> entries;
  if (doc.is_object() && doc.contains("data")) {
    if (!doc.at("data").is_array() || doc.at("data").empty())
      refuse(path, "\"data\" must be a non-empty list of samples (each mapping input names to values)");
    for (const auto& e : doc.at("data")) entries.push_back(e);
  } else {
    entries.push_back(doc);
  }
  std::vector<given_input> inputs;
  for (std::size_t s = 0; s < entries.size(); ++s) {
    const json& sample = entries[s];
    if (!sample.is_object()) refuse(path, fmt::format("sample {} is not an object of input names", s));
    if (s > 0 && sample.size() != inputs.size())
      refuse(path, fmt::format("sample {} gives {} inputs, sample 0 gives {}", s, sample.size(), inputs.size()));
    for (const auto& [name, value] : sample.items()) {
      const std::string where = fmt::format("input data '{}': sample {}, input '{}'", path.string(), s, name);
      given_input g = json_input(name, value, where);
      if (s == 0) {
        inputs.push_back(std::move(g));
        continue;
      }
      const std::string key = name;  // a lambda does not capture a structured binding (clang before 16)
      auto it = std::find_if(inputs.begin(), inputs.end(), [&key](const given_input& i) { return i.name == key; });
      if (it == inputs.end()) refuse(path, fmt::format("sample {} gives input '{}', which sample 0 does not", s, name));
      if (it->shape && g.shape && *it->shape != *g.shape)
        refuse(path, fmt::format("input '{}' has another shape in sample {}", name, s));
      if (!it->shape) it->shape = g.shape;
      it->values.push_back(std::move(g.values.front()));
    }
  }
  if (inputs.empty()) refuse(path, "it gives no input");
  return inputs;
}

// One value encoded as `type`; throws naming the element for a value the type cannot hold.
void encode(const json& v, dtype type, std::byte* out, const std::string& where, std::size_t element) {
  const auto fail = [&](const std::string& why) {
    throw invalid_argument(fmt::format("{}: element {} ({}) {}", where, element, v.dump(), why));
  };
  if (type == dtype::boolean) {
    if (v.is_boolean()) {
      *out = std::byte{v.get<bool>() ? std::uint8_t{1} : std::uint8_t{0}};
    } else if (v.is_number_integer() && (v.get<std::int64_t>() == 0 || v.get<std::int64_t>() == 1)) {
      *out = std::byte{static_cast<std::uint8_t>(v.get<std::int64_t>())};
    } else {
      fail("is not true, false, 0 or 1");
    }
    return;
  }
  if (v.is_boolean()) fail("is a boolean, the input is " + std::string(to_string(type)));
  const bool is_float = type == dtype::f32 || type == dtype::f16 || type == dtype::bf16;
  if (is_float) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) fail("is out of range");
    const auto f = static_cast<float>(d);
    if (type == dtype::f32) {
      std::memcpy(out, &f, sizeof f);
    } else if (type == dtype::f16) {
      const __half h = __float2half_rn(f);
      if (std::isinf(__half2float(h))) fail("is out of range for FP16");
      std::memcpy(out, &h, sizeof h);
    } else {
      const __nv_bfloat16 b = __float2bfloat16_rn(f);
      std::memcpy(out, &b, sizeof b);
    }
    return;
  }
  if (!v.is_number_integer()) fail("is not an integer");
  const auto store = [&]<class T>(T) {
    const bool fits = v.is_number_unsigned() ? v.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<T>::max())
                                             : v.get<std::int64_t>() >= std::int64_t(std::numeric_limits<T>::min()) &&
                                                   v.get<std::int64_t>() <= std::int64_t(std::numeric_limits<T>::max());
    if (!fits) fail("is out of range for " + std::string(to_string(type)));
    const T x = v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>()) : static_cast<T>(v.get<std::int64_t>());
    std::memcpy(out, &x, sizeof x);
  };
  switch (type) {
    case dtype::i8:
      return store(std::int8_t{});
    case dtype::u8:
      return store(std::uint8_t{});
    case dtype::i32:
      return store(std::int32_t{});
    default:
      return store(std::int64_t{});
  }
}

// ---- NumPy .npz ----

#ifdef FERRY_HAVE_LIBZIP
struct zip_closer {
  void operator()(zip_t* z) const noexcept { zip_discard(z); }
};
struct zip_file_closer {
  void operator()(zip_file_t* f) const noexcept { zip_fclose(f); }
};

std::optional<dtype> numpy_dtype(const std::string& descr) {
  // '<' little-endian, '|' not applicable (one byte), '=' native (x86-64 and arm64: little).
  if (descr.size() < 2 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '=')) return std::nullopt;
  const std::string kind = descr.substr(1);
  if (kind == "f4") return dtype::f32;
  if (kind == "f2") return dtype::f16;
  if (kind == "i1") return dtype::i8;
  if (kind == "u1") return dtype::u8;
  if (kind == "i4") return dtype::i32;
  if (kind == "i8") return dtype::i64;
  if (kind == "b1") return dtype::boolean;
  return std::nullopt;
}

// One .npy member: its header's dtype and shape, and its data.
given_input read_npy(const std::filesystem::path& path, const std::string& name, const std::vector<std::byte>& bytes) {
  const auto bad = [&](const std::string& why) { refuse(path, fmt::format("array '{}': {}", name, why)); };
  static constexpr char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0) bad("not a .npy array");
  const auto major = static_cast<unsigned>(bytes[6]);
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<std::size_t>(bytes[8]) | static_cast<std::size_t>(bytes[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad("a truncated header");
    for (int i = 0; i < 4; ++i) header_len |= static_cast<std::size_t>(bytes[8 + i]) << (8 * i);
    offset = 12;
  } else {
    bad(fmt::format(".npy format version {} is not one this reader knows (1 to 3)", major));
  }
  if (bytes.size() < offset + header_len) bad("a truncated header");
  const std::string header(reinterpret_cast<const char*>(bytes.data() + offset), header_len);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')"))) bad("its header has no 'descr'");
  const std::string descr = m[1];
  const auto type = numpy_dtype(descr);
  if (!type)
    bad(
        fmt::format("dtype '{}' is not one ferry takes (little-endian float32, float16, int8, uint8, int32, int64 "
                    "or bool)",
                    descr));
  if (std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*True)")))
    bad("it is in Fortran order; save it in C order (np.ascontiguousarray)");
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))"))) bad("its header has no 'shape'");
  std::vector<std::int64_t> shape;
  std::stringstream dims(m[1].str());
  for (std::string d; std::getline(dims, d, ',');) {
    d.erase(0, d.find_first_not_of(" \t"));
    d.erase(d.find_last_not_of(" \tL") + 1);
    if (d.empty()) continue;
    try {
      shape.push_back(std::stoll(d));
    } catch (const std::exception&) {
      bad("its shape is not a tuple of integers");
    }
  }
  const std::size_t data_bytes = count_of(shape) * size_of(*type);
  if (bytes.size() - offset - header_len != data_bytes)
    bad(fmt::format("shape {} of {} needs {} bytes, the array holds {}", shape_text(shape), descr, data_bytes,
                    bytes.size() - offset - header_len));
  given_input g{.name = name, .type = type, .shape = shape, .samples = {}, .values = {}};
  g.samples.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(offset + header_len), bytes.end());
  return g;
}

std::vector<given_input> read_npz(const std::filesystem::path& path) {
  int code = 0;
  std::unique_ptr<zip_t, zip_closer> archive(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!archive) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    refuse(path, "not a readable .npz archive: " + why);
  }
  std::vector<given_input> inputs;
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t stat;
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &stat) != 0)
      refuse(path, "a member cannot be read");
    std::string name = stat.name;
    if (!name.ends_with(".npy")) continue;  // np.savez names each array NAME.npy
    name.resize(name.size() - 4);
    // A member of gigabytes is no input a request takes; refused before it is read.
    if (stat.size > (std::uint64_t{1} << 34)) refuse(path, fmt::format("array '{}' is over 16 GiB", name));
    std::vector<std::byte> bytes(stat.size);
    std::unique_ptr<zip_file_t, zip_file_closer> file(zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0));
    if (!file || zip_fread(file.get(), bytes.data(), stat.size) != static_cast<zip_int64_t>(stat.size))
      refuse(path, fmt::format("array '{}' cannot be read: {}", name, zip_strerror(archive.get())));
    inputs.push_back(read_npy(path, name, bytes));
  }
  if (inputs.empty()) refuse(path, "it holds no array (.npy member)");
  return inputs;
}
#else
std::vector<given_input> read_npz(const std::filesystem::path& path) {
  refuse(path,
         "this ferry was built without libzip, which reads .npz files (install libzip-dev and rebuild), "
         "or give the values as .json");
}
#endif

}  // namespace

std::vector<given_input> read_input_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) refuse(path, "no such file");
  const std::string extension = path.extension().string();
  if (extension == ".json") return read_json(path);
  if (extension == ".npz") return read_npz(path);
  refuse(path, "an input data file is .json or .npz");
}

given_input bind_values(const given_input& given, const tensor_spec& spec, const std::string& file) {
  const std::string where = fmt::format("input data '{}': input '{}'", file, spec.name);
  const std::size_t elements = spec.elements();
  given_input bound{.name = given.name, .type = spec.type, .shape = spec.shape, .samples = {}, .values = {}};
  if (!given.type) {  // JSON numbers
    for (std::size_t s = 0; s < given.values.size(); ++s) {
      const json& flat = given.values[s];
      if (given.shape && *given.shape != spec.shape)
        throw invalid_argument(fmt::format("{}: the file gives shape {}, the engine takes {}", where,
                                           shape_text(*given.shape), shape_text(spec.shape)));
      if (flat.size() != elements)
        throw invalid_argument(fmt::format("{}: sample {} holds {} values, the input's shape {} takes {}", where, s,
                                           flat.size(), shape_text(spec.shape), elements));
      std::vector<std::byte> bytes(elements * size_of(spec.type));
      for (std::size_t e = 0; e < elements; ++e)
        encode(flat[e], spec.type, bytes.data() + e * size_of(spec.type), where, e);
      bound.samples.push_back(std::move(bytes));
    }
    return bound;
  }
  if (*given.type != spec.type)
    throw invalid_argument(fmt::format("{}: the file's array is {}, the engine takes {}", where, to_string(*given.type),
                                       to_string(spec.type)));
  const std::vector<std::int64_t>& shape = *given.shape;
  const bool one = shape == spec.shape;
  const bool several = shape.size() == spec.shape.size() + 1 && !shape.empty() && shape.front() > 0 &&
                       std::equal(spec.shape.begin(), spec.shape.end(), shape.begin() + 1);
  if (!one && !several)
    throw invalid_argument(
        fmt::format("{}: the file's array has shape {}; the engine takes {} (or [N, ...] for N "
                    "samples of it)",
                    where, shape_text(shape), shape_text(spec.shape)));
  const std::size_t sample_bytes = spec.bytes();
  if (sample_bytes == 0) {
    bound.samples.emplace_back();
    return bound;
  }
  const std::vector<std::byte>& all = given.samples.front();
  for (std::size_t offset = 0; offset < all.size(); offset += sample_bytes)
    bound.samples.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(offset),
                               all.begin() + static_cast<std::ptrdiff_t>(offset + sample_bytes));
  return bound;
}

}  // namespace ferry::detail
