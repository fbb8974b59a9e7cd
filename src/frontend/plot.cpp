#include "ferry/frontend/plot.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "ferry/core/error.hpp"

namespace ferry::frontend {
namespace {

// The script ships beside the program: <bin>/../share/ferry/plot_bench.py, in an installation and
// in the build tree alike (the build copies it there); FERRY_PLOT_SCRIPT overrides.
std::filesystem::path plot_script() {
  if (const char* env = std::getenv("FERRY_PLOT_SCRIPT")) return env;
  const auto beside = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "../share/ferry/plot_bench.py";
  if (std::filesystem::exists(beside)) return beside.lexically_normal();
  throw invalid_argument("--plot: cannot find " + beside.lexically_normal().string() + " (set FERRY_PLOT_SCRIPT)");
}

// A python that imports matplotlib: `python3` first, then the system's (Debian's
// python3-matplotlib installs for /usr/bin/python3, which another python3 on PATH may not see).
std::string plot_python() {
  for (const std::string python : {"python3", "/usr/bin/python3"})
    if (std::system((python + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) return python;
  throw unsupported(
      "--plot needs Python 3 with matplotlib, which this machine lacks (Debian: apt-get install "
      "python3-matplotlib; or pip install matplotlib)");
}

// Single quotes for the shell, with any quote inside the path closed, escaped and reopened.
std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void check_plot_prerequisites(const std::string& image_path) {
  const auto extension = std::filesystem::path(image_path).extension();
  if (extension != ".png" && extension != ".svg")
    throw invalid_argument("--plot '" + image_path + "': the image must be .png or .svg");
  (void)plot_script();
  (void)plot_python();
}

void render_plot(const std::string& json_path, const std::string& image_path) {
  const std::string command = fmt::format("{} {} {} {}", plot_python(), shell_quoted(plot_script().string()),
                                          shell_quoted(json_path), shell_quoted(image_path));
  if (std::system(command.c_str()) != 0) throw error("--plot: '" + command + "' failed");
}

}  // namespace ferry::frontend
