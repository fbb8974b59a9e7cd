#include "engines/torch/aoti_package.hpp"

#include <array>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "ferry/core/error.hpp"

namespace ferry::aoti {
namespace {

// "2.11.0+cu130" -> "2.11"; "" stays "".
std::string major_minor(std::string_view version) {
  const auto first = version.find('.');
  if (first == std::string_view::npos) return std::string(version);
  const auto second = version.find_first_of(".+", first + 1);
  return std::string(version.substr(0, second));
}

}  // namespace

std::filesystem::path sidecar_path(const std::filesystem::path& package) {
  return std::filesystem::path(package.string() + ".io.json");
}

void check_package_file(const std::filesystem::path& package) {
  std::error_code ec;
  const auto status = std::filesystem::status(package, ec);
  if (ec || !std::filesystem::exists(status))
    throw invalid_argument(fmt::format("model file '{}' does not exist", package.string()));
  if (!std::filesystem::is_regular_file(status))
    throw invalid_argument(fmt::format("model file '{}' is not a regular file", package.string()));
  std::ifstream in(package, std::ios::binary);
  if (!in) throw invalid_argument(fmt::format("model file '{}' cannot be read (permissions?)", package.string()));
  std::array<char, 4> magic{};
  in.read(magic.data(), magic.size());
  if (in.gcount() == 0) throw invalid_argument(fmt::format("model file '{}' is empty", package.string()));
  if (in.gcount() < 4 || magic != std::array<char, 4>{'P', 'K', '\x03', '\x04'})
    throw invalid_argument(
        fmt::format("model file '{}' is not a .pt2 package (not a zip archive): corrupt, or another kind of file",
                    package.string()));
}

std::optional<io_description> find_io_description(const std::filesystem::path& package,
                                                  const std::optional<std::string>& metadata_json) {
  if (metadata_json)
    return parse_io_description(*metadata_json,
                                package.string() + " (metadata '" + std::string(io_metadata_key) + "')");
  const auto sidecar = sidecar_path(package);
  std::ifstream in(sidecar);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return parse_io_description(text.str(), sidecar.string());
}

std::string no_description_message(const std::filesystem::path& package, std::string_view why_not_read) {
  return fmt::format(
      "model file '{}' has no I/O description (neither metadata '{}' in the package nor a sidecar '{}'), and its "
      "I/O could not be read from the package itself: {}. ferry needs each input's and output's name, dtype and "
      "shape with its dynamic dims' ranges: export with scripts/export_model.py --module FILE.py:FUNCTION, or "
      "write the sidecar (format ferry.io/1, docs/USAGE.md)",
      package.string(), io_metadata_key, sidecar_path(package).string(), why_not_read);
}

std::optional<std::string> incompatibility(const io_description& d, int cc_major, int cc_minor,
                                           std::string_view runtime_torch) {
  const std::string device_arch = fmt::format("sm_{}{}", cc_major, cc_minor);
  if (!d.cuda_arch.empty() && d.cuda_arch != device_arch)
    return fmt::format("it was compiled for {} and this GPU is {}: export it again on this GPU", d.cuda_arch,
                       device_arch);
  if (!d.exported_with_torch.empty() && !runtime_torch.empty() &&
      major_minor(d.exported_with_torch) != major_minor(runtime_torch))
    return fmt::format("it was exported with PyTorch {} and ferry runs libtorch {}: export it again with {}",
                       d.exported_with_torch, runtime_torch, major_minor(runtime_torch));
  return std::nullopt;
}

}  // namespace ferry::aoti
