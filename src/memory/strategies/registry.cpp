// The registry of strategies: the types registered.def lists, in its order, each at the
// strategy_kind of its place. Adding a strategy is its folder, strategies/<name>/, and its line in
// registered.def; nothing else names it (the build compiles every strategies/*/*.cpp).
#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "memory/strategy_type.hpp"

namespace ferry::memory {

namespace strategies {
#define STRATEGY(name) const strategy_type& name();
#include "memory/strategies/registered.def"
#undef STRATEGY
}  // namespace strategies

namespace {

struct registry {
  std::vector<const strategy_type*> types;
  std::vector<strategy_kind> kinds;  // 0, 1, 2, ...: what all_strategies reads
};

const registry& the_registry() {
  static const registry r = [] {
    registry out;
#define STRATEGY(name) out.types.push_back(&strategies::name());
#include "memory/strategies/registered.def"
#undef STRATEGY
    for (std::size_t i = 0; i < out.types.size(); ++i) out.kinds.push_back(static_cast<strategy_kind>(i));
    return out;
  }();
  return r;
}

}  // namespace

const strategy_type* find_type(strategy_kind k) noexcept {
  const auto& types = the_registry().types;
  const auto i = static_cast<std::size_t>(k);
  return i < types.size() ? types[i] : nullptr;
}

const strategy_type& type_of(strategy_kind k) {
  if (const strategy_type* t = find_type(k)) return *t;
  throw invalid_argument("no strategy is registered at value " + std::to_string(static_cast<int>(k)));
}

}  // namespace ferry::memory

namespace ferry {

std::span<const strategy_kind> strategy_list::view() const noexcept { return memory::the_registry().kinds; }

}  // namespace ferry
