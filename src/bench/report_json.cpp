// JSON form of a bench_report. Field names are those of bench_result.hpp, so the C++ structs
// are the schema's documentation; scripts/plot_bench.py reads this layout.
#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ferry/bench/report.hpp"
#include "ferry/error.hpp"

namespace ferry::bench {

namespace {

using nlohmann::json;

// ---- writing ---------------------------------------------------------------------------------

json stats_to_json(const sample_stats& s) {
  return json{{"count", s.count}, {"median", s.median}, {"p90", s.p90}, {"p99", s.p99},
              {"min", s.min},     {"max", s.max},       {"iqr", s.iqr}, {"mean", s.mean}};
}

json um_to_json(const um_traffic& um) {
  return json{{"bytes_host_to_device", um.bytes_host_to_device},
              {"bytes_device_to_host", um.bytes_device_to_host},
              {"gpu_page_faults", um.gpu_page_faults},
              {"cpu_page_faults", um.cpu_page_faults}};
}

json side_to_json(const side_run& s) {
  return json{{"steps", s.steps},
              {"iterations", s.iterations},
              {"latency_us", stats_to_json(s.latency_us)},
              {"noise", s.noise},
              {"output_checked", s.output_checked},
              {"output_matches", s.output_matches},
              {"check_detail", s.check_detail}};
}

json clocks_to_json(const clock_record& c) {
  return json{{"sm_mhz_min", c.sm_mhz_min},   {"sm_mhz_max", c.sm_mhz_max}, {"mem_mhz_min", c.mem_mhz_min},
              {"mem_mhz_max", c.mem_mhz_max}, {"throttle_reasons", c.throttle_reasons},
              {"samples", c.samples},         {"changed", c.changed}};
}

json trial_to_json(const trial_figures& t) {
  return json{{"started_seconds", t.started_seconds}, {"wall_seconds", t.wall_seconds},
              {"iterations", t.iterations},           {"median_us", t.median_us},
              {"noise", t.noise},                     {"throughput_per_s", t.throughput_per_s},
              {"throughput_noise", t.throughput_noise}};
}

template <class T, class F>
json optional_to_json(const std::optional<T>& value, F convert) {
  return value ? convert(*value) : json(nullptr);
}

json result_to_json(const strategy_result& r) {
  json trials = json::array();
  for (const trial_figures& t : r.trials) trials.push_back(trial_to_json(t));
  return json{
      {"strategy", r.strategy},
      {"engine", r.engine},
      {"input_bytes", r.input_bytes},
      {"output_bytes", r.output_bytes},
      {"inflight", r.inflight},
      {"clients", r.clients},
      {"devices", r.devices},
      {"graph", r.graph},
      {"warmed_up", r.warmed_up},
      {"input_writes", r.input_writes},
      {"refused", r.refused ? json(*r.refused) : json(nullptr)},
      {"failed", r.failed},
      {"iterations", r.iterations},
      {"wall_seconds", r.wall_seconds},
      {"latency_us", stats_to_json(r.latency_us)},
      {"fill_us", stats_to_json(r.fill_us)},
      {"h2d_us", stats_to_json(r.h2d_us)},
      {"compute_us", stats_to_json(r.compute_us)},
      {"d2h_us", stats_to_json(r.d2h_us)},
      {"enqueue_us", stats_to_json(r.enqueue_us)},
      {"cold_first_us", r.cold_first_us},
      {"cold_first_percentile", r.cold_first_percentile},
      {"throughput_per_s", r.throughput_per_s},
      {"h2d_gbps", r.h2d_gbps},
      {"d2h_gbps", r.d2h_gbps},
      {"relative_iqr", r.relative_iqr},
      {"noise", r.noise},
      {"throughput_noise", r.throughput_noise},
      {"trial_noise", r.trial_noise},
      {"throughput_trial_noise", r.throughput_trial_noise},
      {"trials", trials},
      {"schedule", r.schedule},
      {"max_noise", r.max_noise},
      {"noisy", r.noisy},
      {"stopped", r.stopped},
      {"device_bytes_used", r.device_bytes_used},
      {"recipe", optional_to_json(r.recipe, side_to_json)},
      {"floor", optional_to_json(r.floor, side_to_json)},
      {"recipe_note", r.recipe_note},
      {"clocks", optional_to_json(r.clocks, clocks_to_json)},
      {"clocks_note", r.clocks_note},
      {"host_probe_us", r.host_probe_us},
      {"host_probe_spread", r.host_probe_spread},
      {"cuda_probe_us", r.cuda_probe_us},
      {"cuda_probe_spread", r.cuda_probe_spread},
      {"output_checked", r.output_checked},
      {"output_matches", r.output_matches},
      {"check_detail", r.check_detail},
      {"notes", r.notes},
      {"um", r.um ? um_to_json(*r.um) : json(nullptr)},
      {"um_note", r.um_note},
  };
}

json advice_to_json(const advice_check& c) {
  return json{{"engine", c.engine},
              {"input_bytes", c.input_bytes},
              {"picked", c.picked},
              {"best", c.best},
              {"picked_value", c.picked_value},
              {"best_value", c.best_value},
              {"shortfall", c.shortfall ? json(*c.shortfall) : json(nullptr)},
              {"noise", c.noise},
              {"note", c.note}};
}

json machine_to_json(const machine_info& m) {
  return json{{"gpu_name", m.gpu_name},
              {"platform", m.platform},
              {"pcie", m.pcie},
              {"driver_version", m.driver_version},
              {"runtime_version", m.runtime_version},
              {"link_peak_h2d_gbps", m.link_peak_h2d_gbps},
              {"link_peak_d2h_gbps", m.link_peak_d2h_gbps},
              {"host_probe_us", m.host_probe_us},
              {"cuda_probe_us", m.cuda_probe_us}};
}

// ---- reading ---------------------------------------------------------------------------------

// The value of `key` in `object`, or `fallback` when the key is absent. A present key of the
// wrong type throws (through nlohmann), which report_from_json turns into invalid_argument.
// JSON has no NaN or infinity (nlohmann writes them as null), so null reads back as NaN for
// floating-point fields rather than failing the whole report.
template <class T>
T field(const json& object, const char* key, T fallback = T{}) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  if constexpr (std::is_floating_point_v<T>) {
    if (it->is_null()) return std::numeric_limits<T>::quiet_NaN();
  }
  return it->get<T>();
}

// The object under `key`, or an empty object when absent (so its fields take their defaults).
const json& child(const json& object, const char* key) {
  static const json empty = json::object();
  const auto it = object.find(key);
  if (it == object.end()) return empty;
  if (!it->is_object()) throw invalid_argument(std::string("\"") + key + "\" is not an object");
  return *it;
}

sample_stats stats_from_json(const json& j) {
  sample_stats s;
  s.count = field<std::size_t>(j, "count");
  s.median = field<double>(j, "median");
  s.p90 = field<double>(j, "p90");
  s.p99 = field<double>(j, "p99");
  s.min = field<double>(j, "min");
  s.max = field<double>(j, "max");
  s.iqr = field<double>(j, "iqr");
  s.mean = field<double>(j, "mean");
  return s;
}

um_traffic um_from_json(const json& j) {
  um_traffic um;
  um.bytes_host_to_device = field<std::uint64_t>(j, "bytes_host_to_device");
  um.bytes_device_to_host = field<std::uint64_t>(j, "bytes_device_to_host");
  um.gpu_page_faults = field<std::uint64_t>(j, "gpu_page_faults");
  um.cpu_page_faults = field<std::uint64_t>(j, "cpu_page_faults");
  return um;
}

side_run side_from_json(const json& j) {
  side_run s;
  s.steps = field<std::string>(j, "steps");
  s.iterations = field<std::size_t>(j, "iterations");
  s.latency_us = stats_from_json(child(j, "latency_us"));
  s.noise = field<double>(j, "noise");
  s.output_checked = field<bool>(j, "output_checked");
  s.output_matches = field<bool>(j, "output_matches");
  s.check_detail = field<std::string>(j, "check_detail");
  return s;
}

trial_figures trial_from_json(const json& j) {
  if (!j.is_object()) throw invalid_argument("a trial is not an object");
  trial_figures t;
  t.started_seconds = field<double>(j, "started_seconds");
  t.wall_seconds = field<double>(j, "wall_seconds");
  t.iterations = field<std::size_t>(j, "iterations");
  t.median_us = field<double>(j, "median_us");
  t.noise = field<double>(j, "noise");
  t.throughput_per_s = field<double>(j, "throughput_per_s");
  t.throughput_noise = field<double>(j, "throughput_noise");
  return t;
}

clock_record clocks_from_json(const json& j) {
  clock_record c;
  c.sm_mhz_min = field<unsigned>(j, "sm_mhz_min");
  c.sm_mhz_max = field<unsigned>(j, "sm_mhz_max");
  c.mem_mhz_min = field<unsigned>(j, "mem_mhz_min");
  c.mem_mhz_max = field<unsigned>(j, "mem_mhz_max");
  c.throttle_reasons = field<std::vector<std::string>>(j, "throttle_reasons");
  c.samples = field<std::size_t>(j, "samples");
  c.changed = field<bool>(j, "changed");
  return c;
}

// An optional object under `key`: absent or null is nullopt.
template <class T, class F>
std::optional<T> optional_from_json(const json& object, const char* key, F convert) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) throw invalid_argument(std::string("\"") + key + "\" is neither null nor an object");
  return convert(*it);
}

