// `ferry info --engine SPEC`: an engine's inputs and outputs, with each integer input's index bound
// or the fact that it has none (and what that means for the data ferry makes and the checks).
#pragma once

#include <filesystem>
#include <string>

namespace ferry::cli {

// Loads `spec` (a built-in, or a model file through its backend: on GPU 0 where there is one,
// else on the CPU where the backend computes there) and prints its I/O to stdout, as text or JSON.
// Throws what loading throws (invalid_argument for a bad spec or file, unsupported for a backend
// that needs a GPU on a machine without one).
void print_engine_io(const std::string& spec, const std::filesystem::path& backend_directory, bool json);

}  // namespace ferry::cli
