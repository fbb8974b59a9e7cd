// Finding a backend's file by name in the search folders (ferry/engines/backend.hpp says which).
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace ferry::plugin {

// The first `directories` entry holding libferry_backend_<name>.so. Throws unsupported naming the
// backend, the file and every folder looked in, when none does.
[[nodiscard]] std::filesystem::path find_backend(std::string_view name,
                                                 const std::vector<std::filesystem::path>& directories);

// Splits a ':'-separated list of folders, dropping empty entries.
[[nodiscard]] std::vector<std::filesystem::path> split_search_path(std::string_view text);

}  // namespace ferry::plugin
