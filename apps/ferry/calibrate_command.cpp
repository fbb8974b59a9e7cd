// `ferry calibrate`'s flags; the run itself is ferry::frontend's run_calibrate (src/frontend).
#include <memory>
#include <string>

#include "commands.hpp"
#include "device_option.hpp"
#include "ferry/frontend/calibrate_run.hpp"

namespace ferry::cli {

void add_calibrate_command(CLI::App& app) {
  struct parsed {
    bool quick = false;
    bool thorough = false;
    int device = 0;
    std::string profile;
    CLI::Option* device_option = nullptr;
  };
  auto flags = std::make_shared<parsed>();
  CLI::App* cmd = app.add_subcommand("calibrate",
                                     "measure every strategy on this machine (64 KiB to 64 MiB, 256 MiB with "
                                     "--thorough; inputs read once and re-read, "
                                     "outputs, in-flight depth) and save each GPU's profile for info, bench and serve");
  auto* quick = cmd->add_flag("--quick", flags->quick, "fewer sizes and requests: seconds instead of tens of them");
  cmd->add_flag("--thorough", flags->thorough, "more sizes, each until its median is known within 2%")->excludes(quick);
  flags->device_option = add_device_option(*cmd, flags->device, "calibrate only this GPU", "every GPU");
  cmd->add_option("--profile", flags->profile,
                  "save to this file instead of $XDG_CACHE_HOME/ferry/profiles/<GPU UUID>.json");
  cmd->callback([flags] {
    frontend::calibrate_options options;
    options.depth = flags->quick      ? bench::sweep_depth::quick
                    : flags->thorough ? bench::sweep_depth::thorough
                                      : bench::sweep_depth::standard;
    if (flags->device_option->count() > 0) options.device = flags->device;
    if (!flags->profile.empty()) options.profile = flags->profile;
    (void)frontend::run_calibrate(options);
  });
}

}  // namespace ferry::cli
