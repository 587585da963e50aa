// Partial offload on real DPDK ethdevs in one process (the ring node of
// tests/support/ring_node.h: the real PMD loop and control path, the offload
// manager, net_ring ports standing in for pods and the uplink).
//
//  - Runs (the PMD decides once per run of consecutive packets with one
//    key; not offload, but this is the file with a real PMD on ring ports):
//    random bursts sent whole leave exactly as their packets sent one by
//    one (bursts of one never form runs), with the same counters.
//  - The rte_flow provider on this machine's ports (net_ring, net_null,
//    net_tap): the probe says no, with the driver's reason; with it in the
//    dataplane nothing is offloaded, traffic is delivered as without it, and
//    the reason is in the statistics.
//  - The software engine: a differential test over random traffic and random
//    table changes. Every frame is sent twice, into the offload port (where
//    the engine marks the frames of offloaded megaflows) and into a plain
//    port; both copies must leave by the same ports with the same bytes, and
//    the mark counters must show that the offload copies took the mark branch.
//  - A megaflow removed while its rule is still installed: the engine still
//    marks, but the PMD falls back (mark miss) and forwards by the current
//    tables; once the offload thread removes the rule, nothing is marked.
//  - The same on a VXLAN uplink (a ring ethdev behind the overlay's
//    UplinkIo): decap megaflows are offloaded as tunnel rules; a frame sent
//    with marks honoured and again with the PMD ignoring marks leaves by the
//    same port with the same bytes and counts the same tunnel rx counters,
//    over random traffic, pods and remote nodes coming and going; a stale
//    decap rule never forwards; hostile outer headers that a looser rule
//    marked fall back to the uplink stage, which decides as without marks.
// The offload thread is not started: the test runs its work with waitIdle(),
// so it decides when rules appear and disappear.
#include <gtest/gtest.h>
#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/ethdev_open.h"
#include "dataplane/modules/offload/match_translate.h"
#include "dataplane/modules/offload/offload_manager.h"
#include "dataplane/core/rx_marks.h"
#include "dataplane/modules/offload/rte_flow_provider.h"
#include "dataplane/modules/overlay/overlay_control.h"
#include "dataplane/modules/overlay/uplink_io.h"
#include "dataplane/stand_ins/software_offload/software_provider.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "dataplane/datapath/pmd.h"
#include "tests/support/frames.h"
#include "tests/support/ring_node.h"
#include "tests/unit/vxlan/vxlan_frames.h"

