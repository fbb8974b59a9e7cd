#include "ferry/memory/profile.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ferry/core/error.hpp"

namespace ferry {
namespace {

using json = nlohmann::json;

struct use_name {
  transfer_use use;
  std::string_view key;
  std::string_view words;
};

constexpr use_name use_names[] = {
    {transfer_use::input_once, "input-once", "input read once"},
    {transfer_use::input_reread, "input-reread", "input re-read by the kernel"},
    {transfer_use::output, "output", "output read by the CPU"},
};

platform_class parse_platform(const std::string& name) {
  for (const auto c : {platform_class::discrete_pcie, platform_class::integrated, platform_class::coherent_hmm,
                       platform_class::coherent_ats})
    if (to_string(c) == name) return c;
  throw invalid_argument("unknown platform class '" + name + "'");
}

json point_json(const profile_point& p) { return {{"bytes", p.bytes}, {"median_us", p.median_us}, {"noise", p.noise}}; }

json curve_json(const strategy_curve& c) {
  json points = json::array();
  for (const auto& p : c.points) points.push_back(point_json(p));
  return {{"strategy", to_string(c.strategy)},
          {"use", to_string(c.use)},
          {"refused", c.refused.empty() ? json(nullptr) : json(c.refused)},
          {"points", std::move(points)}};
}

json inflight_json(const inflight_finding& f) {
  return {{"strategy", to_string(f.strategy)}, {"bytes", f.bytes}, {"depth", f.depth}, {"explanation", f.explanation}};
}

// nlohmann's own messages name the type but not the field; these name the field.
template <typename T>
T field(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end()) throw invalid_argument(std::string("'") + key + "' is missing");
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw invalid_argument(std::string("'") + key + "' has the wrong type: " + it->dump());
  }
}

}  // namespace

std::string_view to_string(transfer_use use) noexcept {
  for (const auto& n : use_names)
    if (n.use == use) return n.key;
  return "unknown";
}

std::string_view describe(transfer_use use) noexcept {
  for (const auto& n : use_names)
    if (n.use == use) return n.words;
  return "unknown";
}

transfer_use parse_transfer_use(std::string_view name) {
  for (const auto& n : use_names)
    if (n.key == name) return n.use;
  throw invalid_argument("unknown use '" + std::string(name) + "' (input-once, input-reread, output)");
}

const strategy_curve* device_profile::find(strategy_kind strategy, transfer_use use) const noexcept {
  for (const auto& c : curves)
    if (c.strategy == strategy && c.use == use) return &c;
  return nullptr;
}

json to_json(const device_profile& profile) {
  json curves = json::array();
  for (const auto& c : profile.curves) curves.push_back(curve_json(c));
  json inflight = json::array();
  for (const auto& f : profile.inflight) inflight.push_back(inflight_json(f));
  return {{"format", profile.format},       {"gpu_uuid", profile.gpu_uuid},
          {"gpu_name", profile.gpu_name},   {"driver_version", profile.driver_version},
          {"link", profile.link},           {"platform_class", to_string(profile.platform)},
          {"date", profile.date},           {"host", profile.host},
          {"mode", profile.mode},           {"curves", std::move(curves)},
          {"inflight", std::move(inflight)}};
}

device_profile profile_from_json(const json& doc) {
  if (!doc.is_object()) throw invalid_argument("a profile is a JSON object");
  device_profile p;
  p.format = field<int>(doc, "format");
  if (p.format != device_profile::current_format)
    throw invalid_argument(
        fmt::format("format {} is not the format this ferry reads ({})", p.format, device_profile::current_format));
  p.gpu_uuid = field<std::string>(doc, "gpu_uuid");
  p.gpu_name = field<std::string>(doc, "gpu_name");
  p.driver_version = field<int>(doc, "driver_version");
  p.link = field<std::string>(doc, "link");
  p.platform = parse_platform(field<std::string>(doc, "platform_class"));
  p.date = field<std::string>(doc, "date");
  p.host = field<std::string>(doc, "host");
  p.mode = field<std::string>(doc, "mode");
  for (const auto& c : field<json>(doc, "curves")) {
    strategy_curve curve;
    curve.strategy = parse_strategy(field<std::string>(c, "strategy"));
    curve.use = parse_transfer_use(field<std::string>(c, "use"));
    const json refused = field<json>(c, "refused");
    if (!refused.is_null()) curve.refused = field<std::string>(c, "refused");
    for (const auto& pt : field<json>(c, "points")) {
      profile_point point{field<std::size_t>(pt, "bytes"), field<double>(pt, "median_us"), field<double>(pt, "noise")};
      if (point.bytes == 0 || !(point.median_us > 0))
        throw invalid_argument("a point of " + std::string(to_string(curve.strategy)) + " has no size or no time");
      curve.points.push_back(point);
    }
    std::sort(curve.points.begin(), curve.points.end(),
              [](const profile_point& a, const profile_point& b) { return a.bytes < b.bytes; });
    p.curves.push_back(std::move(curve));
  }
  for (const auto& f : field<json>(doc, "inflight")) {
    inflight_finding finding;
    finding.strategy = parse_strategy(field<std::string>(f, "strategy"));
    finding.bytes = field<std::size_t>(f, "bytes");
    finding.depth = field<int>(f, "depth");
    finding.explanation = field<std::string>(f, "explanation");
    if (finding.depth < 1) throw invalid_argument("an in-flight depth is below 1");
    p.inflight.push_back(std::move(finding));
  }
  return p;
}

