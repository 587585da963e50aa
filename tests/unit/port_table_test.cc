// PortTable on its own: no EAL, no backend, no locks.
#include "dataplane/core/port_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice {
// Named after the file: the unity build compiles it with other tests.
namespace port_table_test {

// A pod port's entry: attachment `id`/eth0, IPv4 10.0.0.<host>, MAC 02:00:00:00:00:<host>.
PortEntry pod(const std::string& id, int host) {
  PortEntry e;
  e.request.attachment = {id, "eth0"};
  e.request.ip = *Ipv4Address::parse("10.0.0." + std::to_string(host));
  e.request.mac = *MacAddress::parse("02:00:00:00:00:" + std::to_string(10 + host));
  e.socket_path = "/run/sluice/" + id + ".sock";
  return e;
}

PortEntry modulePort(const std::string& label) {
  PortEntry e;
  e.module_label = label;
  e.request.attachment = {label, label};
  return e;
}

TEST(PortTableTest, NumbersAreTheLowestFreeBelowMaxPortsAndAreReused) {
  PortTable table(8, 3);
  EXPECT_EQ(table.freePortNumber(), 0);
  table.insert(0, pod("a", 1));
  table.insert(1, pod("b", 2));
  EXPECT_EQ(table.freePortNumber(), 2);
  table.insert(2, pod("c", 3));
  EXPECT_EQ(table.freePortNumber(), std::nullopt) << "numbers from max-ports on are modules' only";
  (void)table.take(1);
  EXPECT_EQ(table.freePortNumber(), 1);
  EXPECT_EQ(table.find(1), nullptr);
  EXPECT_EQ(table.find(200), nullptr) << "beyond the table is no port";
}

TEST(PortTableTest, PodsAreFoundByAttachmentModulePortsAreNot) {
  PortTable table(8, 4);
  table.insert(2, pod("a", 1));
  table.insert(6, modulePort("uplink"));
  EXPECT_EQ(table.portOf({"a", "eth0"}), 2);
  EXPECT_EQ(table.portOf({"uplink", "uplink"}), std::nullopt);
  EXPECT_EQ(table.podCount(), 1u);
  PortEntry taken = table.take(2);
  EXPECT_EQ(taken.request.attachment.container_id, "a");
  EXPECT_EQ(table.portOf({"a", "eth0"}), std::nullopt);
  EXPECT_EQ(table.podCount(), 0u);
}

TEST(PortTableTest, ACollisionNamesTheFieldAndThePortThatHasIt) {
  PortTable table(8, 8);
  table.insert(3, pod("a", 1));
  table.insert(5, modulePort("uplink"));
  EXPECT_TRUE(table.findCollision(pod("b", 2).request).ok());

  PortRequest same_ip = pod("b", 2).request;
  same_ip.ip = *Ipv4Address::parse("10.0.0.1");
  absl::Status s = table.findCollision(same_ip);
  EXPECT_TRUE(absl::IsAlreadyExists(s));
  EXPECT_EQ(s.message(), "ip: 10.0.0.1 belongs to port 3");

  PortRequest same_mac = pod("b", 2).request;
  same_mac.mac = pod("a", 1).request.mac;
  EXPECT_EQ(table.findCollision(same_mac).message(), "mac: 02:00:00:00:00:11 belongs to port 3");

  PortRequest same_v6 = pod("b", 2).request;
  same_v6.ipv6 = *Ipv6Address::parse("fd00::1");
  table.find(3)->request.ipv6 = same_v6.ipv6;
  EXPECT_EQ(table.findCollision(same_v6).message(), "ipv6: fd00::1 belongs to port 3");

  EXPECT_EQ(table.findSocketCollision("/run/sluice/a.sock").message(), "socket /run/sluice/a.sock belongs to port 3");
  EXPECT_TRUE(table.findSocketCollision("/run/sluice/b.sock").ok());
}

TEST(PortTableTest, ForEachPodSkipsModulePortsInPortOrder) {
  PortTable table(8, 8);
  table.insert(4, pod("b", 2));
  table.insert(1, pod("a", 1));
  table.insert(2, modulePort("uplink"));
  std::vector<uint16_t> pods, all;
  table.forEachPod([&](uint16_t n, const PortEntry&) { pods.push_back(n); });
  table.forEachPort([&](uint16_t n, const PortEntry&) { all.push_back(n); });
  EXPECT_EQ(pods, (std::vector<uint16_t>{1, 4}));
  EXPECT_EQ(all, (std::vector<uint16_t>{1, 2, 4}));
}

TEST(PortTableTest, RoutedPrefixesMustNotHoldAnotherPodsAddressOrOverlapItsPrefixes) {
  PortTable table(8, 8);
  PortEntry router = pod("a", 1);
  router.request.routed_prefixes = {*Ipv4Cidr::parse("192.168.0.0/24")};
  table.insert(0, std::move(router));

  PortRequest req = pod("b", 2).request;
  req.routed_prefixes = {*Ipv4Cidr::parse("192.168.0.128/25")};
  EXPECT_EQ(table.checkRoutedPrefixes(req).message(),
            "routed_prefixes: 192.168.0.128/25 overlaps 192.168.0.0/24, routed to port 0");
  req.routed_prefixes = {*Ipv4Cidr::parse("10.0.0.0/30")};
  EXPECT_EQ(table.checkRoutedPrefixes(req).message(), "routed_prefixes: 10.0.0.0/30 holds port 0's address 10.0.0.1");
  req.routed_prefixes = {*Ipv4Cidr::parse("172.16.0.0/16")};
  EXPECT_TRUE(table.checkRoutedPrefixes(req).ok());
  EXPECT_EQ(table.routedPrefixes().size(), 1u);
}

TEST(PortTableTest, PlacementIsRecordedAndReadBack) {
  PortTable table(8, 8);
  PortEntry two_queues = pod("a", 1);
  two_queues.dpdk.rx_queues = 2;
  table.insert(0, std::move(two_queues));
  PortEntry uplink = modulePort("uplink");
  uplink.pmd = 1;
  table.insert(7, std::move(uplink));
  EXPECT_EQ(table.assignedRxQueues(2), (PmdRxQueues{{}, {{7, 0}}})) << "a pod port not placed is polled by nobody";

  table.recordPlacement({{{0, 1}}, {{0, 0}, {7, 0}}});
  const PortEntry& a = *table.find(0);
  EXPECT_TRUE(a.placed);
  EXPECT_EQ(a.pmd, 1u) << "the PMD of queue 0";
  EXPECT_EQ(a.queue_pmds, (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(table.assignedRxQueues(2), (PmdRxQueues{{{0, 1}}, {{0, 0}, {7, 0}}}));
}

}  // namespace port_table_test
}  // namespace sluice