namespace sluice {
namespace {

using namespace test;



// The counters a burst moves that must not depend on how it was split into
// runs (the tiers do: that is the point of runs).
struct Outcome {
  std::vector<std::pair<uint16_t, Frame>> sent;
  std::array<uint64_t, kDropReasonCount> drops{};
  uint64_t tx = 0, rx_dropped = 0, looked_up_or_not = 0;
  bool operator==(const Outcome&) const = default;
};
Outcome outcomeOf(Node& node, uint16_t in, const std::function<void()>& send) {
  PmdCounters& c = node.counters();
  auto tiers = [&] {
    return c.run_hits.read() + c.emc_hits.read() + c.smc_hits.read() + c.megaflow_hits.read() + c.misses.read() +
           c.not_looked_up.read();
  };
  Outcome o;
  for (size_t r = 0; r < kDropReasonCount; ++r) o.drops[r] = c.drops[r].read();
  o.tx = c.tx_packets.read();
  o.rx_dropped = c.ports[in].rx_dropped.read();
  o.looked_up_or_not = tiers();
  send();
  o.sent = node.backend().collect();
  for (size_t r = 0; r < kDropReasonCount; ++r) o.drops[r] = c.drops[r].read() - o.drops[r];
  o.tx = c.tx_packets.read() - o.tx;
  o.rx_dropped = c.ports[in].rx_dropped.read() - o.rx_dropped;
  o.looked_up_or_not = tiers() - o.looked_up_or_not;
  return o;
}

TEST(PmdRunsTest, BurstsLeaveAsTheirPacketsSentOneByOne) {
  Node node(std::make_unique<offload::RteFlowProvider>());  // not capable here: nothing is marked
  const uint16_t in = node.addPod("offl-c0", 10);
  node.addPod("offl-c2", 12);
  node.addPod("offl-c3", 13);
  // Packet kinds; bursts are runs of them, so consecutive packets often
  // share a key. Sequence numbers (payload) differ per packet.
  auto kind = [](unsigned k, uint32_t seq) -> Frame {
    switch (k) {
      case 0: return udpTo(10, podIp(12), 64, 1000, seq);
      case 1: return udpTo(10, podIp(13), 64, 1000, seq);
      case 2: return udpTo(10, podIp(12), 64, 1001, seq);
      case 3: return udpTo(10, podIp(12), 1, 1000, seq);   // TTL 1: ttl_exceeded
      case 4: return udpTo(10, podIp(99), 64, 1000, seq);  // nobody: no_route
      case 5: return udpTo(10, podIp(12), 63, 1000, seq);  // same key as 0 (TTL class), other bytes
      case 6: return test::arpRequest(podMac(10), podIp(10), kGateway);  // answered to the sender
      default: {
        Frame f = udpTo(10, podIp(12), 64, 1000, seq);
        f.resize(30);  // truncated
        return f;
      }
    }
  };
  constexpr unsigned kKinds = 8;
  // Every flow's megaflow first, so both sends below find the same caches.
  for (unsigned k = 0; k < kKinds; ++k) {
    node.inject(in, kind(k, 0));
    node.backend().collect();
  }
  ASSERT_TRUE(node.waitForFlow("ipv4_dst=10.77.0.12"));
  std::mt19937 rng(1130);
  uint32_t seq = 1;
  const uint64_t run_hits_before = node.counters().run_hits.read();
  for (int round = 0; round < 200; ++round) {
    std::vector<Frame> burst;
    const size_t n = 1 + rng() % kBurstSize;
    unsigned k = rng() % kKinds;
    for (size_t i = 0; i < n; ++i) {
      if (rng() % 5 == 0) k = rng() % kKinds;
      burst.push_back(kind(k, seq++));
    }
    const Outcome whole = outcomeOf(node, in, [&] { node.injectBurst(in, burst); });
    const Outcome one_by_one = outcomeOf(node, in, [&] {
      for (const Frame& f : burst) node.inject(in, f);
    });
    ASSERT_EQ(whole.sent.size(), one_by_one.sent.size()) << "round " << round;
    for (size_t i = 0; i < whole.sent.size(); ++i) {
      ASSERT_EQ(whole.sent[i].first, one_by_one.sent[i].first) << "round " << round << " frame " << i;
      ASSERT_EQ(whole.sent[i].second, one_by_one.sent[i].second) << "round " << round << " frame " << i;
    }
    ASSERT_TRUE(whole == one_by_one) << "round " << round;
    ASSERT_EQ(whole.looked_up_or_not, n) << "each packet at exactly one tier";
  }
  // Runs were formed (a burst of one never forms one).
  EXPECT_GT(node.counters().run_hits.read() - run_hits_before, 1000u);
}

TEST(OffloadStageTest, RteFlowProbeSaysNoOnThisMachinesPorts) {
  offload::RteFlowProvider provider;
  // net_ring: no flow ops at all.
  rte_ring* r = rte_ring_create("offl_probe_r", 64, SOCKET_ID_ANY, 0);
  ASSERT_NE(r, nullptr);
  const int ring_port = rte_eth_from_rings("net_ring_offlprobe", &r, 1, &r, 1, SOCKET_ID_ANY);
  ASSERT_GE(ring_port, 0);
  offload::Capability c = provider.probe(static_cast<uint16_t>(ring_port), 1);
  EXPECT_FALSE(c.supported);
  EXPECT_NE(c.reason.find("rte_flow_validate"), std::string::npos) << c.reason;
  std::printf("net_ring: %s\n", c.reason.c_str());
  rte_eth_dev_close(static_cast<uint16_t>(ring_port));
  rte_vdev_uninit("net_ring_offlprobe");
  rte_ring_free(r);
  // net_null and net_tap (configured, as sluiced's ports are, before the probe).
  const std::string tap_args = "iface=offltap" + std::to_string(::getpid() % 100000);
  for (auto [name, args] : {std::pair<std::string, std::string>{"net_null_offlprobe", ""},
                            std::pair<std::string, std::string>{"net_tap_offlprobe", tap_args}}) {
    ASSERT_EQ(rte_vdev_init(name.c_str(), args.c_str()), 0) << name;
    uint16_t port = 0;
    ASSERT_EQ(rte_eth_dev_get_port_by_name(name.c_str(), &port), 0);
    // Negotiated before configure, as the uplink does: the probe reports
    // that answer (these drivers have no negotiation) instead of EBUSY.
    EXPECT_EQ(offload::negotiateUserMarksBeforeConfigure(port), -ENOTSUP) << name;
    const absl::Status opened = openEthdev(port, rte_eth_conf{}, ringNodePool(), 256);
    ASSERT_TRUE(opened.ok()) << name << ": " << opened;
    c = provider.probe(port, 1);
    EXPECT_FALSE(c.supported) << name;
    EXPECT_NE(c.reason.find("rx metadata negotiation not supported by the driver; rte_flow_validate: "),
              std::string::npos) << c.reason;
    std::printf("%s: %s\n", name.c_str(), c.reason.c_str());
    provider.detach(port);
    rte_eth_dev_stop(port);
    rte_eth_dev_close(port);
    rte_vdev_uninit(name.c_str());
  }
}

TEST(OffloadStageTest, RteFlowProviderOffloadsNothingAndTrafficIsUnaffected) {
  Node node(std::make_unique<offload::RteFlowProvider>());
  const uint16_t in = node.addPod("offl-c0", 10);
  const uint16_t out = node.addPod("offl-c2", 12);
  for (uint32_t i = 0; i < 20; ++i) {
    node.inject(in, udpTo(10, podIp(12), 64, 1000, i));
    node.manager().waitIdle();
    auto sent = node.backend().collect();
    ASSERT_EQ(sent.size(), 1u) << i;
    EXPECT_EQ(sent[0].first, out);
    EXPECT_EQ(test::udpSequence(sent[0].second), i);
    EXPECT_EQ(test::ipv4Ttl(sent[0].second), 63);
  }
  StatsView s = node.control().stats();
  offload::OffloadStatsView o = node.offload().stats();
  EXPECT_EQ(o.provider, "rte_flow");
  EXPECT_TRUE(o.port_attached);
  EXPECT_FALSE(o.capable);
  EXPECT_NE(o.capability_reason.find("rte_flow_validate"), std::string::npos) << o.capability_reason;
  EXPECT_EQ(o.offloaded, 0u);
  EXPECT_EQ(o.refused["port_not_capable"], 1u);  // the one megaflow
  EXPECT_EQ(s.pmds[0].mark_hits, 0u);
  EXPECT_EQ(s.pmds[0].mark_misses, 0u);
  EXPECT_EQ(node.offloadState("ipv4_dst=10.77.0.12"), "no (port_not_capable)");
}

TEST(OffloadStageTest, SoftwareEngineMarkedAndUnmarkedGiveTheSameOutput) {
  auto provider = std::make_unique<offload::SoftwareProvider>(128);
  offload::SoftwareProvider& engine = *provider;
  Node node(std::move(provider));
  const uint16_t offload_port = node.addPod("offl-c0", 10);
  // The plain port sends the offload port's pod's frames: its own sources
  // are not checked (as a router's), so that both ports decide alike.
  const uint16_t plain_port = node.addPod("offl-c1", 11, {.source_validation = false});
  std::map<unsigned, bool> present;  // destination pods 20..27
  std::mt19937 rng(0x0ff10ad);
  const std::array<uint8_t, 4> ttls = {64, 2, 1, 0};
  uint64_t offload_sent = 0, compared = 0;
  const uint64_t hits_before = node.counters().mark_hits.read();
  uint64_t marked_on_plain = 0;
  for (int round = 0; round < 40; ++round) {
    // A table change: a destination pod comes or goes (revalidation).
    const unsigned host = 20 + rng() % 8;
    node.togglePod(host, present);
    for (int k = 0; k < 40; ++k) {
      // Few destinations and TTLs: flows repeat, so megaflows and rules exist.
      const unsigned r = rng() % 12;
      const Ipv4Address dst = r < 8 ? podIp(20 + r) : r < 10 ? kGateway : podIp(200 + r);
      const Frame f = udpTo(10, dst, ttls[rng() % 4], static_cast<uint16_t>(rng()), static_cast<uint32_t>(rng()));
      const uint64_t hits = node.counters().mark_hits.read();
      node.inject(offload_port, f);
      auto via_offload = node.backend().collect();
      ++offload_sent;
      const uint64_t plain_hits = node.counters().mark_hits.read();
      node.inject(plain_port, f);
      auto via_plain = node.backend().collect();
      marked_on_plain += node.counters().mark_hits.read() - plain_hits;
      // An ICMP error (TTL expired) goes back out of the port the packet came in on.
      for (auto& [port, frame] : via_offload)
        if (port == offload_port) port = plain_port;
      ASSERT_EQ(via_offload, via_plain) << "round " << round << " packet " << k << " marked "
                                        << (plain_hits - hits);
      ++compared;
      // Let the offload thread install and remove rules now and then.
      if (rng() % 3 == 0) node.manager().waitIdle();
    }
  }
  const uint64_t mark_hits = node.counters().mark_hits.read() - hits_before;
  offload::OffloadStatsView s = node.manager().stats();
  std::printf("compared %llu frame pairs; %llu of %llu offload-port frames took the mark branch; engine marked "
              "%llu; rules installed %llu, removed %llu; mark misses %llu\n",
              static_cast<unsigned long long>(compared), static_cast<unsigned long long>(mark_hits),
              static_cast<unsigned long long>(offload_sent), static_cast<unsigned long long>(engine.packetsMarked()),
              static_cast<unsigned long long>(s.installed), static_cast<unsigned long long>(s.removed),
              static_cast<unsigned long long>(node.counters().mark_misses.read()));
  EXPECT_EQ(marked_on_plain, 0u);
  // Counters prove the fast branch ran for a large share of the traffic, and
  // every marked packet was either a mark hit or a counted mark miss.
  EXPECT_GT(mark_hits, offload_sent / 4);
  EXPECT_EQ(engine.packetsMarked(), mark_hits + node.counters().mark_misses.read());
  EXPECT_GT(s.installed, 0u);
  EXPECT_GT(s.removed, 0u);  // revalidation removed rules
  EXPECT_EQ(s.failures.size(), 0u);
}

// The one frame the node sent: an ICMP host unreachable back to port `to`
// (the answer for an address of the pod CIDR that no pod holds).
void expectOnlyUnreachableTo(Node& node, uint16_t to) {
  const auto sent = node.backend().collect();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].first, to);
  const Frame& f = sent[0].second;
  ASSERT_GE(f.size(), 14u + 20u + 8u);
  EXPECT_EQ(f[14 + 9], IPPROTO_ICMP);
  EXPECT_EQ(f[14 + 20], 3) << "destination unreachable";
  EXPECT_EQ(f[14 + 20 + 1], 1) << "host unreachable";
}

