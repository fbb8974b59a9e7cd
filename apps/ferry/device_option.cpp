#include "device_option.hpp"

namespace ferry::cli {

CLI::Option* add_device_option(CLI::App& command, int& device, const std::string& role, const std::string& unset) {
  return command
      .add_option(
          "--device", device,
          role + ", by its ordinal (0 is the first GPU, as `ferry info` numbers them; without --device: " + unset + ")")
      ->type_name("ORDINAL")
      ->check(CLI::Validator(
          [](const std::string& value) {
            return value.starts_with('-') ? "a GPU ordinal is 0 or more, not " + value : std::string{};
          },
          ""));
}

}  // namespace ferry::cli
