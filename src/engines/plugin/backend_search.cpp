#include "engines/plugin/backend_search.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "engines/plugin/backend_library.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/backend.hpp"

#ifndef FERRY_BACKEND_DIR_FROM_BIN
#error "FERRY_BACKEND_DIR_FROM_BIN comes from the build (CMake)"
#endif

namespace ferry {
namespace {

constexpr std::string_view file_prefix = "libferry_backend_";
constexpr std::string_view file_suffix = ".so";

// The file of the program (or library) this code is linked into: the executable for ferry's
// static libraries. dladdr names a program by how it was started (possibly a bare "ferry" found
// on PATH), so anything but an absolute path is taken from /proc/self/exe.
std::filesystem::path this_module() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&this_module), &info) != 0 && info.dli_fname != nullptr &&
      info.dli_fname[0] == '/')
    return info.dli_fname;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : exe;
}

}  // namespace

std::string backend_file_name(std::string_view name) { return fmt::format("{}{}{}", file_prefix, name, file_suffix); }

std::vector<std::filesystem::path> backend_directories(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> found;
  if (!directory.empty()) found.push_back(directory);
  if (const char* env = std::getenv(std::string(backend_path_variable).c_str()); env != nullptr)
    for (auto& d : plugin::split_search_path(env)) found.push_back(std::move(d));
  if (const auto module = this_module(); !module.empty())
    found.push_back((module.parent_path() / FERRY_BACKEND_DIR_FROM_BIN).lexically_normal());
  return found;
}

std::vector<backend_info> list_backends(const std::vector<std::filesystem::path>& directories) {
  std::map<std::string, backend_info> by_name;
  for (const auto& directory : directories) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string file = it->path().filename().string();
      if (!file.starts_with(file_prefix) || !file.ends_with(file_suffix)) continue;
      std::string name = file.substr(file_prefix.size(), file.size() - file_prefix.size() - file_suffix.size());
      if (name.empty() || by_name.contains(name)) continue;  // the first folder wins, as when loading
      backend_info info;
      info.name = name;
      info.file = it->path();
      try {
        const auto library = plugin::backend_library::open(it->path());
        info.version = library->version();
        info.api_version = library->functions().api_version();
        info.computes_on_host = library->computes_on_host();
      } catch (const std::exception& e) {
        info.problem = e.what();
      }
      by_name.emplace(std::move(name), std::move(info));
    }
  }
  std::vector<backend_info> listed;
  for (auto& [name, info] : by_name) listed.push_back(std::move(info));
  return listed;
}

namespace plugin {

std::vector<std::filesystem::path> split_search_path(std::string_view text) {
  std::vector<std::filesystem::path> folders;
  while (!text.empty()) {
    const auto colon = text.find(':');
    const auto part = text.substr(0, colon);
    if (!part.empty()) folders.emplace_back(part);
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  return folders;
}

std::filesystem::path find_backend(std::string_view name, const std::vector<std::filesystem::path>& directories) {
  const std::string file = backend_file_name(name);
  std::string looked;
  for (const auto& directory : directories) {
    std::error_code ec;
    const auto candidate = directory / file;
    if (std::filesystem::exists(candidate, ec)) return candidate;
    looked += (looked.empty() ? "" : ", ") + directory.string();
  }
  if (looked.empty()) looked = "nowhere (no --backend-directory, no " + std::string(backend_path_variable) + ")";
  throw unsupported(
      fmt::format("no backend '{}': {} is in none of the folders searched ({}); build it, or name its "
                  "folder with --backend-directory or {}",
                  name, file, looked, backend_path_variable));
}

}  // namespace plugin
}  // namespace ferry
