#include "ferry/info/info_report.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <span>
#include <string_view>
#include <utility>

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ferry/core/byte_size.hpp"
#include "ferry/core/error.hpp"
#include "ferry/memory/recommendation.hpp"
#include "ferry/memory/strategy.hpp"
#include "ferry/session/choose.hpp"

namespace ferry {
namespace {

using json = nlohmann::json;

// Every capability flag of device_caps: its JSON key (the member's name) and the CUDA attribute
// it comes from. The text shows CUDA's names because the refusal reasons quote them
// ("pageableMemoryAccess=0"), so a user can match one to the other.
struct capability_flag {
  std::string_view key;
  std::string_view cuda_name;
  bool device_caps::*member;
};

constexpr std::array capability_flags{
    capability_flag{"integrated", "integrated", &device_caps::integrated},
    capability_flag{"can_map_host_memory", "canMapHostMemory", &device_caps::can_map_host_memory},
    capability_flag{"host_register_supported", "hostRegisterSupported", &device_caps::host_register_supported},
    capability_flag{"managed_memory", "managedMemory", &device_caps::managed_memory},
    capability_flag{"concurrent_managed_access", "concurrentManagedAccess", &device_caps::concurrent_managed_access},
    capability_flag{"pageable_memory_access", "pageableMemoryAccess", &device_caps::pageable_memory_access},
    capability_flag{"pageable_memory_access_uses_host_page_tables", "pageableMemoryAccessUsesHostPageTables",
                    &device_caps::pageable_memory_access_uses_host_page_tables},
    capability_flag{"direct_managed_mem_access_from_host", "directManagedMemAccessFromHost",
                    &device_caps::direct_managed_mem_access_from_host},
};

json strategy_names(std::span<const strategy_kind> kinds) {
  json names = json::array();
  for (const strategy_kind k : kinds) names.push_back(to_string(k));
  return names;
}

json recommendation_json(const recommendation& r) {
  return {
      {"recommended", to_string(r.recommended)},
      {"alternatives", strategy_names(r.alternatives)},
      {"avoid", strategy_names(r.avoid)},
      {"in_flight_slots", r.in_flight_slots},
      {"reasoning", r.reasoning},
      {"source", "platform rules, not measured on this machine"},
  };
}

// The request `ferry info` advises for when the profile decides: a few MB in and out, read once,
// as a typical image or activation batch.
constexpr std::size_t advised_request_bytes = 4'000'000;

// With this GPU's profile, its pick is the one recommendation (the platform rules are the fallback
// without one, and shown only then): what ferry::choose picks for a typical request.
json measured_recommendation_json(const device_profile& profile, const device_caps& caps) {
  const io_traffic request{.input_bytes = advised_request_bytes,
                           .output_bytes = advised_request_bytes,
                           .input_reread = false,
                           .input_bytes_read = 0};
  const choice pick = choose(request, caps, &profile, objective::throughput);
  return {
      {"recommended", to_string(pick.strategy)},
      {"alternatives", json::array()},
      {"avoid", json::array()},
      {"in_flight_slots", pick.inflight},
      {"reasoning", describe(pick)},
      {"source", "measured on this machine (its profile), for a request of 4 MB in and out"},
  };
}

json link_json(const link_bandwidth& link) {
  return {
      {"bytes", link.bytes},
      {"repetitions", link.repetitions},
      {"h2d_gbps_median", link.h2d_gbps_median},
      {"h2d_gbps_best", link.h2d_gbps_best},
      {"d2h_gbps_median", link.d2h_gbps_median},
      {"d2h_gbps_best", link.d2h_gbps_best},
  };
}

// Per use and measured size: the fastest strategy this device offers and the next one.
json uses_json(const device_profile& p, const device_caps& caps) {
  json uses = json::array();
  for (const transfer_use use : all_transfer_uses) {
    std::vector<std::size_t> sizes;
    for (const auto& c : p.curves)
      if (c.use == use)
        for (const auto& pt : c.points) sizes.push_back(pt.bytes);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    json rows = json::array();
    for (const std::size_t bytes : sizes) {
      std::vector<std::pair<double, strategy_kind>> ranked;
      for (const auto& c : p.curves) {
        if (c.use != use || !c.refused.empty() || unavailable_reason(c.strategy, caps)) continue;
        for (const auto& pt : c.points)
          if (pt.bytes == bytes) ranked.emplace_back(pt.median_us, c.strategy);
      }
      if (ranked.empty()) continue;
      std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      const bool has_next = ranked.size() > 1;
      rows.push_back({{"bytes", bytes},
                      {"best", to_string(ranked[0].second)},
                      {"best_us", ranked[0].first},
                      {"next", has_next ? json(to_string(ranked[1].second)) : json(nullptr)},
                      {"next_us", has_next ? json(ranked[1].first) : json(nullptr)}});
    }
    uses.push_back({{"use", to_string(use)}, {"description", describe(use)}, {"sizes", std::move(rows)}});
  }
  return uses;
}

json profile_json(const profile_lookup& lookup, const device_caps& caps) {
  json out = {{"status", to_string(lookup.status)}, {"path", lookup.path.string()}, {"message", lookup.message}};
  if (!lookup.profile) return out;
  const device_profile& p = *lookup.profile;
  out["date"] = p.date;
  out["host"] = p.host;
  out["link"] = p.link;
  out["driver"] = format_cuda_version(p.driver_version);
  out["mode"] = p.mode;
  out["uses"] = uses_json(p, caps);
  json depths = json::array();
  for (const auto& f : p.inflight)
    depths.push_back({{"strategy", to_string(f.strategy)}, {"bytes", f.bytes}, {"depth", f.depth}});
  out["inflight"] = std::move(depths);
  json refused = json::array();
  for (const auto& c : p.curves)
    if (!c.refused.empty() && c.use == transfer_use::input_once)
      refused.push_back({{"strategy", to_string(c.strategy)}, {"reason", c.refused}});
  out["refused"] = std::move(refused);
  return out;
}

json peer_json(const peer_link& link) {
  json bandwidth = nullptr;
  if (link.bandwidth) {
    bandwidth = {{"bytes", link.bandwidth->bytes},
                 {"repetitions", link.bandwidth->repetitions},
                 {"gbps_median", link.bandwidth->gbps_median},
                 {"gbps_best", link.bandwidth->gbps_best}};
  }
  return {
      {"from", link.from},
      {"to", link.to},
      {"can_access", link.can_access},
      {"enabled", link.enabled},
      {"error", link.error.empty() ? json(nullptr) : json(link.error)},
      {"bandwidth", std::move(bandwidth)},
  };
}

json device_json(const device_caps& caps, const link_measurements& measured, const profile_lookups& profiles) {
  json capabilities = json::object();
  for (const auto& flag : capability_flags) capabilities[std::string(flag.key)] = caps.*flag.member;

  json pcie = nullptr;
  if (caps.pcie) {
    pcie = {{"current_generation", caps.pcie->current_generation},
            {"current_width", caps.pcie->current_width},
            {"max_generation", caps.pcie->max_generation},
            {"max_width", caps.pcie->max_width}};
  }

  json strategies = json::array();
  for (const strategy_kind k : all_strategies) {
    const auto reason = unavailable_reason(k, caps);
    strategies.push_back({{"name", to_string(k)},
                          {"available", !reason.has_value()},
                          {"reason", reason ? json(*reason) : json(nullptr)}});
  }

  const platform_class platform = classify(caps);
  const auto link = measured.find(caps.ordinal);
  const auto lookup = profiles.find(caps.ordinal);
  return {
      {"ordinal", caps.ordinal},
      {"name", caps.name},
      {"compute_capability", fmt::format("{}.{}", caps.compute_major, caps.compute_minor)},
      {"multiprocessors", caps.multiprocessors},
      {"total_memory_bytes", caps.total_memory},
      {"free_memory_bytes", caps.free_memory},
      {"pci_bus_id", caps.pci_bus_id},
      {"uuid", caps.uuid},
      {"capabilities", std::move(capabilities)},
      {"pcie", std::move(pcie)},
      {"platform_class", to_string(platform)},
      {"strategies", std::move(strategies)},
      {"recommendation", lookup != profiles.end() && lookup->second.profile
                             ? measured_recommendation_json(*lookup->second.profile, caps)
                             : recommendation_json(recommendation_for(platform))},
      {"profile", lookup == profiles.end() ? json(nullptr) : profile_json(lookup->second, caps)},
      {"link_bandwidth", link == measured.end() ? json(nullptr) : link_json(link->second)},
  };
}

// ---- text rendering -------------------------------------------------------------------------

constexpr std::size_t label_width = 20;  // "  <label>" column, then the value
constexpr std::size_t line_width = 100;
const std::string value_indent(2 + label_width + 1, ' ');

// Appends "words" after `first_prefix`, wrapping at line_width onto lines that start with
// value_indent. A single word longer than a line stays whole.
void append_wrapped(std::string& out, const std::string& first_prefix, const std::vector<std::string>& words,
                    std::string_view separator = " ") {
  std::string line = first_prefix;
  bool line_has_word = false;
  for (const auto& word : words) {
    if (line_has_word && line.size() + separator.size() + word.size() > line_width) {
      out += line;
      out += '\n';
      line = value_indent;
      line_has_word = false;
    }
    if (line_has_word) line += separator;
    line += word;
    line_has_word = true;
  }
  out += line;
  out += '\n';
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  while (!text.empty()) {
    const auto start = text.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    text.remove_prefix(start);
    const auto end = text.find(' ');
    words.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end);
  }
  return words;
}

std::string label(std::string_view name) { return fmt::format("  {:<{}} ", name, label_width); }

void append_field(std::string& out, std::string_view name, std::string_view value) {
  append_wrapped(out, label(name), split_words(value));
}

std::string join_names(const json& names) {
  std::string joined;
  for (const auto& n : names) {
    if (!joined.empty()) joined += ", ";
    joined += n.get<std::string>();
  }
  return joined.empty() ? "-" : joined;
}

double gib(const json& bytes) { return bytes.get<double>() / static_cast<double>(1ULL << 30); }

std::string pcie_text(const json& pcie) {
  if (pcie.is_null()) return "not reported (NVML unavailable, or no PCIe link)";
  return fmt::format("Gen{} x{} (max Gen{} x{})", pcie.at("current_generation").get<int>(),
                     pcie.at("current_width").get<int>(), pcie.at("max_generation").get<int>(),
                     pcie.at("max_width").get<int>());
}

std::string link_text(const json& link) {
  if (link.is_null()) return "not measured (ferry info --measure)";
  return fmt::format(
      "H2D {:.1f} GB/s median, {:.1f} best; D2H {:.1f} median, {:.1f} best "
      "({} pinned copies of {} each way)",
      link.at("h2d_gbps_median").get<double>(), link.at("h2d_gbps_best").get<double>(),
      link.at("d2h_gbps_median").get<double>(), link.at("d2h_gbps_best").get<double>(),
      link.at("repetitions").get<int>(), format_byte_size(link.at("bytes").get<std::size_t>()));
}

std::string us_text(double us) {
  return us >= 1000 ? fmt::format("{:.2f} ms", us / 1000) : fmt::format("{:.0f} us", us);
}

std::string bytes_text(std::size_t bytes) { return format_byte_size(bytes); }

// What `ferry calibrate` measured here: per use and size, the fastest strategy and the next.
void append_measured(std::string& out, const json& profile) {
  append_field(
      out, "measured",
      fmt::format("on this machine {} ({}, {}, CUDA driver {}, {} sweep)", profile.at("date").get<std::string>(),
                  profile.at("host").get<std::string>(), profile.at("link").get<std::string>(),
                  profile.at("driver").get<std::string>(), profile.at("mode").get<std::string>()));
  for (const auto& use : profile.at("uses")) {
    std::vector<std::string> rows;
    for (const auto& row : use.at("sizes")) {
      std::string text = fmt::format("{}: {} {}", bytes_text(row.at("bytes").get<std::size_t>()),
                                     row.at("best").get<std::string>(), us_text(row.at("best_us").get<double>()));
      if (!row.at("next").is_null())
        text +=
            fmt::format(" (next {} {})", row.at("next").get<std::string>(), us_text(row.at("next_us").get<double>()));
      rows.push_back(text + ";");
    }
    if (rows.empty()) rows.emplace_back("not measured;");
    rows.back().pop_back();
    append_wrapped(out, label("  " + use.at("use").get<std::string>()), rows, " ");
  }
  for (const auto& f : profile.at("inflight")) {
    const int depth = f.at("depth").get<int>();
    append_field(out, "  in-flight",
                 fmt::format("{} slot{} for {} at {} (more did not raise throughput)", depth, depth == 1 ? "" : "s",
                             f.at("strategy").get<std::string>(), bytes_text(f.at("bytes").get<std::size_t>())));
  }
  for (const auto& r : profile.at("refused"))
    append_field(out, "  refused", r.at("strategy").get<std::string>() + ": " + r.at("reason").get<std::string>());
}

void append_device(std::string& out, const json& dev) {
  out += fmt::format("GPU {}: {}\n", dev.at("ordinal").get<int>(), dev.at("name").get<std::string>());
  append_field(
      out, "compute capability",
      fmt::format("{}, {} SMs", dev.at("compute_capability").get<std::string>(), dev.at("multiprocessors").get<int>()));
  append_field(out, "memory",
               fmt::format("{:.1f} GiB total, {:.1f} GiB free", gib(dev.at("total_memory_bytes")),
                           gib(dev.at("free_memory_bytes"))));
  append_field(out, "PCI bus id", dev.at("pci_bus_id").get<std::string>());
  if (const auto uuid = dev.at("uuid").get<std::string>(); !uuid.empty()) append_field(out, "UUID", uuid);
  append_field(out, "PCIe link", pcie_text(dev.at("pcie")));
  append_field(out, "platform", dev.at("platform_class").get<std::string>());

  // In device_caps order (the JSON object itself is sorted by key).
  std::vector<std::string> flags;
  const json& capabilities = dev.at("capabilities");
  for (const auto& flag : capability_flags) {
    const bool value = capabilities.at(std::string(flag.key)).get<bool>();
    flags.push_back(fmt::format("{}={}", flag.cuda_name, value ? 1 : 0));
  }
  append_wrapped(out, label("capabilities"), flags, "  ");

  out += "  strategies\n";
  for (const auto& s : dev.at("strategies")) {
    const std::string name = s.at("name").get<std::string>();
    const std::string prefix = fmt::format("    {:<{}} ", name, label_width - 2);
    if (s.at("available").get<bool>()) {
      out += prefix + "available\n";
    } else {
      append_wrapped(out, prefix, split_words("unavailable: " + s.at("reason").get<std::string>()));
    }
  }

  const json& profile = dev.at("profile");
  const bool measured_here = !profile.is_null() && profile.at("status") == "loaded";
  if (measured_here)
    append_measured(out, profile);
  else if (!profile.is_null())
    append_field(out, "profile", profile.at("message").get<std::string>());

  // One answer: the profile's pick where this GPU was measured; the platform rules (per platform
  // class, so a device lacking the capability is named) only without one.
  out += measured_here ? "  advice (measured on this machine, for a request of 4 MB in and out)\n"
                       : "  platform rules (not measured on this machine)\n";
  const json& rec = dev.at("recommendation");
  const std::string recommended = rec.at("recommended").get<std::string>();
  std::string caveat;
  for (const auto& s : dev.at("strategies"))
    if (s.at("name") == recommended && !s.at("available").get<bool>())
      caveat = " (but unavailable on this device, see above)";
  append_field(out, "recommended",
               fmt::format("{} with {} in-flight slots{}", recommended, rec.at("in_flight_slots").get<int>(), caveat));
  if (!rec.at("alternatives").empty()) append_field(out, "  as good", join_names(rec.at("alternatives")));
  if (!rec.at("avoid").empty()) append_field(out, "  avoid", join_names(rec.at("avoid")));
  append_field(out, "  why", rec.at("reasoning").get<std::string>());
  append_field(out, "link peak", link_text(dev.at("link_bandwidth")));
}

std::string peer_text(const json& link) {
  std::string access;
  if (link.at("enabled").get<bool>())
    access = "peer access enabled";
  else if (link.at("can_access").get<bool>())
    access = "peer access possible but not enabled: " + link.at("error").get<std::string>();
  else
    access = "no peer access (cudaDeviceCanAccessPeer=0; copies are staged through the host)";
  const json& bw = link.at("bandwidth");
  if (bw.is_null()) return access + "; copy bandwidth not measured (ferry info --measure)";
  return fmt::format("{}; cudaMemcpyPeerAsync {:.1f} GB/s median, {:.1f} best ({} copies of {})", access,
                     bw.at("gbps_median").get<double>(), bw.at("gbps_best").get<double>(),
                     bw.at("repetitions").get<int>(), format_byte_size(bw.at("bytes").get<std::size_t>()));
}

void append_peers(std::string& out, const json& peers) {
  out += "Peer access (GPU to GPU)\n";
  if (peers.empty()) {
    out += "  not queried\n";
    return;
  }
  for (const auto& link : peers)
    append_field(out, fmt::format("GPU {} -> GPU {}", link.at("from").get<int>(), link.at("to").get<int>()),
                 peer_text(link));
}

}  // namespace

