// Uses ferry through its installed package; prints a strategy name parsed by the library.
#include <iostream>

#include <ferry/memory/strategy.hpp>

int main() {
  std::cout << ferry::to_string(ferry::parse_strategy("managed-prefetch")) << '\n';
  return 0;
}
