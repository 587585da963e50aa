// The neighbor table's state machine over a stepped clock.
#include <gtest/gtest.h>

#include "dataplane/modules/overlay/neighbor_table.h"

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
  EXPECT_TRUE(t.learn(kHop, kMac, t0 + 1100ms).changed);
  EXPECT_EQ(t.learn(kHop, kMac, t0 + 1200ms).refused, ArpRefusal::kUnsolicited) << "the request is answered already";
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
  EXPECT_EQ(t.learn(kHop, kMac, t0).refused, ArpRefusal::kNotANextHop) << "not wanted: no poisoning";
  EXPECT_FALSE(t.lookup(kHop));
  t.setStatic(kHop, kMac);
  t.setWanted({kHop});
  bool changed = false;
  EXPECT_TRUE(t.due(t0 + 1h, &changed).empty()) << "static: never asked";
  EXPECT_EQ(t.learn(kHop, *MacAddress::parse("02:bb:00:00:00:01"), t0).refused, ArpRefusal::kStaticEntry)
      << "static wins over ARP";
  EXPECT_EQ(t.lookup(kHop), kMac);
  EXPECT_FALSE(t.setWanted({}));
  EXPECT_EQ(t.lookup(kHop), kMac) << "static entries stay";
}

TEST(NeighborTable, DroppingAWantedAddressForgetsIt) {
  NeighborTable t;
  t.setWanted({kHop});
  bool changed = false;
  EXPECT_EQ(t.due(Clock::time_point{}, &changed).size(), 1u);
  EXPECT_TRUE(t.learn(kHop, kMac, Clock::time_point{}).changed);
  EXPECT_TRUE(t.setWanted({}));
  EXPECT_FALSE(t.lookup(kHop));
}

// Only a reply to a request of ours moves a next hop's MAC, and only the
// first reply to each request.
TEST(NeighborTable, RepliesNobodyAskedForAreRefused) {
  NeighborTable t;
  const Clock::time_point t0{};
  const MacAddress forged = *MacAddress::parse("02:66:66:66:66:66");
  bool changed = false;
  t.setWanted({kHop});
  EXPECT_EQ(t.learn(kHop, forged, t0).refused, ArpRefusal::kUnsolicited) << "wanted, but not asked yet";
  EXPECT_FALSE(t.lookup(kHop));
  ASSERT_EQ(t.due(t0, &changed).size(), 1u);
  EXPECT_TRUE(t.learn(kHop, kMac, t0 + 1ms).changed);
  EXPECT_EQ(t.learn(kHop, forged, t0 + 2ms).refused, ArpRefusal::kUnsolicited) << "a second answer to one request";
  EXPECT_EQ(t.learn(kHop, forged, t0 + 10s).refused, ArpRefusal::kUnsolicited) << "reachable: not asked";
  EXPECT_EQ(t.lookup(kHop), kMac);
  // Stale: asked again, and the reply refreshes it (a changed MAC is taken:
  // the next hop may have moved).
  ASSERT_EQ(t.due(t0 + 31s, &changed).size(), 1u);
  const MacAddress moved = *MacAddress::parse("02:aa:00:00:00:02");
  EXPECT_TRUE(t.learn(kHop, moved, t0 + 31s + 1ms).changed);
  EXPECT_EQ(t.list(t0 + 31s + 1ms)[0].state, NeighborTable::State::kReachable);
  EXPECT_EQ(t.learn(kHop, forged, t0 + 31s + 2ms).refused, ArpRefusal::kUnsolicited);
  EXPECT_EQ(t.lookup(kHop), moved);
}

TEST(NeighborTable, RefusalsHaveStableNames) {
  EXPECT_EQ(kArpRefusalCount, 8u);
  EXPECT_STREQ(arpRefusalName(ArpRefusal::kMalformed), "malformed");
  EXPECT_STREQ(arpRefusalName(ArpRefusal::kNotUnicastToUs), "not_unicast_to_us");
  EXPECT_STREQ(arpRefusalName(ArpRefusal::kUnsolicited), "unsolicited");
}

}  // namespace
}  // namespace sluice