std::optional<double> estimate_us(const strategy_curve& curve, std::size_t bytes) {
  const auto& pts = curve.points;
  if (!curve.refused.empty() || pts.empty()) return std::nullopt;
  // Below the smallest size a request costs what its fixed overheads cost there.
  if (pts.size() == 1 || bytes <= pts.front().bytes) return pts.front().median_us;
  // The segment that holds `bytes`, or the last one beyond the largest size.
  std::size_t hi = 1;
  while (hi + 1 < pts.size() && pts[hi].bytes < bytes) ++hi;
  const auto& a = pts[hi - 1];
  const auto& b = pts[hi];
  const double t = (static_cast<double>(bytes) - static_cast<double>(a.bytes)) /
                   (static_cast<double>(b.bytes) - static_cast<double>(a.bytes));
  return std::max(a.median_us + t * (b.median_us - a.median_us), std::min(a.median_us, b.median_us));
}

std::filesystem::path profile_directory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return std::filesystem::path(xdg) / "ferry" / "profiles";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return std::filesystem::path(home) / ".cache" / "ferry" / "profiles";
  throw invalid_argument("no cache directory: neither XDG_CACHE_HOME nor HOME is set (give --profile PATH)");
}

std::filesystem::path default_profile_path(const device_caps& caps) {
  return profile_directory() / (caps.uuid + ".json");
}

std::string_view to_string(profile_status status) noexcept {
  switch (status) {
    case profile_status::loaded:
      return "loaded";
    case profile_status::missing:
      return "missing";
    case profile_status::stale:
      return "stale";
    case profile_status::corrupt:
      return "corrupt";
  }
  return "unknown";
}

profile_lookup load_profile(const std::filesystem::path& path, const device_caps& caps) {
  profile_lookup out;
  out.path = path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    out.status = profile_status::missing;
    out.message = fmt::format("no profile for GPU {} at {} (run `ferry calibrate`)", caps.ordinal, path.string());
    return out;
  }
  device_profile p;
  try {
    std::ifstream in(path);
    p = profile_from_json(json::parse(in));
  } catch (const std::exception& e) {  // parse errors and invalid_argument alike
    out.status = profile_status::corrupt;
    out.message = fmt::format("profile {} is corrupt and was not used ({}); run `ferry calibrate` again", path.string(),
                              e.what());
    return out;
  }
  std::string changed;
  if (p.gpu_uuid != caps.uuid)
    changed = fmt::format("it was measured on GPU {} ({}), this is {}", p.gpu_uuid, p.gpu_name, caps.uuid);
  else if (p.driver_version != caps.driver_version)
    changed = fmt::format("it was measured under CUDA driver {}.{}, this machine runs {}.{}", p.driver_version / 1000,
                          p.driver_version % 1000 / 10, caps.driver_version / 1000, caps.driver_version % 1000 / 10);
  else if (p.link != describe_link(caps))
    changed = fmt::format("it was measured over {}, the link is now {}", p.link, describe_link(caps));
  if (!changed.empty()) {
    out.status = profile_status::stale;
    out.message =
        fmt::format("profile {} is stale and was not used: {}; run `ferry calibrate` again", path.string(), changed);
    return out;
  }
  out.status = profile_status::loaded;
  out.message = fmt::format("profile {} measured {} on {}", path.string(), p.date, p.host);
  out.profile = std::move(p);
  return out;
}

void save_profile(const device_profile& profile, const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw invalid_argument("cannot create " + path.parent_path().string() + ": " + ec.message());
  // Written beside and renamed over, so a reader never sees half a profile.
  const auto partial = std::filesystem::path(path.string() + ".partial");
  {
    std::ofstream out(partial);
    if (!out) throw invalid_argument("cannot write " + partial.string());
    out << to_json(profile).dump(2) << '\n';
    if (!out) throw invalid_argument("cannot write " + partial.string());
  }
  std::filesystem::rename(partial, path, ec);
  if (ec) throw invalid_argument("cannot write " + path.string() + ": " + ec.message());
}

}  // namespace ferry
