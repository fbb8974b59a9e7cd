#include "help_formatter.hpp"

#include <regex>
#include <vector>

namespace ferry::cli {
namespace {

// CLI11 writes an option's type followed by each check's description, separated by ':'
// ("INT:INT in [1 - 1024]", "TEXT:{latency,throughput}", "TEXT:DIR"): the parts, type first.
std::vector<std::string> type_parts(const CLI::Option* option) {
  std::vector<std::string> parts;
  const std::string text = option->get_type_name();
  std::size_t start = 0;
  // A choice list may hold ':' itself ("{a:b}"); it is one part to its closing brace.
  while (start <= text.size()) {
    std::size_t end = text.find(':', start);
    if (start < text.size() && text[start] == '{') {
      const std::size_t close = text.find('}', start);
      end = close == std::string::npos ? close : close + 1;
    }
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// "{latency,throughput}" -> "latency|throughput"; empty for anything else.
std::string choices(const std::string& part) {
  if (part.size() < 2 || part.front() != '{' || part.back() != '}') return {};
  std::string out = part.substr(1, part.size() - 2);
  for (char& c : out)
    if (c == ',') c = '|';
  return out;
}

// "INT in [1 - 1024]" -> "1 to 1024"; empty for anything else. Checks that are only a sign
// (POSITIVE, NONNEGATIVE) say nothing a user would miss, and a wrong value is refused by name.
std::string range(const std::string& part) {
  static const std::regex pattern(R"(^\w+ in \[(\S+) - (\S+)\]$)");
  std::smatch found;
  return std::regex_match(part, found, pattern) ? found[1].str() + " to " + found[2].str() : std::string();
}

}  // namespace

std::string help_formatter::make_option_name(const CLI::Option* option, bool is_positional) const {
  if (is_positional) return option->get_name(true, false);
  std::string names;
  for (const auto& s : option->get_snames()) names += (names.empty() ? "-" : ", -") + s;
  for (const auto& l : option->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  return names;
}

std::string help_formatter::make_option_opts(const CLI::Option* option) const {
  if (!option->get_option_text().empty()) return " " + option->get_option_text();
  if (option->get_type_size() == 0) return "";  // a flag takes no value
  const auto parts = type_parts(option);
  std::string value = parts.front() == "UINT" ? "INT" : parts.front();
  if (value == "BOOLEAN") value = "true|false";
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (const std::string listed = choices(parts[i]); !listed.empty()) value = listed;
    if (parts[i] == "DIR" || parts[i] == "FILE") value = parts[i];
  }
  std::string out = " " + value;
  if (option->get_expected_max() == CLI::detail::expected_max_vector_size) {
    out += " ...";
  } else if (option->get_expected_min() > 1) {
    out += " x " + std::to_string(option->get_expected_min());
  }
  if (option->get_required()) out += " REQUIRED";
  return out;
}

std::string help_formatter::make_option_desc(const CLI::Option* option) const {
  std::vector<std::string> facts;
  const auto parts = type_parts(option);
  for (std::size_t i = 1; i < parts.size(); ++i)
    if (const std::string r = range(parts[i]); !r.empty()) facts.push_back(r);
  if (option->get_type_size() != 0 && !option->get_default_str().empty())
    facts.push_back("default " + option->get_default_str());
  for (const auto* other : option->get_excludes()) facts.push_back("not with " + other->get_name());
  std::string text = option->get_description();
  if (facts.empty()) return text;
  std::string joined;
  for (const auto& f : facts) joined += (joined.empty() ? "" : "; ") + f;
  return text + " [" + joined + "]";
}

}  // namespace ferry::cli
