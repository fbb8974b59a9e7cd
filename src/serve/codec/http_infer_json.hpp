// The JSON header of an HTTP inference request, read with memory bounded by the tensors it
// carries rather than by what a document of it would take.
//
// Everything but the inputs' "data" becomes a document, built and checked as parse_client_json
// builds and checks one. An input's "data", usually all but a few hundred bytes of the header,
// becomes no document (one would take ~16 bytes per element, and a wrong shape would only be
// noticed after all of it was built): its elements go straight to the json_tensor_decoder that
// `decoder_for` hands out for that input, given the input's object as far as it has been read.
// Clients write "name", "datatype" and "shape" before "data", so the input can be checked
// against the model before a single element is decoded. When the lookup returns none (the object
// does not say enough yet), the data is skipped: the caller reads it in a second pass, once the
// whole input is known.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "serve/codec/json_tensor.hpp"

namespace ferry::serve {

// The decoder for the "data" of inputs[input], given that input's object as read so far (without
// its "data"), or null to skip the data. It may throw request_error to refuse the input.
using data_decoder_lookup = std::function<json_tensor_decoder*(std::size_t input, const nlohmann::json& input_so_far)>;

// Reads `text`, handing each input's "data" to its decoder and finishing the decoder at the end
// of the data. Returns the document, with null for each input's "data". Throws
// request_error(bad_request), its message starting with `what`, for what parse_client_json
// refuses, and passes on what the decoders and the lookup throw.
[[nodiscard]] nlohmann::json read_infer_json(std::string_view text, std::string_view what,
                                             const data_decoder_lookup& decoder_for);

}  // namespace ferry::serve
