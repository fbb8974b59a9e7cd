// Where the backend tests find their plugins and the example model: the build's folders, or the
// folders named by the same variables in the environment (a bundle run on another machine, as
// scripts/gpu_host.sh does, has the plugins elsewhere).
#pragma once

#include <cstdlib>
#include <filesystem>

namespace ferry::test {

inline std::filesystem::path from_environment(const char* variable, const char* built) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? value : built;
}

// libferry_backend_affine.so (examples/backend).
inline std::filesystem::path example_backend_dir() {
  return from_environment("FERRY_EXAMPLE_BACKEND_DIR", FERRY_EXAMPLE_BACKEND_DIR);
}
// examples/backend/model.affine: y = 2x + 1 on rows of 1024 floats, batch 1 to 64.
inline std::filesystem::path example_model() { return from_environment("FERRY_EXAMPLE_MODEL", FERRY_EXAMPLE_MODEL); }
// tests/backends: broken backends and `seam`.
inline std::filesystem::path test_backend_dir() {
  return from_environment("FERRY_TEST_BACKEND_DIR", FERRY_TEST_BACKEND_DIR);
}

}  // namespace ferry::test
