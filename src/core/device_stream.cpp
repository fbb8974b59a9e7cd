#include "core/device_stream.hpp"

namespace ferry::core {
namespace {

stream make_on(int ordinal) {
  const scoped_device on_device(ordinal);
  return stream();
}

}  // namespace

device_stream::device_stream(int ordinal) : ordinal_(ordinal), stream_(make_on(ordinal)) {}

}  // namespace ferry::core
