// A backend written in C++ on ferry's engine seam, as the torch and TensorRT backends are: a
// built-in workload exported through src/engines/plugin/backend_export.cpp, so that code runs in
// the tests without libtorch or TensorRT. Its model "file" names a built-in spec: `seam:touch`,
// `seam:reduce`, each with a 1 MiB input; `seam:own-graphs` and `seam:own-graphs-sync` are
// tests/support/own_graph_engine.hpp's engine, whose contexts capture graphs of their own (the ABI's
// use_graphs and graph_failure). Only the last part of the path counts: `ferry serve`
// resolves a relative model path into the model's folder (`seam:touch` arrives as
// `/repo/model/touch`).
#include <filesystem>

#include "engines/plugin/backend_export.hpp"
#include "ferry/engines/builtin.hpp"
#include "support/own_graph_engine.hpp"

namespace ferry::plugin {

const exported_backend& backend_to_export() {
  static const exported_backend backend{
      .name = "seam",
      .version = "test (ferry's C++ engine seam)",
      .load = [](const std::string& spec, const model_engine_options&) -> std::unique_ptr<engine> {
        const std::string name = std::filesystem::path(spec).filename().string();
        if (name == "own-graphs" || name == "own-graphs-sync")
          return std::make_unique<test::own_graph_engine>(name == "own-graphs-sync");
        return make_builtin_engine(name, {.input_bytes = std::size_t{1} << 20, .batch = 16});
      }};
  return backend;
}

}  // namespace ferry::plugin
