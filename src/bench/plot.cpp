#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "ferry/bench/matrix.hpp"
#include "ferry/error.hpp"

namespace ferry::bench {
namespace {

// The plot script travels with the source tree and the install; FERRY_PLOT_SCRIPT overrides.
std::filesystem::path plot_script() {
  if (const char* env = std::getenv("FERRY_PLOT_SCRIPT")) return env;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe");
  for (const auto& candidate : {exe.parent_path() / "../share/ferry/plot_bench.py",
                                std::filesystem::path(FERRY_SOURCE_DIR) / "scripts/plot_bench.py"})
    if (std::filesystem::exists(candidate)) return candidate;
  throw invalid_argument("--plot: cannot find plot_bench.py (set FERRY_PLOT_SCRIPT)");
}

// Single quotes for the shell, with any quote inside the path closed, escaped and reopened.
std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void render_plot(const std::string& json_path, const std::string& image_path) {
  const std::string command = fmt::format("python3 {} {} {}", shell_quoted(plot_script().string()),
                                          shell_quoted(json_path), shell_quoted(image_path));
  if (std::system(command.c_str()) != 0) throw error("--plot: '" + command + "' failed");
}

}  // namespace ferry::bench