TEST(OffloadStageTest, RuleOutlivingItsMegaflowNeverForwardsByTheStaleDecision) {
  auto provider = std::make_unique<offload::SoftwareProvider>(128);
  offload::SoftwareProvider& engine = *provider;
  Node node(std::move(provider));
  const uint16_t in = node.addPod("offl-c0", 10);
  const uint16_t out = node.addPod("offl-d30", 30);
  const Frame f = udpTo(10, podIp(30), 64, 4242, 1);
  node.inject(in, f);
  ASSERT_TRUE(node.waitForFlow("ipv4_dst=10.77.0.30"));
  node.manager().waitIdle();
  ASSERT_EQ(node.offloadState("ipv4_dst=10.77.0.30"), "yes (mark 0)");
  node.backend().collect();

  // Marked: the fast branch, to the pod.
  uint64_t hits = node.counters().mark_hits.read();
  node.inject(in, f);
  EXPECT_EQ(node.counters().mark_hits.read(), hits + 1);
  auto sent = node.backend().collect();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].first, out);

  // The pod goes: its megaflow is revalidated away at once, but the offload
  // thread has not run, so the rule still marks.
  node.deletePod("offl-d30");
  const uint64_t marked = engine.packetsMarked();
  const uint64_t misses = node.counters().mark_misses.read();
  hits = node.counters().mark_hits.read();
  const uint64_t no_route = node.counters().drops[static_cast<size_t>(DropReason::kNoRoute)].read();
  node.inject(in, f);
  EXPECT_EQ(engine.packetsMarked(), marked + 1);                  // still marked by the engine
  EXPECT_EQ(node.counters().mark_misses.read(), misses + 1);      // the PMD refused the mark
  EXPECT_EQ(node.counters().mark_hits.read(), hits);
  EXPECT_EQ(node.counters().drops[static_cast<size_t>(DropReason::kNoRoute)].read(), no_route + 1);
  expectOnlyUnreachableTo(node, in);  // not forwarded: answered

  // The offload thread removes the rule. The fallback packet's upcall made
  // the new megaflow (drop: no route), which gets its own rule and a fresh
  // mark (the old one waits at the back of the free list).
  ASSERT_TRUE(node.waitForFlow("ipv4_dst=10.77.0.30"));
  node.manager().waitIdle();
  EXPECT_EQ(node.manager().stats().removed, 1u);
  EXPECT_EQ(node.offloadState("ipv4_dst=10.77.0.30"), "yes (mark 1)");
  hits = node.counters().mark_hits.read();
  node.inject(in, f);
  EXPECT_EQ(node.counters().mark_hits.read(), hits + 1);
  EXPECT_EQ(node.counters().mark_misses.read(), misses + 1);
  EXPECT_EQ(node.counters().drops[static_cast<size_t>(DropReason::kNoRoute)].read(), no_route + 2);
  expectOnlyUnreachableTo(node, in);
}



