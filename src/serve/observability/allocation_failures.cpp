#include "serve/observability/allocation_failures.hpp"

#include <array>
#include <atomic>

#include <fmt/format.h>

namespace ferry::serve {
namespace {

constexpr std::array<allocation_stage, 4> stages{allocation_stage::receive, allocation_stage::decode,
                                                 allocation_stage::execute, allocation_stage::answer};

const char* label(allocation_stage stage) noexcept {
  switch (stage) {
    case allocation_stage::receive:
      return "receive";
    case allocation_stage::decode:
      return "decode";
    case allocation_stage::execute:
      return "execute";
    case allocation_stage::answer:
      return "answer";
  }
  return "unknown";
}

// Plain counters, never freed: counting must not allocate, as it runs when memory ran out.
std::array<std::atomic<std::uint64_t>, stages.size()>& counters() noexcept {
  static std::array<std::atomic<std::uint64_t>, stages.size()> counts{};
  return counts;
}

}  // namespace

request_error allocation_failure(allocation_stage stage) {
  counters()[static_cast<std::size_t>(stage)].fetch_add(1, std::memory_order_relaxed);
  return {error_status::out_of_memory, std::string("the server could not allocate memory for this request (") +
                                           label(stage) + "): try again shortly, or send a smaller request"};
}

std::uint64_t allocation_failures(allocation_stage stage) noexcept {
  return counters()[static_cast<std::size_t>(stage)].load(std::memory_order_relaxed);
}

std::string render_allocation_failures() {
  std::string text =
      "# HELP ferry_allocation_failures Requests failed because memory for them could not be allocated, by the "
      "step that needed it (answered HTTP 503 / gRPC RESOURCE_EXHAUSTED)\n"
      "# TYPE ferry_allocation_failures counter\n";
  for (const auto stage : stages)
    text += fmt::format("ferry_allocation_failures{{stage=\"{}\"}} {}\n", label(stage), allocation_failures(stage));
  return text;
}

}  // namespace ferry::serve
