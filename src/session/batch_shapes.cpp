#include "session/batch_shapes.hpp"

#include <string>

#include "ferry/core/error.hpp"

namespace ferry::detail {
namespace {

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(dims[i]);
  return text + "]";
}

// Every tensor leads with the same batch, `rows`: what makes its first rows a prefix of its bytes.
std::int64_t full_batch(const std::vector<tensor_spec>& io) {
  const std::int64_t rows = io.front().shape.empty() ? -1 : io.front().shape.front();
  for (const auto& t : io)
    if (t.shape.empty() || t.shape.front() != rows)
      throw invalid_argument("batch sizes: tensor '" + t.name + "' of shape " + dims_text(t.shape) +
                             " does not lead with the batch (" + std::to_string(rows) +
                             " rows in the first tensor), so a smaller batch cannot run in its first rows");
  return rows;
}

void check_sizes(std::span<const std::int64_t> sizes, std::int64_t full) {
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1 || sizes[i] > full)
      throw invalid_argument("batch size " + std::to_string(sizes[i]) + " is outside 1.." + std::to_string(full) +
                             " (the session's full batch)");
    if (i > 0 && sizes[i] <= sizes[i - 1])
      throw invalid_argument("batch sizes must be ascending, each once: " + std::to_string(sizes[i]) + " follows " +
                             std::to_string(sizes[i - 1]));
  }
}

// The engine's I/O at `rows`, checked to be the first rows of `full`.
std::vector<tensor_spec> resolve_rows(const engine& eng, const std::vector<tensor_spec>& full, std::int64_t rows) {
  std::vector<shape_binding> inputs;
  for (const auto& t : full)
    if (t.role == tensor_role::input) {
      inputs.push_back({t.name, t.shape});
      inputs.back().dims.front() = rows;
    }
  std::vector<tensor_spec> io;
  try {
    io = eng.resolve(inputs);
  } catch (const invalid_argument& e) {
    throw invalid_argument("batch size " + std::to_string(rows) + ": " + e.what());
  }
  if (io.size() != full.size())
    throw invalid_argument("batch size " + std::to_string(rows) + ": the engine resolves " + std::to_string(io.size()) +
                           " tensors, the full batch " + std::to_string(full.size()));
  for (std::size_t i = 0; i < io.size(); ++i) {
    auto expected = full[i].shape;
    expected.front() = rows;
    if (io[i].name != full[i].name || io[i].type != full[i].type || io[i].shape != expected)
      throw invalid_argument("batch size " + std::to_string(rows) + ": tensor '" + io[i].name + "' resolves to " +
                             dims_text(io[i].shape) + ", not the first " + std::to_string(rows) + " rows of '" +
                             full[i].name + "' " + dims_text(full[i].shape));
  }
  return io;
}

}  // namespace

std::vector<batch_shape> resolve_batch_shapes(const engine& eng, const std::vector<tensor_spec>& full_io,
                                              std::span<const std::int64_t> sizes) {
  if (sizes.empty()) {
    const bool ranked = !full_io.empty() && !full_io.front().shape.empty();
    return {{ranked ? full_io.front().shape.front() : 0, full_io}};
  }
  if (full_io.empty()) throw invalid_argument("batch sizes: the engine has no tensors");
  const std::int64_t full = full_batch(full_io);
  check_sizes(sizes, full);
  std::vector<batch_shape> shapes;
  for (const std::int64_t rows : sizes)
    if (rows != full) shapes.push_back({rows, resolve_rows(eng, full_io, rows)});
  shapes.push_back({full, full_io});
  return shapes;
}

}  // namespace ferry::detail
