#include "unknown_option.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>

namespace ferry::cli {
namespace {

// Edits between two names: insertions, deletions, changes, and two neighbours swapped ("sise"
// and "szie" are both one from "size").
std::size_t edits(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t change = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + change});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

const CLI::App* subcommand_named(const CLI::App& app, const std::string& word) {
  const auto found =
      app.get_subcommands([&](const CLI::App* sub) { return !sub->get_name().empty() && sub->check_name(word); });
  return found.empty() ? nullptr : found.front();
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    names.push_back(sub->get_name());
  return names;
}

const CLI::Option* long_option(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* option : app.get_options()) {
    const auto& names = option->get_lnames();
    if (std::find(names.begin(), names.end(), name) != names.end()) return option;
  }
  return nullptr;
}

std::string unknown_long_option(const CLI::App& app, const std::string& typed) {
  std::vector<std::string> known;
  std::vector<const CLI::Option*> owners;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;  // hidden: never suggested
    for (const auto& name : option->get_lnames()) {
      known.push_back(name);
      owners.push_back(option);
    }
  }
  std::string line = "unknown option --" + typed;
  const auto nearest = nearest_name(typed, known);
  if (!nearest) return line;
  line += "; did you mean --" + *nearest + "?";
  const CLI::Option* meant =
      owners[static_cast<std::size_t>(std::find(known.begin(), known.end(), *nearest) - known.begin())];
  if (meant->get_required() && meant->count() == 0) line += " --" + *nearest + " is required";
  return line;
}

}  // namespace

std::optional<std::string> nearest_name(std::string_view typed, const std::vector<std::string>& known) {
  if (typed.empty()) return std::nullopt;
  // An abbreviation: the first name it begins ("--model-repo" for --model-repository).
  if (typed.size() >= 3) {
    for (const auto& name : known)
      if (name.size() > typed.size() && name.compare(0, typed.size(), typed) == 0) return name;
  }
  // A typo: few edits for the name's length (one in a short name, a third of a long one's letters).
  const std::size_t allowed = std::max<std::size_t>(1, typed.size() / 3);
  std::optional<std::string> best;
  std::size_t fewest = allowed + 1;
  for (const auto& name : known) {
    const std::size_t n = edits(typed, name);
    if (n < fewest) {
      fewest = n;
      best = name;
    }
  }
  return best;
}

std::optional<std::string> unknown_option_message(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* command = &app;
  int values_next = 0;  // words the previous option takes as its values (-1: as many as come)
  for (const auto& arg : args) {
    if (arg == "--") break;  // what follows is not options
    if (arg.size() > 2 && arg.starts_with("--")) {
      const auto equals = arg.find('=');
      const std::string name = arg.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
      const CLI::Option* option = long_option(*command, name);
      if (option == nullptr) return unknown_long_option(*command, name) + " (--help lists the flags)";
      values_next = equals != std::string::npos || option->get_type_size_max() <= 0 ? 0
                    : option->get_expected_max() > 1                                ? -1
                                                                                    : 1;
      continue;
    }
    if (values_next != 0 && !arg.starts_with('-')) {  // a value of the option before
      if (values_next > 0) --values_next;
      continue;
    }
    values_next = 0;
    if (arg.empty() || arg.front() == '-') continue;  // a short option, a negative number or "-"
    if (const CLI::App* sub = subcommand_named(*command, arg)) {
      command = sub;
      continue;
    }
    // A word where only a command can stand: the command has commands and takes no words itself.
    const auto names = subcommand_names(*command);
    const bool takes_words = !command->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
    if (names.empty() || takes_words) continue;
    std::string line = "unknown command '" + arg + "'";
    if (const auto nearest = nearest_name(arg, names)) line += "; did you mean " + *nearest + "?";
    return line + " (--help lists the commands)";
  }
  return std::nullopt;
}

}  // namespace ferry::cli