TEST(OffloadStageTest, SoftwareEngineOnAVxlanUplinkMarkedAndUnmarkedGiveTheSameOutput) {
  auto provider = std::make_unique<offload::SoftwareProvider>(128);
  offload::SoftwareProvider& engine = *provider;
  Node node(std::move(provider), /*vxlan=*/true);
  std::map<unsigned, bool> present;  // destination pods 20..27
  bool r3 = false;
  std::mt19937 rng(0xdeca9);
  const std::array<uint8_t, 4> ttls = {64, 2, 1, 0};
  uint64_t sent = 0, marked_hits = 0, marked_misses = 0, engine_marked = 0, unmarked_engine = 0;
  for (int round = 0; round < 40; ++round) {
    // A table change: a destination pod or remote node r3 comes or goes.
    if (rng() % 4 == 0) {
      if (r3) ASSERT_TRUE(node.overlay().deleteNode("r3").ok());
      else ASSERT_TRUE(node.overlay().addNode(remoteNode("r3", kRemote3, "10.79.0.0/24")).ok());
      r3 = !r3;
    } else {
      const unsigned host = 20 + rng() % 8;
      node.togglePod(host, present);
    }
    for (int k = 0; k < 40; ++k) {
      // Few sources and destinations: flows repeat, so megaflows and rules exist.
      const unsigned v = rng() % 8;
      const Ipv4Address from = v < 5 ? kRemote2 : v < 7 ? kRemote3 : kStranger;
      const unsigned r = rng() % 12;
      const Ipv4Address dst = r < 8 ? podIp(20 + r) : r == 8 ? kGateway : r == 9 ? *Ipv4Address::parse("10.79.0.7")
                                                                                  : podIp(200 + r);
      const Frame f = vxlanTo(from, dst, ttls[rng() % 4], static_cast<uint16_t>(rng()), static_cast<uint32_t>(rng()));
      // With marks honoured...
      const uint64_t hits = node.counters().mark_hits.read(), misses = node.counters().mark_misses.read();
      const uint64_t eng = engine.packetsMarked();
      auto tun_before = node.tunnelRx();
      node.injectUplink(f);
      auto via_mark = node.collectAll();
      auto tun_marked = node.tunnelRx();
      marked_hits += node.counters().mark_hits.read() - hits;
      marked_misses += node.counters().mark_misses.read() - misses;
      engine_marked += engine.packetsMarked() - eng;
      // ...and ignored (the PMD then takes the uplink stage and the caches).
      node.manager().marks().setPort(offload::MarkTable::kNoPort);
      const uint64_t eng2 = engine.packetsMarked();
      node.injectUplink(f);
      auto via_pipeline = node.collectAll();
      auto tun_unmarked = node.tunnelRx();
      unmarked_engine += engine.packetsMarked() - eng2;
      node.manager().marks().setPort(kUplinkPort);
      ++sent;
      ASSERT_EQ(via_mark, via_pipeline) << "round " << round << " packet " << k;
      for (const auto& [name, rx] : tun_marked) {
        const auto before = tun_before[name];
        const auto after = tun_unmarked[name];
        EXPECT_EQ(rx.first - before.first, after.first - rx.first) << name << " round " << round;
        EXPECT_EQ(rx.second - before.second, after.second - rx.second) << name << " round " << round;
      }
      if (rng() % 3 == 0) node.manager().waitIdle();
    }
  }
  offload::OffloadStatsView s = node.manager().stats();
  std::printf("compared %llu VXLAN frame pairs; %llu took the decap mark branch, %llu mark misses; engine marked "
              "%llu (+%llu of the unmarked copies); rules installed %llu, removed %llu\n",
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(marked_hits),
              static_cast<unsigned long long>(marked_misses), static_cast<unsigned long long>(engine_marked),
              static_cast<unsigned long long>(unmarked_engine), static_cast<unsigned long long>(s.installed),
              static_cast<unsigned long long>(s.removed));
  EXPECT_GT(marked_hits, sent / 4);
  EXPECT_EQ(engine_marked, marked_hits + marked_misses);
  EXPECT_GT(s.installed, 0u);
  EXPECT_GT(s.removed, 0u);
  EXPECT_EQ(s.failures.size(), 0u);
  EXPECT_EQ(s.refused.count("tunnel"), 0u);
}