strategy_result result_from_json(const json& j) {
  if (!j.is_object()) throw invalid_argument("a result is not an object");
  const strategy_result defaults;
  strategy_result r;
  r.strategy = field<std::string>(j, "strategy");
  r.engine = field<std::string>(j, "engine");
  r.input_bytes = field<std::size_t>(j, "input_bytes");
  r.output_bytes = field<std::size_t>(j, "output_bytes");
  r.inflight = field<int>(j, "inflight", defaults.inflight);
  r.clients = field<int>(j, "clients", defaults.clients);
  r.devices = field<std::vector<int>>(j, "devices", defaults.devices);  // absent before multi-GPU runs
  r.graph = field<bool>(j, "graph", defaults.graph);
  r.warmed_up = field<bool>(j, "warmed_up", defaults.warmed_up);
  // Not the default: reports from before the field existed wrote their inputs with ordinary stores.
  r.input_writes = field<std::string>(j, "input_writes", "cached");
  if (const auto it = j.find("refused"); it != j.end() && !it->is_null()) {
    r.refused = it->get<std::string>();
  }
  r.failed = field<bool>(j, "failed");
  r.iterations = field<std::size_t>(j, "iterations");
  r.wall_seconds = field<double>(j, "wall_seconds");
  r.latency_us = stats_from_json(child(j, "latency_us"));
  r.fill_us = stats_from_json(child(j, "fill_us"));
  r.h2d_us = stats_from_json(child(j, "h2d_us"));
  r.compute_us = stats_from_json(child(j, "compute_us"));
  r.d2h_us = stats_from_json(child(j, "d2h_us"));
  r.enqueue_us = stats_from_json(child(j, "enqueue_us"));
  r.cold_first_us = field<double>(j, "cold_first_us");
  r.cold_first_percentile = field<double>(j, "cold_first_percentile");
  r.throughput_per_s = field<double>(j, "throughput_per_s");
  r.h2d_gbps = field<double>(j, "h2d_gbps");
  r.d2h_gbps = field<double>(j, "d2h_gbps");
  r.relative_iqr = field<double>(j, "relative_iqr");
  r.noise = field<double>(j, "noise");
  r.throughput_noise = field<double>(j, "throughput_noise");
  r.trial_noise = field<double>(j, "trial_noise");
  r.throughput_trial_noise = field<double>(j, "throughput_trial_noise");
  if (const auto it = j.find("trials"); it != j.end()) {
    if (!it->is_array()) throw invalid_argument("\"trials\" is not an array");
    for (const json& t : *it) r.trials.push_back(trial_from_json(t));
  }
  r.schedule = field<std::string>(j, "schedule");
  r.max_noise = field<double>(j, "max_noise");
  r.noisy = field<bool>(j, "noisy");
  r.stopped = field<std::string>(j, "stopped");
  r.device_bytes_used = field<std::size_t>(j, "device_bytes_used");
  r.recipe = optional_from_json<side_run>(j, "recipe", side_from_json);
  r.floor = optional_from_json<side_run>(j, "floor", side_from_json);
  r.recipe_note = field<std::string>(j, "recipe_note");
  r.clocks = optional_from_json<clock_record>(j, "clocks", clocks_from_json);
  r.clocks_note = field<std::string>(j, "clocks_note");
  r.host_probe_us = field<double>(j, "host_probe_us");
  r.host_probe_spread = field<double>(j, "host_probe_spread");
  r.cuda_probe_us = field<double>(j, "cuda_probe_us");
  r.cuda_probe_spread = field<double>(j, "cuda_probe_spread");
  r.output_checked = field<bool>(j, "output_checked");
  r.output_matches = field<bool>(j, "output_matches");
  r.check_detail = field<std::string>(j, "check_detail");
  r.notes = field<std::vector<std::string>>(j, "notes");
  if (const auto it = j.find("um"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) throw invalid_argument("\"um\" is neither null nor an object");
    r.um = um_from_json(*it);
  }
  r.um_note = field<std::string>(j, "um_note");
  return r;
}

