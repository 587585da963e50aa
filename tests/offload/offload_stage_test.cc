// Partial offload on real DPDK ethdevs in one process: the real PMD loop
// (Pmd::run on a thread), the real control path (DataplaneControl with its
// flow thread), the offload manager, and net_ring ports standing in for pods
// (a PortBackend that makes ring ethdevs, so the test can put frames into a
// port's rx ring and take them out of every tx ring).
//
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
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "dataplane/control/dataplane_control.h"
#include "dataplane/control/offload/offload_manager.h"
#include "dataplane/control/offload/rte_flow_provider.h"
#include "dataplane/control/offload/software_provider.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "dataplane/datapath/pmd.h"
#include "tests/support/frames.h"

namespace sluice {
namespace {

using test::Frame;

rte_mempool* g_pool = nullptr;

bool waitUntil(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Pods as ring ethdevs: rx ring (test -> PMD) and tx ring (PMD -> test).
class RingBackend final : public PortBackend {
 public:
  struct Ring {
    std::string name;
    rte_ring* rx = nullptr;
    rte_ring* tx = nullptr;
    uint16_t dpdk_port = 0;
  };
  absl::StatusOr<CreatedPort> createVhostUser(uint16_t port_no, const std::string&, bool) override {
    Ring r;
    const unsigned id = next_++;
    r.name = "net_ring_offl" + std::to_string(id);
    r.rx = rte_ring_create(("offl_rx" + std::to_string(id)).c_str(), 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    r.tx = rte_ring_create(("offl_tx" + std::to_string(id)).c_str(), 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (r.rx == nullptr || r.tx == nullptr) return absl::InternalError("rte_ring_create");
    const int port = rte_eth_from_rings(r.name.c_str(), &r.rx, 1, &r.tx, 1, SOCKET_ID_ANY);
    if (port < 0) return absl::InternalError("rte_eth_from_rings");
    // Configured and started like any port (the ring PMD's queue setup keeps
    // the rings given above; start installs the burst functions).
    r.dpdk_port = static_cast<uint16_t>(port);
    rte_eth_conf conf{};
    if (rte_eth_dev_configure(r.dpdk_port, 1, 1, &conf) != 0 ||
        rte_eth_rx_queue_setup(r.dpdk_port, 0, 1024, SOCKET_ID_ANY, nullptr, g_pool) != 0 ||
        rte_eth_tx_queue_setup(r.dpdk_port, 0, 1024, SOCKET_ID_ANY, nullptr) != 0 || rte_eth_dev_start(r.dpdk_port) != 0)
      return absl::InternalError("configuring the ring port");
    rings_[port_no] = r;
    return CreatedPort{r.dpdk_port, r.name, 1};
  }
  void destroy(const CreatedPort& port) override {
    for (auto it = rings_.begin(); it != rings_.end(); ++it) {
      if (it->second.dpdk_port != port.dpdk_port) continue;
      rte_eth_dev_stop(port.dpdk_port);
      rte_eth_dev_close(port.dpdk_port);
      rte_vdev_uninit(it->second.name.c_str());
      drain(it->second.rx);
      drain(it->second.tx);
      rte_ring_free(it->second.rx);
      rte_ring_free(it->second.tx);
      rings_.erase(it);
      return;
    }
  }
  bool linkUp(uint16_t) override { return true; }

  const Ring* ring(uint16_t port_no) const {
    auto it = rings_.find(port_no);
    return it == rings_.end() ? nullptr : &it->second;
  }
  // Everything the PMD sent, by port number.
  std::vector<std::pair<uint16_t, Frame>> collect() {
    std::vector<std::pair<uint16_t, Frame>> out;
    for (auto& [port_no, r] : rings_) {
      void* obj;
      while (rte_ring_sc_dequeue(r.tx, &obj) == 0) {
        auto* m = static_cast<rte_mbuf*>(obj);
        const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
        out.emplace_back(port_no, Frame(d, d + rte_pktmbuf_data_len(m)));
        rte_pktmbuf_free(m);
      }
    }
    return out;
  }

 private:
  static void drain(rte_ring* ring) {
    void* obj;
    while (rte_ring_sc_dequeue(ring, &obj) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(obj));
  }
  std::map<uint16_t, Ring> rings_;
  static inline unsigned next_ = 0;  // names are never reused within the process
};

const Ipv4Address kGateway = *Ipv4Address::parse("10.77.0.1");
Ipv4Address podIp(unsigned host) { return Ipv4Address{kGateway.value - 1 + host}; }  // 10.77.0.<host>
MacAddress podMac(unsigned host) { return *MacAddress::parse("02:77:00:00:00:" + std::to_string(10 + host)); }

// One node: a PMD, the control path, the offload manager.
class Node {
 public:
  explicit Node(std::unique_ptr<offload::OffloadProvider> provider)
      : dir_(std::filesystem::temp_directory_path() / ("offload_stage_" + std::to_string(::getpid()))),
        table_(4096), manager_(std::move(provider), /*max_flows=*/64) {
    std::filesystem::create_directories(dir_);
    config_.pod_cidr = *Ipv4Cidr::parse("10.77.0.0/24");
    config_.gateway = kGateway;
    config_.gateway_mac = MacAddress::fromIpv4(kGateway);
    config_.socket_dir = dir_.string();
    config_.offload_port = "offl-c0/eth0";
    config_.flow_idle_timeout_ms = 600000;  // nothing expires during the test
    flow::FlowLookupConfig fc;
    fc.emc = {256, 4, 7};
    fc.smc = {1024, true};
    lookup_ = std::move(*flow::FlowLookup::create(fc, table_));
    PmdFlowParts parts{lookup_.get(), &table_, &upcalls_, {}};
    parts.gate.tsc_hz = rte_get_tsc_hz();
    parts.marks = &manager_.marks();
    parts.pmd_index = 0;
    pmd_ = std::make_unique<Pmd>(mailbox_, counters_, parts);
    control_ = std::make_unique<DataplaneControl>(
        config_, backend_, std::vector<PmdHandle>{{0, &mailbox_, &counters_, &table_, &upcalls_}}, rte_get_tsc_hz());
    control_->setOffload(&manager_);
    control_->start();
    thread_ = std::thread([this] { pmd_->run(); });
    EXPECT_TRUE(waitUntil([this] { return mailbox_.running.load(); }));
  }
  ~Node() {
    control_->removeAllPorts();
    control_->stopFlowThread();
    mailbox_.stop.store(true);
    thread_.join();
    control_.reset();
    std::filesystem::remove_all(dir_);
  }

  uint16_t addPod(const std::string& container, unsigned host) {
    RawPortRequest r;
    r.container_id = container;
    r.ifname = "eth0";
    r.ip = podIp(host).toString();
    r.mac = podMac(host).toString();
    auto added = control_->addPort(r);
    EXPECT_TRUE(added.ok()) << added.status();
    return added.ok() ? added->port.port_no : 0;
  }
  void deletePod(const std::string& container) { EXPECT_TRUE(control_->deletePort({container, "eth0"}).ok()); }

  // Puts one frame into port_no's rx ring and waits until the PMD has
  // processed it (its outputs are then in the tx rings).
  void inject(uint16_t port_no, const Frame& f) {
    rte_mbuf* m = rte_pktmbuf_alloc(g_pool);
    ASSERT_NE(m, nullptr);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
    const uint64_t before = counters_.packets.read();
    ASSERT_EQ(rte_ring_sp_enqueue(backend_.ring(port_no)->rx, m), 0);
    ASSERT_TRUE(waitUntil([&] { return counters_.packets.read() == before + 1; }));
  }
  // Waits until control lists a megaflow whose match contains `text`.
  bool waitForFlow(const std::string& text) {
    return waitUntil([&] {
      for (const FlowView& f : control_->listFlows())
        if (f.match.find(text) != std::string::npos) return true;
      return false;
    });
  }
  std::string offloadState(const std::string& match_text) {
    for (const FlowView& f : control_->listFlows())
      if (f.match.find(match_text) != std::string::npos) return f.offload;
    return "(no flow)";
  }

  RingBackend& backend() { return backend_; }
  PmdCounters& counters() { return counters_; }
  offload::OffloadManager& manager() { return manager_; }
  DataplaneControl& control() { return *control_; }

 private:
  std::filesystem::path dir_;
  SluicedConfig config_;
  RingBackend backend_;
  PmdMailbox mailbox_;
  PmdCounters counters_;
  flow::MegaflowTable table_;
  std::unique_ptr<flow::FlowLookup> lookup_;
  UpcallQueue upcalls_;
  offload::OffloadManager manager_;
  std::unique_ptr<Pmd> pmd_;
  std::unique_ptr<DataplaneControl> control_;
  std::thread thread_;
};

Frame udpTo(unsigned src_host, Ipv4Address dst, uint8_t ttl, uint16_t sport, uint32_t seq) {
  test::UdpFrameSpec s;
  s.src_mac = podMac(src_host);
  s.dst_mac = MacAddress::fromIpv4(kGateway);
  s.src_ip = podIp(src_host);
  s.dst_ip = dst;
  s.ttl = ttl;
  s.src_port = sport;
  s.sequence = seq;
  return test::udpFrame(s);
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
    rte_eth_conf conf{};
    ASSERT_EQ(rte_eth_dev_configure(port, 1, 1, &conf), 0);
    ASSERT_EQ(rte_eth_rx_queue_setup(port, 0, 256, SOCKET_ID_ANY, nullptr, g_pool), 0);
    ASSERT_EQ(rte_eth_tx_queue_setup(port, 0, 256, SOCKET_ID_ANY, nullptr), 0);
    ASSERT_EQ(rte_eth_dev_start(port), 0);
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
  ASSERT_TRUE(s.offload.has_value());
  EXPECT_EQ(s.offload->provider, "rte_flow");
  EXPECT_TRUE(s.offload->port_attached);
  EXPECT_FALSE(s.offload->capable);
  EXPECT_NE(s.offload->capability_reason.find("rte_flow_validate"), std::string::npos) << s.offload->capability_reason;
  EXPECT_EQ(s.offload->offloaded, 0u);
  EXPECT_EQ(s.offload->refused["port_not_capable"], 1u);  // the one megaflow
  EXPECT_EQ(s.pmds[0].mark_hits, 0u);
  EXPECT_EQ(s.pmds[0].mark_misses, 0u);
  EXPECT_EQ(node.offloadState("ipv4_dst=10.77.0.12"), "no (port_not_capable)");
}

TEST(OffloadStageTest, SoftwareEngineMarkedAndUnmarkedGiveTheSameOutput) {
  auto provider = std::make_unique<offload::SoftwareProvider>(128);
  offload::SoftwareProvider& engine = *provider;
  Node node(std::move(provider));
  const uint16_t offload_port = node.addPod("offl-c0", 10);
  const uint16_t plain_port = node.addPod("offl-c1", 11);
  std::map<unsigned, bool> present;  // destination pods 20..27
  std::mt19937 rng(0x0ff10ad);
  const std::array<uint8_t, 4> ttls = {64, 2, 1, 0};
  uint64_t offload_sent = 0, compared = 0;
  const uint64_t hits_before = node.counters().mark_hits.read();
  uint64_t marked_on_plain = 0;
  for (int round = 0; round < 40; ++round) {
    // A table change: a destination pod comes or goes (revalidation).
    const unsigned host = 20 + rng() % 8;
    if (present[host]) node.deletePod("offl-d" + std::to_string(host));
    else node.addPod("offl-d" + std::to_string(host), host);
    present[host] = !present[host];
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
  EXPECT_TRUE(node.backend().collect().empty());

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
  EXPECT_TRUE(node.backend().collect().empty());
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string prefix = "--file-prefix=offload_stage_" + std::to_string(::getpid());
  std::vector<std::string> args = {"offload_stage_test", "-l", "0", "--no-huge", "--no-pci", "-m", "512",
                                   "--no-shconf", prefix, "--log-level=3"};
  std::vector<char*> argv_eal;
  for (auto& a : args) argv_eal.push_back(a.data());
  if (rte_eal_init(static_cast<int>(argv_eal.size()), argv_eal.data()) < 0) {
    std::fprintf(stderr, "EAL initialisation failed\n");
    return 1;
  }
  sluice::g_pool = rte_pktmbuf_pool_create("offl_pool", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (sluice::g_pool == nullptr) return 1;
  const int rc = RUN_ALL_TESTS();
  rte_eal_cleanup();
  return rc;
}
