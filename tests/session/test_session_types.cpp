// The session's ownership rules are enforced by types; these assertions fail to compile if the
// API ever lets the CPU write inputs after submit or read outputs before the request completed.
#include <gtest/gtest.h>

#include <type_traits>

#include "ferry/session/session.hpp"

namespace {

using ferry::completed_slot;
using ferry::filling_slot;
using ferry::pending_slot;

template <class T>
concept can_write_inputs = requires(T& s) {
  s.input(std::size_t{0});
};
template <class T>
concept can_read_outputs = requires(const T& s) {
  s.output(std::size_t{0});
};
template <class T>
concept can_submit_lvalue = requires(T& s) {
  s.submit();
};
template <class T>
concept can_wait_lvalue = requires(T& s) {
  s.wait();
};

TEST(SessionTypes, InputsAreWritableOnlyWhileFilling) {
  static_assert(can_write_inputs<filling_slot>);
  static_assert(!can_write_inputs<pending_slot>);
  static_assert(!can_write_inputs<completed_slot>);
  SUCCEED();
}

TEST(SessionTypes, OutputsAreReadableOnlyOnceCompleted) {
  static_assert(can_read_outputs<completed_slot>);
  static_assert(!can_read_outputs<filling_slot>);
  static_assert(!can_read_outputs<pending_slot>);
  SUCCEED();
}

TEST(SessionTypes, SubmitAndWaitConsumeTheHandle) {
  // submit() and wait() are rvalue-qualified: the old handle cannot be used by accident.
  static_assert(!can_submit_lvalue<filling_slot>);
  static_assert(!can_wait_lvalue<pending_slot>);
  static_assert(!std::is_copy_constructible_v<filling_slot>);
  static_assert(!std::is_copy_constructible_v<pending_slot>);
  static_assert(!std::is_copy_constructible_v<completed_slot>);
  static_assert(std::is_move_constructible_v<completed_slot>);
  SUCCEED();
}

}  // namespace
