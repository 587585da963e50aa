// The neighbor table's state machine over a stepped clock.
#include <gtest/gtest.h>

#include "dataplane/control/vxlan/neighbor_table.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using Clock = NeighborTable::Clock;

const Ipv4Address kHop = *Ipv4Address::parse("192.168.77.254");
const MacAddress kMac = *MacAddress::parse("02:aa:00:00:00:01");

TEST(NeighborTable, AsksUntilAnsweredThenRefreshesAndForgets) {
  NeighborTable t;  // reachable 30 s, retry 1 s, stale 3 s
  const Clock::time_point t0{};
  bool changed = false;
  t.setWanted({kHop});
  EXPECT_EQ(t.due(t0, &changed), std::vector<Ipv4Address>{kHop});
  EXPECT_TRUE(t.due(t0 + 500ms, &changed).empty()) << "retry interval not over";
  EXPECT_EQ(t.due(t0 + 1s, &changed).size(), 1u);
  EXPECT_FALSE(t.lookup(kHop));
  EXPECT_TRUE(t.learn(kHop, kMac, t0 + 1100ms));
  EXPECT_FALSE(t.learn(kHop, kMac, t0 + 1200ms)) << "same MAC: no change";
  EXPECT_EQ(t.lookup(kHop), kMac);
  EXPECT_TRUE(t.due(t0 + 20s, &changed).empty()) << "reachable: not asked";
  // Stale after 30 s: still used, asked again.
  EXPECT_EQ(t.due(t0 + 1200ms + 30s, &changed).size(), 1u);
  EXPECT_FALSE(changed);
  EXPECT_EQ(t.lookup(kHop), kMac);
  EXPECT_EQ(t.list(t0 + 1200ms + 30s)[0].state, NeighborTable::State::kStale);
  // No answer for 3 more seconds: forgotten.
  EXPECT_EQ(t.due(t0 + 1200ms + 33s, &changed).size(), 1u);
  EXPECT_TRUE(changed);
  EXPECT_FALSE(t.lookup(kHop));
  EXPECT_EQ(t.list(t0 + 40s)[0].requests, 4u);  // t0, +1 s, stale +31.2 s, +34.2 s
}

TEST(NeighborTable, UnwantedAnswersAreIgnoredAndStaticOverrides) {
  NeighborTable t;
  const Clock::time_point t0{};
  EXPECT_FALSE(t.learn(kHop, kMac, t0)) << "not wanted: no poisoning by unsolicited ARP";
  EXPECT_FALSE(t.lookup(kHop));
  t.setStatic(kHop, kMac);
  t.setWanted({kHop});
  bool changed = false;
  EXPECT_TRUE(t.due(t0 + 1h, &changed).empty()) << "static: never asked";
  EXPECT_FALSE(t.learn(kHop, *MacAddress::parse("02:bb:00:00:00:01"), t0)) << "static wins over ARP";
  EXPECT_EQ(t.lookup(kHop), kMac);
  EXPECT_FALSE(t.setWanted({}));
  EXPECT_EQ(t.lookup(kHop), kMac) << "static entries stay";
}

TEST(NeighborTable, DroppingAWantedAddressForgetsIt) {
  NeighborTable t;
  t.setWanted({kHop});
  EXPECT_TRUE(t.learn(kHop, kMac, Clock::time_point{}));
  EXPECT_TRUE(t.setWanted({}));
  EXPECT_FALSE(t.lookup(kHop));
}

}  // namespace
}  // namespace sluice
