#include "serve/observability/request_failure.hpp"

#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"
#include "serve/vocabulary/client_text.hpp"

namespace ferry::serve {

request_error current_request_error(allocation_stage stage, std::string_view context) {
  const std::string prefix(context);
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return allocation_failure(stage);
  } catch (const request_error& e) {
    return e;
  } catch (const ferry::invalid_argument& e) {
    return {error_status::bad_request, prefix + e.what()};
  } catch (const nlohmann::json::exception& e) {
    return {error_status::bad_request, prefix + "unexpected JSON in the request: " + quote_text(e.what(), 256)};
  } catch (const std::exception& e) {
    return {error_status::internal, prefix + e.what()};
  } catch (...) {
    return {error_status::internal, prefix + "unknown error"};
  }
}

}  // namespace ferry::serve