// Offloads the decap megaflow of r2 -> pod 30; returns its mark.
uint32_t offloadDecapFlow(Node& node, const Frame& f) {
  node.injectUplink(f);
  EXPECT_TRUE(node.waitForFlow("ipv4_dst=10.77.0.30"));
  node.manager().waitIdle();
  const std::string state = node.offloadState("ipv4_dst=10.77.0.30");
  EXPECT_EQ(state.rfind("yes (mark ", 0), 0u) << state;
  node.collectAll();
  return static_cast<uint32_t>(std::stoul(state.substr(10)));
}

TEST(OffloadStageTest, DecapRuleOutlivingItsMegaflowNeverForwardsByTheStaleDecision) {
  auto provider = std::make_unique<offload::SoftwareProvider>(128);
  offload::SoftwareProvider& engine = *provider;
  Node node(std::move(provider), /*vxlan=*/true);
  const uint16_t out = node.addPod("offl-d30", 30);
  const Frame f = vxlanTo(kRemote2, podIp(30), 64, 4242, 1);
  offloadDecapFlow(node, f);

  // Marked: the decap branch, to the pod, the inner frame rewritten.
  uint64_t hits = node.counters().mark_hits.read();
  auto tun = node.tunnelRx();
  node.injectUplink(f);
  EXPECT_EQ(node.counters().mark_hits.read(), hits + 1);
  EXPECT_EQ(node.tunnelRx()["r2"].first, tun["r2"].first + 1);
  EXPECT_EQ(node.tunnelRx()["r2"].second, tun["r2"].second + 60);
  auto sent = node.collectAll();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].first, out);
  ASSERT_EQ(sent[0].second.size(), 60u);
  EXPECT_EQ(test::ipv4Ttl(sent[0].second), 63);
  EXPECT_TRUE(test::ipv4ChecksumValid(sent[0].second));
  EXPECT_EQ(test::ethDst(sent[0].second), podMac(30));
  EXPECT_EQ(test::udpSequence(sent[0].second), 1u);

  // The pod goes: the megaflow dies at once, the rule still marks.
  node.deletePod("offl-d30");
  const uint64_t marked = engine.packetsMarked();
  const uint64_t misses = node.counters().mark_misses.read();
  hits = node.counters().mark_hits.read();
  const uint64_t overlay_no_route = node.counters().drops[static_cast<size_t>(DropReason::kOverlayNoRoute)].read();
  node.injectUplink(f);
  EXPECT_EQ(engine.packetsMarked(), marked + 1);
  EXPECT_EQ(node.counters().mark_misses.read(), misses + 1);
  EXPECT_EQ(node.counters().mark_hits.read(), hits);
  EXPECT_EQ(node.counters().drops[static_cast<size_t>(DropReason::kOverlayNoRoute)].read(), overlay_no_route + 1);
  EXPECT_TRUE(node.collectAll().empty());

  // The offload thread removes the rule; the fallback's upcall made the new
  // megaflow (drop: overlay_no_route, decapsulated traffic is never relayed), offloaded with a fresh mark. Then remote node
  // r2 goes: that megaflow dies too (its VTEP is unknown now) while its rule
  // still marks.
  node.manager().waitIdle();
  ASSERT_TRUE(node.waitForFlow("ipv4_dst=10.77.0.30"));
  node.manager().waitIdle();
  EXPECT_EQ(node.manager().stats().removed, 1u);
  EXPECT_EQ(node.offloadState("ipv4_dst=10.77.0.30").rfind("yes (mark ", 0), 0u);
  ASSERT_TRUE(node.overlay().deleteNode("r2").ok());
  const uint64_t unknown = node.counters().drops[static_cast<size_t>(DropReason::kVxlanUnknownSource)].read();
  node.injectUplink(f);
  EXPECT_EQ(node.counters().drops[static_cast<size_t>(DropReason::kVxlanUnknownSource)].read(), unknown + 1);
  EXPECT_EQ(node.counters().mark_misses.read(), misses + 2);  // the overlay_no_route drop rule outlived its megaflow
  EXPECT_TRUE(node.collectAll().empty());
}

