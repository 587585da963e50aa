// placeRxQueues on its own: (port, queue) items, loads and fixed queues given.
#include "dataplane/core/rxq_placement.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

std::vector<RxqItem> newQueues(uint16_t port_no, uint16_t count) {
  std::vector<RxqItem> out;
  for (uint16_t q = 0; q < count; ++q) out.push_back({port_no, q, std::nullopt, std::nullopt});
  return out;
}

// Each PMD gets one of a port's queues before any gets a second, whatever
// the loads say; the loads (then the queue counts) decide which PMD gets the
// odd one.
TEST(RxqPlacementTest, APortsQueuesSpreadOverThePmdsTheLeastBusyTakingTheOddOne) {
  EXPECT_EQ(placeRxQueues(newQueues(0, 4), {0.0, 0.0}, {0, 0}), (std::vector<unsigned>{0, 1, 0, 1}));
  EXPECT_EQ(placeRxQueues(newQueues(0, 3), {0.9, 0.1}, {0, 0}), (std::vector<unsigned>{1, 0, 1}));
  EXPECT_EQ(placeRxQueues(newQueues(0, 3), {0.0, 0.0, 0.0}, {0, 0, 1}), (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(placeRxQueues(newQueues(0, 2), {0.0}, {0}), (std::vector<unsigned>{0, 0}));
}

// Queues already placed keep their PMD; new ones (of a new port, or the same
// port's still unplaced) fill around them.
TEST(RxqPlacementTest, PlacedQueuesStayAndNewOnesGoWhereTheirPortHasFewest) {
  std::vector<RxqItem> items = {{0, 0, 1u, std::nullopt}, {0, 1, 1u, std::nullopt}, {1, 0, 0u, std::nullopt}};
  for (RxqItem q : newQueues(2, 2)) items.push_back(q);
  EXPECT_EQ(placeRxQueues(items, {0.0, 0.0}, {0, 0}), (std::vector<unsigned>{1, 1, 0, 0, 1}));
}

// A pinned port's queues all go to its PMD, and count there for the others.
TEST(RxqPlacementTest, APinnedPortsQueuesAllGoToItsPmd) {
  std::vector<RxqItem> items;
  for (uint16_t q = 0; q < 3; ++q) items.push_back({0, q, std::nullopt, 1u});
  items.push_back({1, 0, std::nullopt, std::nullopt});
  EXPECT_EQ(placeRxQueues(items, {0.0, 0.0}, {0, 0}), (std::vector<unsigned>{1, 1, 1, 0}));
}

}  // namespace
}  // namespace sluice
