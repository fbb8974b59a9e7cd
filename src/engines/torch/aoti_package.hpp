// What ferry checks about a .pt2 package before and after handing it to libtorch, so every bad
// model file gets one clear message instead of a C++ exception from deep inside the loader.
// Pure logic (no libtorch), so CPU tests cover every error path.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "engines/io_description.hpp"

namespace ferry::aoti {

// Package metadata key under which scripts/export_model.py stores the ferry.io/1 description.
inline constexpr std::string_view io_metadata_key = "ferry.io";

// The sidecar the export script writes next to the package: PATH.io.json.
[[nodiscard]] std::filesystem::path sidecar_path(const std::filesystem::path& package);

// Throws invalid_argument when the file is missing, not a regular file, unreadable, empty, or not
// a zip archive (every .pt2 package is one).
void check_package_file(const std::filesystem::path& package);

// The description written down for the package: from its metadata when it has one, else from the
// sidecar; nothing when neither exists. Throws invalid_argument when the text is malformed.
[[nodiscard]] std::optional<io_description> find_io_description(const std::filesystem::path& package,
                                                                const std::optional<std::string>& metadata_json);

// The message for a package with no written description whose I/O could not be read from the
// package itself either (`why_not_read` says why): what is missing, and the two ways to add it.
[[nodiscard]] std::string no_description_message(const std::filesystem::path& package, std::string_view why_not_read);

// Why a package cannot run here, or nothing: compiled for another GPU architecture ("sm_90"
// against the device's major.minor), or exported by a PyTorch whose major.minor differs from the
// libtorch ferry links (AOTInductor packages carry generated code for one runtime).
[[nodiscard]] std::optional<std::string> incompatibility(const io_description& d, int cc_major, int cc_minor,
                                                         std::string_view runtime_torch);

}  // namespace ferry::aoti