TEST(OffloadStageTest, HostileOuterHeadersMarkedByALooserRuleFallBack) {
  auto provider = std::make_unique<offload::SoftwareProvider>(128);
  offload::SoftwareProvider& engine = *provider;
  Node node(std::move(provider), /*vxlan=*/true);
  const uint16_t out = node.addPod("offl-d30", 30);
  const uint32_t mark = offloadDecapFlow(node, vxlanTo(kRemote2, podIp(30), 64, 4242, 1));

  // A looser NIC rule with the same mark: no version_ihl, no fragment bits.
  flow::FlowKey k = flow::zeroKey();
  flow::FlowMask m = flow::zeroKey();
  k.eth_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
  m.eth_type = 0xffff;
  k.ipv4_dst = htonl(podIp(30).value);
  m.ipv4_dst = 0xffffffffU;
  k.tun_src = htonl(kRemote2.value);
  m.tun_src = 0xffffffffU;
  k.tun_dst = htonl(kVtep.value);
  k.tun_vni = kVni;
  m.tun_vni = 0xffffffffU;
  offload::MatchTranslation t = offload::translateMatch(k, m, kUplinkPort, {true, true, true, false});
  ASSERT_TRUE(t.ok) << t.refusal;
  t.pattern.at(1).mask.ipv4.hdr.version_ihl = 0;
  ASSERT_TRUE(engine.create(node.uplinkDpdkPort(), t.pattern, mark).ok());
  ASSERT_TRUE(engine.sync());

  // Each hostile frame is marked by the loose rule; the PMD must fall back
  // (a mark miss) and the frame must then leave exactly as it does with marks
  // ignored: the uplink stage decides (drops it by reason or decapsulates it).
  auto hostile = [](const std::function<void(test::OuterSpec&)>& edit) {
    return vxlanTo(kRemote2, podIp(30), 64, 4242, 7, edit);
  };
  Frame long_udp = hostile(nullptr);
  long_udp[14 + 20 + 5] += 40;  // UDP length beyond the IPv4 payload
  Frame short_udp = hostile(nullptr);
  short_udp[14 + 20 + 5] -= 40;  // inner frame shorter than Ethernet + IPv4
  const std::vector<std::pair<const char*, Frame>> cases = {
      {"outer IPv4 options", hostile([](test::OuterSpec& o) { o.version_ihl = 0x46; })},
      {"first fragment", hostile([](test::OuterSpec& o) { o.frag = 0x2000; })},
      {"UDP length too long", long_udp},
      {"UDP length too short", short_udp},
  };
  std::vector<std::vector<std::pair<uint16_t, Frame>>> outputs;
  for (const auto& [what, frame] : cases) {
    const uint64_t marked = engine.packetsMarked();
    const uint64_t misses = node.counters().mark_misses.read();
    const uint64_t hits = node.counters().mark_hits.read();
    node.injectUplink(frame);
    EXPECT_EQ(engine.packetsMarked(), marked + 1) << what;
    EXPECT_EQ(node.counters().mark_misses.read(), misses + 1) << what;
    EXPECT_EQ(node.counters().mark_hits.read(), hits) << what;
    auto via_mark = node.collectAll();
    node.manager().marks().setPort(offload::MarkTable::kNoPort);
    node.injectUplink(frame);
    auto via_pipeline = node.collectAll();
    node.manager().marks().setPort(kUplinkPort);
    EXPECT_EQ(via_mark, via_pipeline) << what;
    outputs.push_back(via_mark);
  }
  // Options are legal on receipt: decapsulated and delivered by the caches.
  ASSERT_EQ(outputs[0].size(), 1u);
  EXPECT_EQ(outputs[0][0].first, out);
  EXPECT_EQ(test::udpSequence(outputs[0][0].second), 7u);
  // A fragment and a UDP length past the datagram are dropped by reason.
  EXPECT_TRUE(outputs[1].empty());
  EXPECT_TRUE(outputs[2].empty());
  EXPECT_EQ(node.counters().drops[static_cast<size_t>(DropReason::kVxlanFragment)].read(), 2u);
  EXPECT_EQ(node.counters().drops[static_cast<size_t>(DropReason::kVxlanTruncated)].read(), 2u);
}

