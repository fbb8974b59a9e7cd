#include "bindings.hpp"
#include "ferry/core/error.hpp"
#include "ferry/device/device_diagnosis.hpp"

namespace ferry::python {

device_caps usable_device(int ordinal) {
  // The same checks, in the same order and words, as the CLI's before it runs anything.
  if (cuda_device_count() == 0) throw no_device(no_device_reason());
  device_caps caps = query_device(ordinal);
  require_code_for(caps);
  return caps;
}

}  // namespace ferry::python
