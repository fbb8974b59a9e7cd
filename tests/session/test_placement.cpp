// The load-spreading rule of replica_set (placement.hpp), on synthetic loads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "ferry/core/error.hpp"
#include "ferry/session/placement.hpp"

namespace {

using ferry::placement_policy;
using ferry::replica_load;

TEST(Placement, LeastLoadedReplicaWins) {
  placement_policy p;
  const std::vector<replica_load> loads{{0, 3, 4}, {1, 1, 4}, {2, 2, 4}};
  EXPECT_EQ(p.pick(loads), 1U);
}

TEST(Placement, TiesGoRoundRobin) {
  placement_policy p;
  const std::vector<replica_load> idle{{0, 0, 2}, {1, 0, 2}};
  // Equal loads: the two replicas take turns instead of GPU 0 taking everything.
  EXPECT_EQ(p.pick(idle), 0U);
  EXPECT_EQ(p.pick(idle), 1U);
  EXPECT_EQ(p.pick(idle), 0U);
  const std::vector<replica_load> three{{0, 1, 2}, {1, 1, 2}, {2, 1, 2}};
  placement_policy q;
  EXPECT_EQ(q.pick(three), 0U);
  EXPECT_EQ(q.pick(three), 1U);
  EXPECT_EQ(q.pick(three), 2U);
  EXPECT_EQ(q.pick(three), 0U);
}

TEST(Placement, SimulatedClientsFillEveryReplicaEvenly) {
  // Acquire without releasing: slots fill replica by replica in alternation.
  placement_policy p;
  std::vector<replica_load> loads{{0, 0, 3}, {1, 0, 3}};
  for (int k = 0; k < 6; ++k) {
    const auto pick = p.pick(loads);
    ASSERT_TRUE(pick.has_value());
    ++loads[*pick].busy;
    EXPECT_LE(std::abs(loads[0].busy - loads[1].busy), 1) << "after " << k + 1 << " acquisitions";
  }
  EXPECT_EQ(loads[0].busy, 3);
  EXPECT_EQ(loads[1].busy, 3);
  EXPECT_FALSE(p.pick(loads).has_value()) << "every slot is in use: the caller must wait";
}

TEST(Placement, FullReplicasAreSkipped) {
  placement_policy p;
  // Fewer slots in use on GPU 0, but it has none left (a smaller replica).
  const std::vector<replica_load> loads{{0, 1, 1}, {1, 3, 4}};
  EXPECT_EQ(p.pick(loads), 1U);
}

TEST(Placement, PreferredReplicaWithAFreeSlotWinsEvenWhenBusier) {
  placement_policy p;
  const std::vector<replica_load> loads{{0, 0, 4}, {1, 3, 4}};
  EXPECT_EQ(p.pick(loads, 1), 1U);
  EXPECT_EQ(p.pick(loads, 0), 0U);
}

TEST(Placement, FullPreferredReplicaYieldsOnlyToAnIdleOne) {
  placement_policy p;
  const std::vector<replica_load> other_idle{{0, 0, 4}, {1, 4, 4}};
  EXPECT_EQ(p.pick(other_idle, 1), 0U);
  const std::vector<replica_load> other_busy{{0, 2, 4}, {1, 4, 4}};
  EXPECT_FALSE(p.pick(other_busy, 1).has_value()) << "a busy GPU is not worth a peer copy: wait";
  const std::vector<replica_load> several{{0, 1, 4}, {1, 4, 4}, {2, 0, 4}};
  EXPECT_EQ(p.pick(several, 1), 2U);
}

TEST(Placement, PreferenceOutsideTheSetAndBadLoadsAreErrors) {
  placement_policy p;
  const std::vector<replica_load> loads{{0, 0, 2}, {1, 0, 2}};
  EXPECT_THROW((void)p.pick(loads, 5), ferry::invalid_argument);
  EXPECT_THROW((void)p.pick(std::vector<replica_load>{}), ferry::invalid_argument);
  EXPECT_THROW((void)p.pick(std::vector<replica_load>{{0, 3, 2}}), ferry::invalid_argument);
  EXPECT_THROW((void)p.pick(std::vector<replica_load>{{0, 0, 0}}), ferry::invalid_argument);
  EXPECT_THROW((void)p.pick(std::vector<replica_load>{{0, -1, 2}}), ferry::invalid_argument);
}

TEST(Placement, SingleReplicaIsAlwaysThePickUntilFull) {
  placement_policy p;
  EXPECT_EQ(p.pick(std::vector<replica_load>{{3, 0, 2}}), 0U);
  EXPECT_EQ(p.pick(std::vector<replica_load>{{3, 1, 2}}, 3), 0U);
  EXPECT_FALSE(p.pick(std::vector<replica_load>{{3, 2, 2}}).has_value());
}

}  // namespace
