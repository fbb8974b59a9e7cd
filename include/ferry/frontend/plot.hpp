// `ferry bench --plot`: the CLI draws a report's plots with the script it ships
// (<prefix>/share/ferry/plot_bench.py, found beside the program as the backends are); the
// measuring library never runs a program. Here because bench_flags checks --plot's needs before a
// run (the Python package shares that check; it never plots).
#pragma once

#include <string>

namespace ferry::frontend {

// What --plot needs, checked before anything is measured: an image path ending .png or .svg, the
// plot script, and Python with matplotlib. Throws invalid_argument / unsupported naming what lacks.
void check_plot_prerequisites(const std::string& image_path);

// Draws the plots of a report saved as JSON at `json_path` into `image_path` (.png or .svg) with
// plot_bench.py (FERRY_PLOT_SCRIPT overrides where it is found). Throws on failure.
void render_plot(const std::string& json_path, const std::string& image_path);

}  // namespace ferry::frontend
