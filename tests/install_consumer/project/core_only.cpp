// Uses only ferry::core, the base layer: what a program gets without strategies or engines.
#include <iostream>

#include <ferry/core/byte_size.hpp>
#include <ferry/core/dtype.hpp>

int main() {
  std::cout << ferry::parse_byte_size("64MiB") << ' ' << ferry::to_string(ferry::dtype::u8) << '\n';
  return 0;
}
