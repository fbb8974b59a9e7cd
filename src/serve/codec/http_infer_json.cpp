#include "serve/codec/http_infer_json.hpp"

#include <string>

#include "serve/codec/client_json.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace ferry::serve {
namespace {

using json = nlohmann::json;

// The document's depths while reading an input: the request object, "inputs", the input.
constexpr std::size_t inputs_depth = 2;
constexpr std::size_t input_depth = 3;

// SAX events of the whole request: those within an input's "data" go to its decoder (or are
// skipped), every other one to the document builder.
class infer_json_handler {
 public:
  infer_json_handler(json& root, std::string what, const data_decoder_lookup& decoder_for)
      : document_(root, std::move(what)), decoder_for_(decoder_for) {}

  bool null() {
    return scalar([&] { element_other("null"); }, [&] { return document_.null(); });
  }
  bool boolean(bool v) {
    return scalar([&] { decoder_->boolean(v); }, [&] { return document_.boolean(v); });
  }
  bool number_integer(std::int64_t v) {
    return scalar([&] { decoder_->integer(v); }, [&] { return document_.number_integer(v); });
  }
  bool number_unsigned(std::uint64_t v) {
    return scalar([&] { decoder_->unsigned_integer(v); }, [&] { return document_.number_unsigned(v); });
  }
  bool number_float(double v, const std::string& token) {
    return scalar([&] { decoder_->floating(v, token); }, [&] { return document_.number_float(v, token); });
  }
  bool string(std::string& v) {
    return scalar([&] { element_other(quote_json(json(v))); }, [&] { return document_.string(v); });
  }
  bool binary(json::binary_t& v) {
    return scalar([&] { element_other("binary data"); }, [&] { return document_.binary(v); });
  }

  bool start_array(std::size_t elements) {
    if (in_data_ || data_next_) {
      if (!in_data_) begin_data();
      document_.check_depth(document_.depth() + ++data_depth_);
      return true;
    }
    note_value();
    const bool opens_inputs = document_.depth() == 1 && root_key_ == "inputs";
    document_.start_array(elements);
    inputs_open_ = inputs_open_ || opens_inputs;
    return true;
  }

  bool end_array() {
    if (in_data_) return end_data_level();
    document_.end_array();
    if (document_.depth() < inputs_depth) inputs_open_ = false;
    return true;
  }

  bool start_object(std::size_t elements) {
    if (in_data_ || data_next_) {
      if (!in_data_) begin_data();
      if (decoder_ != nullptr) decoder_->other("an object");
      document_.check_depth(document_.depth() + ++data_depth_);  // skipped: the second pass names it
      return true;
    }
    note_value();
    return document_.start_object(elements);
  }

  bool end_object() {
    if (in_data_) return end_data_level();
    return document_.end_object();
  }

  bool key(std::string& name) {
    if (in_data_) return true;  // within an object in skipped data
    document_.key(name);
    if (document_.depth() == 1) root_key_ = name;
    data_next_ = inputs_open_ && document_.depth() == input_depth && name == "data";
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token, const json::exception& problem) {
    return document_.parse_error(position, last_token, problem);
  }

 private:
  // A value that is no array or object: an element of the data, the data itself, or part of the
  // document.
  template <typename ToDecoder, typename ToDocument>
  bool scalar(ToDecoder&& to_decoder, ToDocument&& to_document) {
    if (in_data_) {
      if (decoder_ != nullptr) to_decoder();
      return true;
    }
    if (data_next_) {  // "data": 5, a tensor of one element
      begin_data();
      if (decoder_ != nullptr) to_decoder();
      end_data();
      return true;
    }
    note_value();
    return to_document();
  }

  void element_other(const std::string& quoted) { decoder_->other(quoted); }

  // Counts the entries of "inputs" as they begin, whatever their kind, so that indices match.
  void note_value() {
    if (inputs_open_ && document_.depth() == inputs_depth) ++inputs_begun_;
  }

  void begin_data() {
    data_next_ = false;
    in_data_ = true;
    data_depth_ = 0;
    decoder_ = decoder_for_(inputs_begun_ - 1, document_.innermost());
  }

  bool end_data_level() {
    if (--data_depth_ == 0) end_data();
    return true;
  }

  void end_data() {
    if (decoder_ != nullptr) decoder_->finish();
    in_data_ = false;
    decoder_ = nullptr;
    document_.null();  // the document keeps that the input has "data"
  }

  json_document_builder document_;
  const data_decoder_lookup& decoder_for_;
  std::string root_key_;                    // the request object's member being read
  bool inputs_open_ = false;                // within the request's "inputs" array
  std::size_t inputs_begun_ = 0;            // entries of "inputs" begun
  bool data_next_ = false;                  // the next value is an input's "data"
  bool in_data_ = false;                    // within an input's "data" array
  std::size_t data_depth_ = 0;              // arrays (and objects) open within it
  json_tensor_decoder* decoder_ = nullptr;  // where its elements go; null: skipped
};

}  // namespace

json read_infer_json(std::string_view text, std::string_view what, const data_decoder_lookup& decoder_for) {
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw bad_request(std::string(what) + ": malformed JSON: a NUL byte at offset " + std::to_string(nul));
  json document;
  infer_json_handler handler(document, std::string(what), decoder_for);
  (void)json::sax_parse(text.data(), text.data() + text.size(), &handler);
  return document;
}

}  // namespace ferry::serve
