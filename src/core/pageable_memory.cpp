#include "core/pageable_memory.hpp"

#include <unistd.h>

#include <cstdlib>
#include <new>

namespace ferry::core {
namespace {
std::size_t page_size() {
  static const auto size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

void free_pageable(void* p) noexcept { std::free(p); }  // NOLINT: pairs with aligned_alloc

pageable_memory allocate_pageable(std::size_t bytes) {
  const std::size_t page = page_size();
  void* p = std::aligned_alloc(page, round_up(bytes, page));  // NOLINT: freed by free_pageable
  if (p == nullptr) throw std::bad_alloc();
  return {p, bytes};
}

}  // namespace ferry::core
