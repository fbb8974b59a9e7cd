#include "serve_allocator.hpp"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <linux/limits.h>
#include <unistd.h>

#include "serve/admission/memory_release.hpp"

namespace ferry::cli {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

// Marks the re-executed process, so a preload that did not take never loops.
constexpr const char* reexec_marker = "FERRY_SERVE_MALLOC_PRELOADED";

std::string this_program() {
  std::string path(PATH_MAX, '\0');
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size());
  if (n <= 0) return {};
  path.resize(static_cast<std::size_t>(n));
  return path;
}

// Beside the program first (an installation or a bundle: <bin>/../lib), then the system's.
std::string installed_jemalloc(const std::string& program) {
  std::vector<std::string> candidates;
  candidates.push_back(program.substr(0, program.rfind('/')) + "/../lib/libjemalloc.so.2");
#if defined(__x86_64__)
  candidates.emplace_back("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");
#elif defined(__aarch64__)
  candidates.emplace_back("/usr/lib/aarch64-linux-gnu/libjemalloc.so.2");
#endif
  candidates.emplace_back("/usr/lib64/libjemalloc.so.2");
  candidates.emplace_back("/usr/local/lib/libjemalloc.so.2");
  for (const auto& path : candidates)
    if (access(path.c_str(), R_OK) == 0) return path;
  return {};
}

std::vector<std::string> this_command_line() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t start = 0; start < all.size();) {
    const std::size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return args;
}

bool asked_for_glibc() {
  const char* choice = std::getenv("FERRY_SERVE_MALLOC");
  return choice != nullptr && std::string_view(choice) == "glibc";
}

}  // namespace

void run_on_jemalloc_where_installed() {
  if (sanitized || asked_for_glibc() || std::getenv(reexec_marker) != nullptr) return;
  if (serve::running_on_jemalloc()) return;
  const std::string program = this_program();
  if (program.empty()) return;
  const std::string jemalloc = installed_jemalloc(program);
  std::vector<std::string> args = this_command_line();
  if (jemalloc.empty() || args.empty()) return;

  const char* preload_env = std::getenv("LD_PRELOAD");
  const std::string user_preload = preload_env != nullptr ? preload_env : "";
  const bool had_preload = preload_env != nullptr;
  const bool user_conf = std::getenv("MALLOC_CONF") != nullptr;
  const std::string preloads = jemalloc + (user_preload.empty() ? "" : ":" + user_preload);
  // Freed pages go back after 1 s of disuse, by jemalloc's own thread: an idle server returns to
  // within a few MB of its resting size without a call from the server.
  if (setenv("LD_PRELOAD", preloads.c_str(), 1) != 0 ||
      setenv("MALLOC_CONF", "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0", 0) != 0 ||
      setenv(reexec_marker, "1", 1) != 0)
    return;
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execv(program.c_str(), argv.data());
  // Not replaced: go on with glibc, as if nothing had been tried.
  if (had_preload)
    setenv("LD_PRELOAD", user_preload.c_str(), 1);
  else
    unsetenv("LD_PRELOAD");
  if (!user_conf) unsetenv("MALLOC_CONF");
  unsetenv(reexec_marker);
}

}  // namespace ferry::cli