machine_info machine_from_json(const json& j) {
  machine_info m;
  m.gpu_name = field<std::string>(j, "gpu_name");
  m.platform = field<std::string>(j, "platform");
  m.pcie = field<std::string>(j, "pcie");
  m.driver_version = field<int>(j, "driver_version");
  m.runtime_version = field<int>(j, "runtime_version");
  m.link_peak_h2d_gbps = field<double>(j, "link_peak_h2d_gbps");
  m.link_peak_d2h_gbps = field<double>(j, "link_peak_d2h_gbps");
  m.host_probe_us = field<double>(j, "host_probe_us");
  m.cuda_probe_us = field<double>(j, "cuda_probe_us");
  return m;
}

advice_check advice_from_json(const json& j) {
  if (!j.is_object()) throw invalid_argument("an advice check is not a JSON object");
  advice_check c;
  c.engine = field<std::string>(j, "engine");
  c.input_bytes = field<std::size_t>(j, "input_bytes");
  c.picked = field<std::string>(j, "picked");
  c.best = field<std::string>(j, "best");
  c.picked_value = field<double>(j, "picked_value");
  c.best_value = field<double>(j, "best_value");
  if (const auto it = j.find("shortfall"); it != j.end() && !it->is_null()) c.shortfall = it->get<double>();
  c.noise = field<double>(j, "noise");
  c.note = field<std::string>(j, "note");
  return c;
}

