// The ferry CLI as a new user meets it, with or without a GPU: `ferry help COMMAND`, help pages
// written in words rather than in the parser's notation, `--device` alike in every command, the
// refusals of a wrong flag or value: one line, naming the problem, exit code 2, before any GPU is
// looked for, and a mistyped flag or command named with the one it was nearest.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_runner.hpp"

namespace {

#define REQUIRE_CLI() \
  if (!cli_built) GTEST_SKIP() << "the ferry CLI is not built (FERRY_BUILD_APPS=OFF)"

// The commands whose pages are checked; serve where this build has it.
std::vector<std::string> commands() {
  std::vector<std::string> names{"info", "calibrate", "bench", "bench compare"};
  if (run_cli("--help", captured::stdout_only).output.find("\n  serve ") != std::string::npos)
    names.emplace_back("serve");
  return names;
}

// The help page's entry of `flag`: its line, and the description's line below where the name and
// value take the whole left column.
std::string line_of(const std::string& page, const std::string& flag) {
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  " + flag + " ", 0) != 0 && line != "  " + flag) continue;
    std::string next;
    if (std::getline(lines, next) && next.rfind(std::string(30, ' '), 0) == 0) line += next;
    return line;
  }
  return {};
}

TEST(CliHelp, HelpCommandShowsTheCommandsOwnPage) {
  REQUIRE_CLI();
  for (const auto& command : commands()) {
    const auto by_help = run_cli("help " + command, captured::both);
    EXPECT_EQ(by_help.exit_code, 0) << command << ": " << by_help.output;
    EXPECT_NE(by_help.output.find("Usage: ferry " + command + " [OPTIONS]"), std::string::npos) << by_help.output;
    EXPECT_EQ(by_help.output, run_cli(command + " --help", captured::both).output) << command;
  }
}

TEST(CliHelp, HelpOfAnUnknownCommandIsAMistake) {
  REQUIRE_CLI();
  EXPECT_EQ(run_cli("help --help", captured::both).exit_code, 0);  // a flag, not a command
  const auto result = run_cli("help frobnicate", captured::stderr_only);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_EQ(result.output, "ferry: no command 'frobnicate' (`ferry help` lists them)\n");
}

// Names as typed, values as words, ranges and defaults in words: nothing of CLI11's notation
// ("--warmup,--no-warmup{false}", "INT:INT in [1 - 1024]", "TEXT:{a,b}", "=0", "Excludes:").
TEST(CliHelp, PagesShowNoParserNotation) {
  REQUIRE_CLI();
  const std::regex notation(
      R"(\{(true|false)\}|\b(U?INT|FLOAT|TEXT|BOOLEAN)[:=]|Excludes:|[A-Z]+ in \[\S+ - \S+\]|\bUINT\b)");
  for (const auto& command : commands()) {
    const auto page = run_cli(command + " --help", captured::stdout_only).output;
    std::smatch found;
    EXPECT_FALSE(std::regex_search(page, found, notation)) << command << ": '" << found.str() << "' in\n" << page;
  }
  const auto bench = run_cli("bench --help", captured::stdout_only).output;
  EXPECT_NE(line_of(bench, "--warmup, --no-warmup").find("warm every slot up"), std::string::npos) << bench;
  EXPECT_NE(line_of(bench, "--clients").find("--clients INT"), std::string::npos) << bench;
  EXPECT_NE(line_of(bench, "--clients").find("[1 to 1024]"), std::string::npos) << bench;
  EXPECT_NE(line_of(bench, "--objective").find("--objective latency|throughput"), std::string::npos) << bench;
  const auto calibrate = run_cli("calibrate --help", captured::stdout_only).output;
  EXPECT_NE(line_of(calibrate, "--quick").find("[not with --thorough]"), std::string::npos) << calibrate;
}

