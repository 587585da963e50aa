#include "dataplane/api/stats_format.h"

#include "dataplane/api/nodes_format.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(StatsFormatTest, ShowsCyclesPerPacketBatchesAndEveryDropReason) {
  v1::GetStatsResponse s;
  s.set_tsc_hz(1'000'000'000);
  s.set_seconds_since_clear(2.0);
  v1::PmdStats* p = s.add_pmds();
  p->set_lcore(1);
  p->set_busy_cycles(250'000'000);
  p->set_idle_cycles(750'000'000);
  p->set_packets(1'000'000);
  p->set_rx_bursts(50'000);
  p->set_tx_batches(40'000);
  p->set_tx_batched_packets(1'000'000);
  p->set_tx_packets(990'000);
  p->set_tx_locked_batches(10'000);
  p->set_numa_socket(1);
  p->set_rx_cycles(30'000'000);
  p->set_parse_cycles(40'000'000);
  p->set_lookup_cycles(90'500'000);
  p->set_action_cycles(60'000'000);
  p->set_tx_cycles(25'000'000);
  p->set_icmp_errors_sent(5);
  p->set_icmp_errors_rate_limited(2);
  p->set_rxq_idle_polls(800);
  p->set_rxq_idle_polls_skipped(49'200);
  p->set_rxq_idled(500);
  p->set_rxq_woken(3);
  v1::PortStats* port = s.add_ports();
  port->set_port_no(3);
  port->mutable_attachment()->set_container_id("0123456789abcdef");
  port->mutable_attachment()->set_ifname("net1");
  port->set_rx_packets(42);
  v1::DropCounter* d = s.add_drops();
  d->set_reason("ttl_exceeded");
  d->set_packets(7);
  std::string text = formatStats(s);
  EXPECT_NE(text.find("cycles per packet:               250.0"), std::string::npos) << text;
  EXPECT_NE(text.find("(1.000 Mpps)"), std::string::npos) << text;
  EXPECT_NE(text.find("(25.0 packets/batch)"), std::string::npos) << text;
  EXPECT_NE(text.find("(20.0 packets/burst)"), std::string::npos) << text;
  EXPECT_NE(text.find("    under a shared queue's lock: 10000 (25.0 %)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("PMD 0 (lcore 1, NUMA socket 1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("cycles/packet by stage: rx 30.0, parse 40.0, lookup 90.5, actions 60.0, tx 25.0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0123456789ab/net1"), std::string::npos) << text;
  EXPECT_NE(text.find("ttl_exceeded"), std::string::npos) << text;
  EXPECT_NE(text.find("ICMP errors sent:                    5  (2 more held back by icmp-error-rate)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("idle rx queue polls:               800  (49200 left to later iterations; 500 queues went idle, 3 "
                      "woke)\n"),
            std::string::npos)
      << text;
}

TEST(StatsFormatTest, ZeroPacketsDoNotDivideByZero) {
  v1::GetStatsResponse s;
  s.add_pmds();
  std::string text = formatStats(s);
  EXPECT_EQ(text.find("idle rx queue polls"), std::string::npos) << text;
  EXPECT_NE(text.find("cycles per packet:                 0.0"), std::string::npos) << text;
  EXPECT_NE(text.find("(no ports)"), std::string::npos);
}

TEST(StatsFormatTest, SleepIsShownAsAShareOfThePmdsWholeTime) {
  v1::GetStatsResponse s;
  s.set_tsc_hz(1'000'000'000);
  v1::PmdStats* p = s.add_pmds();
  p->set_busy_cycles(100);
  p->set_idle_cycles(100);
  p->set_sleep_cycles(800);
  p->set_sleeps(40);
  std::string text = formatStats(s);
  EXPECT_NE(text.find("(80.0 % of cycles, 40 sleeps)"), std::string::npos) << text;
  EXPECT_NE(text.find("(10.0 % of 1000)"), std::string::npos) << text;
  // A PMD that never slept does not show the line.
  p->set_sleeps(0);
  p->set_sleep_cycles(0);
  EXPECT_EQ(formatStats(s).find("asleep"), std::string::npos);
}

TEST(StatsFormatTest, HealthSaysWhetherReady) {
  v1::HealthResponse h;
  h.set_ready(false);
  EXPECT_EQ(formatHealth(h).rfind("NOT READY", 0), 0u);
  h.set_ready(true);
  EXPECT_EQ(formatHealth(h).rfind("ready", 0), 0u);
  EXPECT_EQ(formatHealth(h).find("IPv6"), std::string::npos) << "no line for a family the node lacks";
  h.set_pod_cidr_v6("fd00:250::/64");
  h.set_gateway_v6("fd00:250::1");
  EXPECT_NE(formatHealth(h).find("\n  IPv6: pod CIDR fd00:250::/64, gateway fd00:250::1\n"), std::string::npos)
      << formatHealth(h);
}

}  // namespace
namespace {

TEST(StatsFormatTest, TierBreakdownAndFlows) {
  v1::GetStatsResponse s;
  v1::PmdStats* p = s.add_pmds();
  p->set_packets(100);
  p->set_emc_hits(90);
  p->set_megaflow_hits(8);
  p->set_subtable_lookups(12);
  p->set_misses(2);
  p->set_upcalls(1);
  p->set_upcalls_coalesced(1);
  p->set_megaflows(1);
  std::string text = formatStats(s);
  EXPECT_NE(text.find("- EMC hits:                         90  ( 90.0 %)"), std::string::npos) << text;
  EXPECT_NE(text.find("avg. subtable lookups per megaflow hit: 1.50"), std::string::npos) << text;
  EXPECT_NE(text.find("upcalls 1, coalesced 1, lost 0"), std::string::npos) << text;

  v1::ListFlowsResponse flows;
  EXPECT_NE(formatFlows(flows).find("(no megaflows)"), std::string::npos);
  v1::Flow* f = flows.add_flows();
  f->set_match("eth_type=0x0800,ipv4_dst=10.0.0.2");
  f->set_mask("eth_type=0xffff,ipv4_dst=255.255.255.255");
  f->set_actions("drop:no_route");
  f->set_packets(7);
  std::string ft = formatFlows(flows);
  EXPECT_NE(ft.find("eth_type=0x0800,ipv4_dst=10.0.0.2 -> drop:no_route"), std::string::npos) << ft;
  EXPECT_NE(ft.find("mask: eth_type=0xffff,ipv4_dst=255.255.255.255"), std::string::npos) << ft;
}

TEST(StatsFormatTest, PortsShowTheirMtu) {
  v1::ListPortsResponse ports;
  v1::Port* p = ports.add_ports();
  p->set_port_no(3);
  p->mutable_attachment()->set_container_id("c0ffee");
  p->mutable_attachment()->set_ifname("net1");
  p->set_ip("10.244.1.10");
  p->set_mac("02:53:0a:f4:01:0a");
  p->set_link_up(true);
  p->set_mtu(1400);
  p->set_source_validation(true);  // as sluiced reports a checked port
  p->set_socket_path("/s.sock");
  const std::string text = formatPorts(ports);
  EXPECT_NE(text.find(" LINK MTU   SOCKET\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" up   1400  /s.sock\n"), std::string::npos) << text;
}

TEST(StatsFormatTest, PmdsShowTheirLoadAndThePortsTheyPoll) {
  v1::GetStatsResponse stats;
  for (uint32_t i = 0; i < 2; ++i) {
    v1::PmdStats* p = stats.add_pmds();
    p->set_index(i);
    p->set_lcore(i + 1);
  }
  stats.mutable_pmds(0)->set_busy_cycles(250);
  stats.mutable_pmds(0)->set_idle_cycles(750);
  stats.mutable_pmds(0)->set_packets(10);
  v1::PortStats* ps = stats.add_ports();
  ps->set_port_no(3);
  ps->set_rx_packets(4);
  v1::ListPortsResponse ports;
  v1::Port* a = ports.add_ports();
  a->set_port_no(3);
  a->mutable_attachment()->set_container_id("c0ffee");
  a->mutable_attachment()->set_ifname("net1");
  a->set_pmd(0);
  a->set_pmd_pinned(true);
  v1::Port* b = ports.add_ports();
  b->set_port_no(5);
  b->mutable_attachment()->set_container_id("beef");
  b->mutable_attachment()->set_ifname("net2");
  b->set_pmd(0);
  const std::string text = formatPmds(stats, ports);
  EXPECT_NE(text.find("PMD 0 (lcore 1, NUMA socket 0): busy 25.0 % of its cycles, 10 packets received, 25.0 cycles/packet\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  3     c0ffee/net1                 -              4   40.0%  pin (AddPort pmd)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  5     beef/net2                   -              0    0.0%  sluiced\n"), std::string::npos) << text;
  EXPECT_NE(text.find("PMD 1 (lcore 2, NUMA socket 0): busy 0.0 % of its cycles, 0 packets received, 0.0 cycles/packet\n"
                      "  PORT  ATTACHMENT             SOCKET     RX PACKETS   SHARE  PLACED BY\n  (no pod ports)\n"),
            std::string::npos)
      << text;
}

// A multi-queue port: `ports` names its queues and their PMDs; `pmd` lists
// it under each PMD polling one of its queues, with those queues.
TEST(StatsFormatTest, MultiQueuePortsShowEachQueuesPmd) {
  v1::ListPortsResponse ports;
  v1::Port* p = ports.add_ports();
  p->set_port_no(2);
  p->mutable_attachment()->set_container_id("mq");
  p->mutable_attachment()->set_ifname("net1");
  p->set_ip("10.244.1.10");
  p->set_mac("02:53:0a:f4:01:0a");
  p->set_mtu(1500);
  p->set_source_validation(true);
  p->set_socket_path("/s.sock");
  p->set_queues(4);
  for (uint32_t pmd : {0u, 1u, 0u, 1u}) p->add_queue_pmds(pmd);
  const std::string text = formatPorts(ports);
  EXPECT_NE(text.find(" 1500  /s.sock queues 4 pmds 0,1,0,1\n"), std::string::npos) << text;

  v1::GetStatsResponse stats;
  for (uint32_t i = 0; i < 2; ++i) stats.add_pmds()->set_index(i);
  v1::PortStats* ps = stats.add_ports();
  ps->set_port_no(2);
  ps->set_rx_packets(8);
  const std::string pmds = formatPmds(stats, ports);
  EXPECT_NE(pmds.find("PMD 0 (lcore 0, NUMA socket 0)"), std::string::npos) << pmds;
  EXPECT_NE(pmds.find("  2     mq/net1                     -              8       -  sluiced, queues 0,2 of 4\n"),
            std::string::npos)
      << pmds;
  EXPECT_NE(pmds.find("  2     mq/net1                     -              8       -  sluiced, queues 1,3 of 4\n"),
            std::string::npos)
      << pmds;

  // A sluiced that counts per queue: each PMD's line has its queues' packets
  // (and each queue's), their share of its packets, and the port's socket.
  p->set_numa_socket(1);
  stats.mutable_pmds(0)->set_packets(10);
  stats.mutable_pmds(0)->set_numa_socket(1);
  stats.mutable_pmds(1)->set_packets(20);
  const uint64_t per_queue[] = {3, 20, 2, 0};
  for (uint32_t q = 0; q < 4; ++q) {
    v1::RxQueueStats* rq = stats.add_rx_queues();
    rq->set_port_no(2);
    rq->set_queue(q);
    rq->set_pmd(q % 2);
    rq->set_packets(per_queue[q]);
  }
  const std::string counted = formatPmds(stats, ports);
  EXPECT_NE(counted.find("PMD 0 (lcore 0, NUMA socket 1):"), std::string::npos) << counted;
  EXPECT_NE(counted.find("  2     mq/net1                     1              5   50.0%  sluiced, queues 0 (3), 2 (2) of 4\n"),
            std::string::npos)
      << counted;
  EXPECT_NE(counted.find("  2     mq/net1                     1             20  100.0%  sluiced, queues 1 (20), 3 (0) of 4\n"),
            std::string::npos)
      << counted;
}

TEST(NodesFormatTest, ShowsEachNodesSourceAndAgeAndTheController) {
  v1::ListNodesResponse r;
  v1::RemoteNode* n = r.add_nodes();
  n->set_name("w2");
  n->set_vtep("192.168.77.2");
  n->add_pod_cidrs("10.244.2.0/24");
  n->set_source(v1::NODE_SOURCE_KUBERNETES);
  n->set_added_unix_seconds(1000);
  v1::RemoteNode* s = r.add_nodes();
  s->set_name("w3");
  s->set_source(v1::NODE_SOURCE_STATIC);
  v1::ControllerState* c = r.mutable_controller();
  c->set_node_name("w1");
  c->set_synced(true);
  c->set_resource_version("4711");
  c->set_reported_unix_seconds(1000 + 3 * 3600);
  (*c->mutable_counters())["relists_gone"] = 2;
  (*c->mutable_counters())["lists"] = 3;
  const std::string out = formatNodes(r, 1000 + 3 * 3600 + 5);
  EXPECT_NE(out.find("node controller (node w1): synced, resourceVersion 4711, reported 5s ago\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("  lists 3, relists_gone 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("SOURCE"), std::string::npos) << out;
  EXPECT_NE(out.find("  w2               kubernetes 192.168.77.2"), std::string::npos) << out;
  EXPECT_NE(out.find("  w3               static"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.find("  w2 ")).find(" 3h\n"), out.substr(out.find("  w2 ")).find('\n') - 3) << out;
  r.clear_controller();
  EXPECT_NE(formatNodes(r, 0).find("node controller: none reported\n"), std::string::npos);
}

TEST(NodesFormatTest, ShowsTheExternalGatewayAndItsNeighborState) {
  v1::ListNodesResponse r;
  v1::Overlay* o = r.mutable_overlay();
  o->set_vtep("192.168.78.1");
  EXPECT_EQ(formatNodes(r, 0).find("external gateway"), std::string::npos) << "none configured: not shown";
  v1::ExternalNetwork* x = o->mutable_external();
  x->set_gateway("192.168.78.254");
  x->set_neighbor_state("incomplete");
  EXPECT_NE(formatNodes(r, 0).find("external gateway 192.168.78.254 at - (incomplete)\n"), std::string::npos)
      << formatNodes(r, 0);
  x->set_vlan(100);
  x->set_gateway_mac("02:00:00:00:78:fe");
  x->set_neighbor_state("reachable");
  EXPECT_NE(formatNodes(r, 0).find("external gateway 192.168.78.254 VLAN 100 at 02:00:00:00:78:fe (reachable)\n"),
            std::string::npos)
      << formatNodes(r, 0);
}

TEST(NodesFormatTest, AgesAsKubectlPrintsThem) {
  EXPECT_EQ(formatAge(0, 100), "-");
  EXPECT_EQ(formatAge(100, 100), "0s");
  EXPECT_EQ(formatAge(100, 219), "119s");
  EXPECT_EQ(formatAge(100, 220), "2m");
  EXPECT_EQ(formatAge(100, 100 + 7199), "119m");
  EXPECT_EQ(formatAge(100, 100 + 7200), "2h");
  EXPECT_EQ(formatAge(100, 100 + 48 * 3600), "2d");
  EXPECT_EQ(formatAge(200, 100), "0s");  // a clock that went back
}

}  // namespace
}  // namespace sluice