cuda_versions query_cuda_versions() {
  cuda_versions v;
  FERRY_CUDA_TRY(cudaDriverGetVersion(&v.driver));
  FERRY_CUDA_TRY(cudaRuntimeGetVersion(&v.runtime));
  return v;
}

std::string format_cuda_version(int version) {
  if (version <= 0) return "none";
  return fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

json build_info_json(const cuda_versions& versions, const std::vector<device_caps>& devices,
                     const link_measurements& measured, const std::vector<peer_link>& peers,
                     const profile_lookups& profiles) {
  json all_devices = json::array();
  for (const auto& caps : devices) all_devices.push_back(device_json(caps, measured, profiles));
  json info = {
      {"cuda", {{"driver", format_cuda_version(versions.driver)}, {"runtime", format_cuda_version(versions.runtime)}}},
      {"devices", std::move(all_devices)},
  };
  // Peer access only means something between two GPUs or more; one-GPU reports stay as they were.
  if (devices.size() >= 2) {
    json links = json::array();
    for (const auto& link : peers) links.push_back(peer_json(link));
    info["peer_access"] = std::move(links);
  }
  return info;
}

std::string render_info_text(const json& info) {
  const json& cuda = info.at("cuda");
  std::string out = fmt::format("CUDA driver {}, runtime {}\n", cuda.at("driver").get<std::string>(),
                                cuda.at("runtime").get<std::string>());
  for (const auto& dev : info.at("devices")) {
    out += '\n';
    append_device(out, dev);
  }
  if (const auto peers = info.find("peer_access"); peers != info.end()) {
    out += '\n';
    append_peers(out, *peers);
  }
  return out;
}

}  // namespace ferry