TEST(CliHelp, DeviceIsTheSameFlagInEveryCommand) {
  REQUIRE_CLI();
  const std::string said = "by its ordinal (0 is the first GPU, as `ferry info` numbers them; without --device: ";
  for (const char* command : {"info", "calibrate", "bench"}) {
    const auto line = line_of(run_cli(std::string(command) + " --help", captured::stdout_only).output, "--device");
    EXPECT_EQ(line.rfind("  --device ORDINAL ", 0), 0U) << command << ": " << line;
    EXPECT_NE(line.find(said), std::string::npos) << command << ": " << line;
    const auto refused = run_cli(std::string(command) + " --device -1", captured::stderr_only);
    EXPECT_EQ(refused.exit_code, 2) << command << ": " << refused.output;
    EXPECT_EQ(refused.output, "ferry: --device: a GPU ordinal is 0 or more, not -1 (--help lists the flags)\n")
        << command;
  }
}

TEST(CliHelp, ServePortsShowTheirDefaults) {
  REQUIRE_CLI();
  const auto all = commands();
  if (std::find(all.begin(), all.end(), "serve") == all.end()) GTEST_SKIP() << "ferry serve is not built";
  const auto page = run_cli("serve --help", captured::stdout_only).output;
  EXPECT_NE(line_of(page, "--http-port").find("[0 to 65535; default 8000]"), std::string::npos) << page;
  EXPECT_NE(line_of(page, "--grpc-port").find("[0 to 65535; default 8001]"), std::string::npos) << page;
  EXPECT_NE(line_of(page, "--strict-readiness").find("[default true]"), std::string::npos) << page;
}

// --- refusals: one line, naming the problem, exit 2, whether or not there is a GPU ---------------

struct refusal {
  std::string args;
  std::vector<std::string> says;
};

TEST(CliRefusals, WrongValuesAreNamedInOneLineWithExitTwo) {
  REQUIRE_CLI();
  const std::vector<refusal> refusals{
      {"bench --strategy bogus",
       {"ferry: --strategy 'bogus': unknown strategy 'bogus'; valid: pageable, staged, pinned,",
        "or 'all' (every strategy) or 'auto' (the one this GPU's profile picks)"}},
      {"bench --engine bogus",
       {"ferry: engine 'bogus': unknown workload; expected a built-in one, touch, reduce,",
        "or a model file BACKEND:PATH (torch:model.pt2, trt:model.plan, ...)"}},
      // A model file that is not there is named before any GPU is looked for.
      {"bench --engine torch:missing.pt2",
       {"ferry: engine 'torch:missing.pt2': the model file 'missing.pt2' does not exist (relative to "}},
      {"bench --engine reduce,torch:/nonexistent/model.pt2 --strategy pinned",
       {"ferry: engine 'torch:/nonexistent/model.pt2': the model file '/nonexistent/model.pt2' does not exist\n"}},
      // CLI11's own refusals, in the one-line form (the words between are CLI11's).
      {"bench --objective fastest", {"ferry: --objective: ", "fastest", " (--help lists the flags)"}},
      {"serve --model-repository /nonexistent-repository",
       {"ferry: --model-repository: ", "/nonexistent-repository", " (--help lists the flags)"}},
  };
  for (const auto& r : refusals) {
    if (r.args.rfind("serve", 0) == 0 &&
        run_cli("--help", captured::stdout_only).output.find("\n  serve ") == std::string::npos)
      continue;
    const auto result = run_cli(r.args, captured::stderr_only);
    EXPECT_EQ(result.exit_code, 2) << r.args << ": " << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << r.args << ": " << result.output;
    for (const auto& phrase : r.says)
      EXPECT_NE(result.output.find(phrase), std::string::npos) << r.args << ": " << result.output;
    EXPECT_EQ(result.output.find("no CUDA device"), std::string::npos) << r.args << ": " << result.output;
  }
}

// --- typos: a mistyped flag or command is named with the nearest known one ----------------------

