// replica_set refuses a device list it cannot build replicas from before touching any GPU.
#include <gtest/gtest.h>

#include <string>

#include "ferry/core/error.hpp"
#include "ferry/session/replica_set.hpp"
#include "support/synthetic_caps.hpp"

namespace {

TEST(ReplicaSetArguments, EmptyAndRepeatedDeviceListsAreRefusedBeforeAnyEngineIsMade) {
  int engines_made = 0;
  const ferry::engine_factory factory = [&](int) -> std::unique_ptr<ferry::engine> {
    ++engines_made;
    return nullptr;
  };
  EXPECT_THROW(ferry::replica_set({}, factory, {}, {}), ferry::invalid_argument);
  auto gpu0 = ferry::testing::h200_like();
  try {
    ferry::replica_set set({gpu0, gpu0}, factory, {}, {});
    FAIL() << "a repeated GPU was accepted";
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 0 twice"), std::string::npos) << e.what();
  }
  EXPECT_EQ(engines_made, 0);
}

}  // namespace
