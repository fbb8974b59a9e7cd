#include "serve/vocabulary/model_signature.hpp"

#include <algorithm>

#include "ferry/core/error.hpp"
#include "ferry/session/index_check.hpp"
#include "serve/vocabulary/client_text.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

std::string names_of(const std::vector<tensor_spec>& specs) {
  std::string s;
  for (const auto& t : specs) s += (s.empty() ? "'" : ", '") + t.name + "'";
  return s;
}

}  // namespace

model_signature make_signature(const std::vector<tensor_spec>& io, std::int64_t max_batch, const std::string& model) {
  model_signature sig;
  sig.max_batch = max_batch;
  for (const auto& t : io) (t.role == tensor_role::input ? sig.inputs : sig.outputs).push_back(t);
  for (const auto& t : io) {
    const bool leading_dynamic = !t.shape.empty() && t.shape.front() == dynamic_dim;
    const bool other_dynamic = std::any_of(t.shape.begin() + (t.shape.empty() ? 0 : 1), t.shape.end(),
                                           [](std::int64_t d) { return d == dynamic_dim; });
    if (other_dynamic)
      throw invalid_argument("model '" + model + "': tensor '" + t.name + "' has shape " + shape_text(t.shape) +
                             "; only a leading batch dim may be dynamic when serving");
    if (max_batch > 0 && !leading_dynamic)
      throw invalid_argument("model '" + model + "': max_batch is " + std::to_string(max_batch) + " but tensor '" +
                             t.name + "' has no dynamic leading dim (shape " + shape_text(t.shape) +
                             "); set max_batch to 0");
    if (max_batch == 0 && leading_dynamic)
      throw invalid_argument("model '" + model + "': tensor '" + t.name + "' has a dynamic batch dim (shape " +
                             shape_text(t.shape) + "); set max_batch in config.json");
  }
  return sig;
}

void check_input(const model_signature& sig, const std::string& model, const input_tensor& in) {
  const std::string who = "model '" + model + "'";
  const auto spec_it =
      std::find_if(sig.inputs.begin(), sig.inputs.end(), [&](const tensor_spec& t) { return t.name == in.name; });
  if (spec_it == sig.inputs.end())
    throw bad_request(who + " has no input '" + quote_text(in.name) + "'; its inputs are " + names_of(sig.inputs));
  const tensor_spec& spec = *spec_it;
  if (in.type != spec.type)
    throw bad_request(who + ": input '" + spec.name + "' has datatype " + std::string(to_string(spec.type)) +
                      ", the request gives " + std::string(to_string(in.type)));
  // A wrong rank may be any length: quote the request's shape briefly.
  if (in.shape.size() != spec.shape.size())
    throw bad_request(who + ": input '" + spec.name + "' has shape " + shape_text(spec.shape) + ", the request gives " +
                      quote_text(shape_text(in.shape)) + " (wrong rank)");
  for (std::size_t d = 0; d < spec.shape.size(); ++d) {
    if (in.shape[d] < 0)
      throw bad_request(who + ": input '" + spec.name + "': negative dim in shape " + shape_text(in.shape));
    if (spec.shape[d] != dynamic_dim && spec.shape[d] != in.shape[d])
      throw bad_request(who + ": input '" + spec.name + "' has shape " + shape_text(spec.shape) +
                        ", the request gives " + shape_text(in.shape));
  }
  if (sig.max_batch > 0) {
    const std::int64_t rows = in.shape.front();
    if (rows < 1 || rows > sig.max_batch)
      throw bad_request(who + ": input '" + spec.name + "' has batch " + std::to_string(rows) +
                        "; the model takes 1 to " + std::to_string(sig.max_batch));
  }
}

request_plan plan_request(const model_signature& sig, infer_request& request) {
  const std::string who = "model '" + request.model + "'";
  if (!request.inputs_checked)
    for (const auto& in : request.inputs) check_input(sig, request.model, in);
  std::vector<input_tensor> ordered;
  ordered.reserve(sig.inputs.size());
  request_plan plan;
  for (std::size_t i = 0; i < sig.inputs.size(); ++i) {
    const tensor_spec& spec = sig.inputs[i];
    const auto count = std::count_if(request.inputs.begin(), request.inputs.end(),
                                     [&](const input_tensor& t) { return t.name == spec.name; });
    if (count == 0) throw bad_request(who + ": input '" + spec.name + "' is missing");
    if (count > 1) throw bad_request(who + ": input '" + spec.name + "' is given " + std::to_string(count) + " times");
    auto it = std::find_if(request.inputs.begin(), request.inputs.end(),
                           [&](const input_tensor& t) { return t.name == spec.name; });
    const input_tensor& in = *it;
    if (sig.max_batch > 0) {
      const std::int64_t rows = in.shape.front();
      if (i > 0 && rows != plan.rows)
        throw bad_request(who + ": input '" + spec.name + "' has batch " + std::to_string(rows) + " but input '" +
                          sig.inputs[0].name + "' has " + std::to_string(plan.rows));
      plan.rows = rows;
    }
    const std::size_t expected = element_count(in.shape) * size_of(in.type);
    if (in.data.size() != expected)
      throw bad_request(who + ": input '" + spec.name + "' of shape " + shape_text(in.shape) + " and datatype " +
                        std::string(to_string(in.type)) + " needs " + std::to_string(expected) +
                        " bytes, the request gives " + std::to_string(in.data.size()));
    ordered.push_back(in);
  }
  request.inputs = std::move(ordered);

  if (request.outputs.empty()) {
    for (std::size_t i = 0; i < sig.outputs.size(); ++i) plan.outputs.push_back(i);
  } else {
    for (const auto& requested : request.outputs) {
      const std::string& name = requested.name;
      const auto it =
          std::find_if(sig.outputs.begin(), sig.outputs.end(), [&](const tensor_spec& t) { return t.name == name; });
      if (it == sig.outputs.end())
        throw bad_request(who + " has no output '" + name + "'; its outputs are " + names_of(sig.outputs));
      const auto index = static_cast<std::size_t>(it - sig.outputs.begin());
      if (std::find(plan.outputs.begin(), plan.outputs.end(), index) != plan.outputs.end())
        throw bad_request(who + ": output '" + name + "' is requested twice");
      plan.outputs.push_back(index);
    }
  }
  return plan;
}

std::string index_bounds_text(const model_signature& sig) {
  std::string text;
  for (const auto& t : sig.inputs) {
    if (t.type != dtype::i32 && t.type != dtype::i64) continue;
    text += (text.empty() ? "" : ", ") + t.name + "=" + (t.index_bound ? std::to_string(*t.index_bound) : "none");
  }
  return text;
}

}  // namespace ferry::serve