// The long options a command's help page lists ("--warmup, --no-warmup" gives both).
std::vector<std::string> flags_of(const std::string& command) {
  std::vector<std::string> flags;
  const std::regex name(R"((?:^  |, )--([a-z0-9-]+))");
  std::istringstream lines(run_cli(command + " --help", captured::stdout_only).output);
  for (std::string line; std::getline(lines, line);)
    for (auto it = std::sregex_iterator(line.begin(), line.end(), name); it != std::sregex_iterator(); ++it)
      flags.push_back((*it)[1]);
  return flags;
}

TEST(CliTypos, EveryCommandNamesTheFlagATypoMeant) {
  REQUIRE_CLI();
  for (const auto& command : commands()) {
    const auto flags = flags_of(command);
    EXPECT_GE(flags.size(), 2U) << command;
    for (const auto& flag : flags) {
      if (flag.size() < 5 || flag == "help") continue;
      std::string typo = flag;
      typo.erase(typo.size() / 2, 1);  // a letter left out in the middle
      if (std::find(flags.begin(), flags.end(), typo) != flags.end()) continue;
      const auto result = run_cli(command + " --" + typo, captured::stderr_only);
      EXPECT_EQ(result.exit_code, 2) << command << " --" << typo << ": " << result.output;
      const std::string said = "ferry: unknown option --" + typo + "; did you mean --" + flag + "?";
      EXPECT_EQ(result.output.rfind(said, 0), 0U) << command << " --" << typo << ": " << result.output;
      EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
    }
  }
}

TEST(CliTypos, TheIssuesOwnExamples) {
  REQUIRE_CLI();
  const std::vector<std::pair<std::string, std::string>> typed{
      {"bench --sise 19MB", "ferry: unknown option --sise; did you mean --size? (--help lists the flags)\n"},
      {"bench --engine reduce --size=19MB --sise=2MB",
       "ferry: unknown option --sise; did you mean --size? (--help lists the flags)\n"},
      {"info --jsno", "ferry: unknown option --jsno; did you mean --json? (--help lists the flags)\n"},
      {"bench compare a.json b.json --fail-abov 5",  // before CLI11's "File does not exist: a.json"
       "ferry: unknown option --fail-abov; did you mean --fail-above? (--help lists the flags)\n"},
      {"bench --frobnicate", "ferry: unknown option --frobnicate (--help lists the flags)\n"},  // nothing near
      {"bnch", "ferry: unknown command 'bnch'; did you mean bench? (--help lists the commands)\n"},
      {"bench compre a.json b.json",
       "ferry: unknown command 'compre'; did you mean compare? (--help lists the commands)\n"},
  };
  for (const auto& [args, said] : typed) {
    const auto result = run_cli(args, captured::stderr_only);
    EXPECT_EQ(result.exit_code, 2) << args;
    EXPECT_EQ(result.output, said) << args;
  }
}

TEST(CliTypos, AMisspelledRequiredFlagSaysBoth) {
  REQUIRE_CLI();
  const auto all = commands();
  if (std::find(all.begin(), all.end(), "serve") == all.end()) GTEST_SKIP() << "ferry serve is not built";
  for (const char* typo : {"--model-repo", "--model-repositry", "--model-repo=examples/models"}) {
    const auto result = run_cli(std::string("serve ") + typo + " x", captured::stderr_only);
    EXPECT_EQ(result.exit_code, 2) << typo;
    const std::string name = std::string(typo).substr(2, std::string(typo).find('=') - 2);
    EXPECT_EQ(result.output, "ferry: unknown option --" + name +
                                 "; did you mean --model-repository? --model-repository is required (--help lists "
                                 "the flags)\n")
        << typo;
  }
  // Given as well, the flag meant is not said to be missing.
  const auto both = run_cli("serve --model-repository /nonexistent-repository --http-prt 1", captured::stderr_only);
  EXPECT_EQ(both.output, "ferry: unknown option --http-prt; did you mean --http-port? (--help lists the flags)\n");
}

}  // namespace