bench_report report_from_json_unchecked(const json& j) {
  if (!j.is_object()) throw invalid_argument("the document is not a JSON object");
  const int version = field<int>(j, "schema_version", report_schema_version);
  if (version > report_schema_version) {
    throw invalid_argument("schema_version " + std::to_string(version) + " is newer than this ferry reads (" +
                           std::to_string(report_schema_version) + ")");
  }
  // Every report has its cells, even an empty run; `{}`, a calibration profile or another tool's
  // JSON is not a report, and comparing it would call nothing different without a word.
  if (!j.contains("results"))
    throw invalid_argument(j.contains("curves") ? "this is a calibration profile (ferry calibrate), not a bench report"
                                                : "this is not a ferry bench report: it has no \"results\"");
  bench_report report;
  report.date = field<std::string>(j, "date");
  report.command = field<std::string>(j, "command");
  report.machine = machine_from_json(child(j, "machine"));
  if (const auto it = j.find("results"); it != j.end()) {
    if (!it->is_array()) throw invalid_argument("\"results\" is not an array");
    for (const json& result : *it) report.results.push_back(result_from_json(result));
  }
  report.objective = field<std::string>(j, "objective");
  report.winner = field<std::string>(j, "winner");
  report.recommendation = field<std::string>(j, "recommendation");
  if (const auto it = j.find("advice_checks"); it != j.end()) {
    if (!it->is_array()) throw invalid_argument("\"advice_checks\" is not an array");
    for (const json& check : *it) report.advice_checks.push_back(advice_from_json(check));
  }
  return report;
}

}  // namespace

nlohmann::json to_json(const bench_report& report) {
  json results = json::array();
  for (const strategy_result& r : report.results) results.push_back(result_to_json(r));
  json doc{{"schema_version", report_schema_version},
           {"date", report.date},
           {"command", report.command},
           {"machine", machine_to_json(report.machine)},
           {"objective", report.objective},
           {"winner", report.winner},
           {"recommendation", report.recommendation},
           {"results", std::move(results)}};
  if (!report.advice_checks.empty()) {
    json checks = json::array();
    for (const advice_check& c : report.advice_checks) checks.push_back(advice_to_json(c));
    doc["advice_checks"] = std::move(checks);
  }
  return doc;
}

bench_report report_from_json(const nlohmann::json& json) {
  try {
    return report_from_json_unchecked(json);
  } catch (const invalid_argument& e) {
    throw invalid_argument(std::string("bench report JSON: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    // Type errors from get<T>(): say which report it was, keep nlohmann's description.
    throw invalid_argument(std::string("bench report JSON: ") + e.what());
  }
}

}  // namespace ferry::bench