// Runs on the uplink: decapsulated packets with the same inner headers but
// from two remote VTEPs have two keys (the tunnel is in the key), so a run
// never spans a change of tunnel. Bursts sent whole must leave as their
// packets sent one by one, with the same tunnel counters and the same
// packets counted on each tunnel's megaflow.
TEST(PmdRunsTest, UplinkRunsNeverSpanTwoTunnels) {
  Node node(std::make_unique<offload::RteFlowProvider>(), /*vxlan=*/true);  // nothing is marked on a ring port
  ASSERT_TRUE(node.overlay().addNode(remoteNode("r3", kRemote3, "10.79.0.0/24")).ok());
  node.addPod("offl-d20", 20);
  auto frame = [](bool from_r3, uint32_t seq) { return vxlanTo(from_r3 ? kRemote3 : kRemote2, podIp(20), 64, 4000, seq); };
  // Both tunnels' megaflows first.
  for (bool r3 : {false, true}) node.injectUplink(frame(r3, 0));
  ASSERT_TRUE(node.waitForFlow("tun_src=192.168.77.3"));
  ASSERT_TRUE(node.waitForFlow("tun_src=192.168.77.2"));
  node.collectAll();
  auto flowPackets = [&] {
    std::map<std::string, uint64_t> out;
    for (const FlowView& f : node.control().listFlows()) out[f.match] = f.packets;
    return out;
  };
  auto minus = [](std::map<std::string, uint64_t> a, const std::map<std::string, uint64_t>& b) {
    for (auto& [match, packets] : a) packets -= b.count(match) ? b.at(match) : 0;
    return a;
  };
  std::mt19937 rng(77);
  uint32_t seq = 1;
  const uint64_t run_hits_before = node.counters().run_hits.read();
  for (int round = 0; round < 50; ++round) {
    std::vector<Frame> burst;
    bool r3 = rng() % 2 == 0;
    for (size_t i = 0, n = 2 + rng() % 31; i < n; ++i) {
      if (rng() % 4 == 0) r3 = !r3;
      burst.push_back(frame(r3, seq++));
    }
    const auto flows0 = flowPackets();
    const auto tun0 = node.tunnelRx();
    node.injectBurst(kUplinkPort, burst);
    const auto sent_whole = node.collectAll();
    const auto flows1 = flowPackets();
    const auto tun1 = node.tunnelRx();
    for (const Frame& f : burst) node.injectUplink(f);
    const auto sent_one_by_one = node.collectAll();
    const auto flows2 = flowPackets();
    const auto tun2 = node.tunnelRx();
    ASSERT_EQ(sent_whole, sent_one_by_one) << "round " << round;
    ASSERT_EQ(minus(flows1, flows0), minus(flows2, flows1)) << "round " << round;
    for (const auto& [name, rx] : tun1) {
      EXPECT_EQ(rx.first - tun0.at(name).first, tun2.at(name).first - rx.first) << name << " round " << round;
    }
  }
  EXPECT_GT(node.counters().run_hits.read() - run_hits_before, 200u);  // runs were formed
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::test::runRingNodeTests(argc, argv, "offload_stage_test"); }
