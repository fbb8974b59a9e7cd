// Engine backends loaded at run time (ferry/engines/backend_api.h is their C ABI): where ferry looks for
// them and what it finds there. A model spec "<NAME>:<PATH>" whose NAME is no built-in workload is
// loaded by the backend NAME (ferry/engines/model_engine.hpp); `ferry info` lists the backends found.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ferry {

// The environment variable naming more folders to search, separated by ':'.
inline constexpr std::string_view backend_path_variable = "FERRY_BACKEND_PATH";

// Where backends are looked for, in this order: `directory` (the --backend-directory flag; none
// when empty), the folders of FERRY_BACKEND_PATH, then the folder beside the installed library
// (<prefix>/lib/ferry/backends, found from the running program's own location).
[[nodiscard]] std::vector<std::filesystem::path> backend_directories(const std::filesystem::path& directory = {});

// The file a backend of this name is in: libferry_backend_<name>.so.
[[nodiscard]] std::string backend_file_name(std::string_view name);

struct backend_info {
  std::string name;  // from the file name: the spec prefix it serves
  std::filesystem::path file;
  // What the backend says of itself; empty when it could not be loaded (`problem` says why).
  std::string version;
  std::uint32_t api_version = 0;
  bool computes_on_host = false;  // it exports ferry_backend_model_run_host: serves without a GPU
  std::string problem;            // why it cannot be used, or empty
};

// Every backend file in `directories`, opened to read its version; the first of each name wins,
// as when loading. A backend that cannot be used is listed with its problem. Never throws.
[[nodiscard]] std::vector<backend_info> list_backends(const std::vector<std::filesystem::path>& directories);

}  // namespace ferry
