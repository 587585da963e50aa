// placeRxQueues on its own: (port, queue) items, loads and fixed queues given.
#include "dataplane/core/rxq_placement.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

std::vector<RxqItem> newQueues(uint16_t port_no, uint16_t count, std::optional<unsigned> socket = std::nullopt) {
  std::vector<RxqItem> out;
  for (uint16_t q = 0; q < count; ++q) out.push_back({port_no, q, std::nullopt, std::nullopt, socket});
  return out;
}

// A two-socket machine as far as placement sees it: PMDs 0 and 1 on socket
// 0, PMDs 2 and 3 on socket 1.
const std::vector<unsigned> kTwoSockets = {0, 0, 1, 1};
const std::vector<double> kIdle4 = {0.0, 0.0, 0.0, 0.0};
const std::vector<unsigned> kNoFixed4 = {0, 0, 0, 0};

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
  std::vector<RxqItem> items = {
      {0, 0, 1u, std::nullopt, std::nullopt}, {0, 1, 1u, std::nullopt, std::nullopt}, {1, 0, 0u, std::nullopt, std::nullopt}};
  for (RxqItem q : newQueues(2, 2)) items.push_back(q);
  EXPECT_EQ(placeRxQueues(items, {0.0, 0.0}, {0, 0}), (std::vector<unsigned>{1, 1, 0, 0, 1}));
}

// A pinned port's queues all go to its PMD, and count there for the others.
TEST(RxqPlacementTest, APinnedPortsQueuesAllGoToItsPmd) {
  std::vector<RxqItem> items;
  for (uint16_t q = 0; q < 3; ++q) items.push_back({0, q, std::nullopt, 1u, std::nullopt});
  items.push_back({1, 0, std::nullopt, std::nullopt, std::nullopt});
  EXPECT_EQ(placeRxQueues(items, {0.0, 0.0}, {0, 0}), (std::vector<unsigned>{1, 1, 1, 0}));
}

// A port on socket 1 goes to socket 1's PMDs even when socket 0's are
// idler or poll fewer queues; a multi-queue port spreads over its socket's
// PMDs only. A port on socket 0 likewise stays on PMDs 0 and 1.
TEST(RxqPlacementTest, APortGoesToTheLeastLoadedPmdOfItsOwnSocket) {
  EXPECT_EQ(placeRxQueues(newQueues(0, 1, 1u), kIdle4, kNoFixed4, kTwoSockets), (std::vector<unsigned>{2}));
  EXPECT_EQ(placeRxQueues(newQueues(0, 1, 1u), {0.0, 0.0, 0.5, 0.1}, kNoFixed4, kTwoSockets),
            (std::vector<unsigned>{3}));
  EXPECT_EQ(placeRxQueues(newQueues(0, 1, 1u), {0.0, 0.0, 0.9, 0.9}, {0, 0, 1, 3}, kTwoSockets),
            (std::vector<unsigned>{2})) << "socket 0's idle PMDs are not candidates";
  EXPECT_EQ(placeRxQueues(newQueues(0, 4, 1u), kIdle4, kNoFixed4, kTwoSockets), (std::vector<unsigned>{2, 3, 2, 3}));
  EXPECT_EQ(placeRxQueues(newQueues(0, 3, 0u), {0.9, 0.0, 0.0, 0.0}, kNoFixed4, kTwoSockets),
            (std::vector<unsigned>{1, 0, 1}));
  // Ports of both sockets together: each on its own.
  std::vector<RxqItem> items = newQueues(0, 2, 0u);
  for (RxqItem q : newQueues(1, 2, 1u)) items.push_back(q);
  for (RxqItem q : newQueues(2, 1, 1u)) items.push_back(q);
  EXPECT_EQ(placeRxQueues(items, kIdle4, kNoFixed4, kTwoSockets), (std::vector<unsigned>{0, 1, 2, 3, 2}));
}

// A port whose socket is unknown (a vhost-user port before its pod
// connected) is placed over every PMD, as on a machine of one socket.
TEST(RxqPlacementTest, APortOfUnknownSocketMayGoToAnyPmd) {
  EXPECT_EQ(placeRxQueues(newQueues(0, 4), kIdle4, kNoFixed4, kTwoSockets), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(placeRxQueues(newQueues(0, 1), {0.5, 0.5, 0.5, 0.0}, kNoFixed4, kTwoSockets), (std::vector<unsigned>{3}));
  EXPECT_EQ(placeRxQueues(newQueues(0, 1), kIdle4, {1, 1, 0, 1}, kTwoSockets), (std::vector<unsigned>{2}));
}

// A port on a socket no PMD runs on crosses sockets whichever PMD takes it:
// the rule over every PMD decides.
TEST(RxqPlacementTest, APortOnASocketWithNoPmdIsPlacedOverEveryPmd) {
  EXPECT_EQ(placeRxQueues(newQueues(0, 4, 2u), kIdle4, kNoFixed4, kTwoSockets), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(placeRxQueues(newQueues(0, 1, 2u), {0.5, 0.0, 0.5, 0.5}, kNoFixed4, kTwoSockets),
            (std::vector<unsigned>{1}));
  // Every PMD on socket 1: a socket-0 port goes to them all the same.
  EXPECT_EQ(placeRxQueues(newQueues(0, 2, 0u), {0.0, 0.0}, {0, 0}, {1, 1}), (std::vector<unsigned>{0, 1}));
}

// A pin wins over the socket: a socket-0 port pinned to PMD 3 (socket 1)
// goes there, and counts there for the queues placed after it.
TEST(RxqPlacementTest, APinnedPortStaysOnItsPmdAcrossSockets) {
  std::vector<RxqItem> items;
  for (uint16_t q = 0; q < 2; ++q) items.push_back({0, q, std::nullopt, 3u, 0u});
  for (RxqItem q : newQueues(1, 1, 1u)) items.push_back(q);
  EXPECT_EQ(placeRxQueues(items, kIdle4, kNoFixed4, kTwoSockets), (std::vector<unsigned>{3, 3, 2}));
}

// A queue already placed stays where it is, even on the wrong socket (its
// port's socket became known after it was placed): moving costs more than
// one port's crossing.
TEST(RxqPlacementTest, APlacedQueueStaysWhenItsPortsSocketBecomesKnown) {
  std::vector<RxqItem> items = {{0, 0, 0u, std::nullopt, 1u}, {0, 1, std::nullopt, std::nullopt, 1u}};
  EXPECT_EQ(placeRxQueues(items, kIdle4, kNoFixed4, kTwoSockets), (std::vector<unsigned>{0, 2}));
}

}  // namespace
}  // namespace sluice
