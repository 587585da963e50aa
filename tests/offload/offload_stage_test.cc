// Partial offload on real DPDK ethdevs in one process: the real PMD loop
// (Pmd::run on a thread), the real control path (DataplaneControl with its
// flow thread), the offload manager, and net_ring ports standing in for pods
// (a PortBackend that makes ring ethdevs, so the test can put frames into a
// port's rx ring and take them out of every tx ring).
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

#include "dataplane/control/dataplane_control.h"
#include "dataplane/control/offload/match_translate.h"
#include "dataplane/control/vxlan/overlay_control.h"
#include "dataplane/control/vxlan/uplink_io.h"
#include "dataplane/control/offload/offload_manager.h"
#include "dataplane/control/offload/rte_flow_provider.h"
#include "dataplane/control/offload/software_provider.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "dataplane/datapath/pmd.h"
#include "tests/support/frames.h"
#include "tests/unit/vxlan/vxlan_frames.h"

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

// The overlay's uplink as a ring ethdev: the test feeds its rx ring and
// reads its tx ring; ARP punts are kept in a ring the test may drain.
class RingUplink final : public UplinkIo {
 public:
  RingUplink() : id_(std::to_string(next_++)), name_("net_ring_offlup" + id_) {
    rx_ = rte_ring_create(("offl_up_rx" + id_).c_str(), 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    tx_ = rte_ring_create(("offl_up_tx" + id_).c_str(), 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    punt_ = rte_ring_create(("offl_up_punt" + id_).c_str(), 256, SOCKET_ID_ANY, RING_F_SC_DEQ);
    rte_spinlock_init(&lock_);
    EXPECT_TRUE(rx_ != nullptr && tx_ != nullptr && punt_ != nullptr);
    const int port = rte_eth_from_rings(name_.c_str(), &rx_, 1, &tx_, 1, SOCKET_ID_ANY);
    EXPECT_GE(port, 0);
    port_ = static_cast<uint16_t>(port);
    rte_eth_conf conf{};
    EXPECT_EQ(rte_eth_dev_configure(port_, 1, 1, &conf), 0);
    EXPECT_EQ(rte_eth_rx_queue_setup(port_, 0, 1024, SOCKET_ID_ANY, nullptr, g_pool), 0);
    EXPECT_EQ(rte_eth_tx_queue_setup(port_, 0, 1024, SOCKET_ID_ANY, nullptr), 0);
    EXPECT_EQ(rte_eth_dev_start(port_), 0);
  }
  ~RingUplink() override {
    rte_eth_dev_stop(port_);
    rte_eth_dev_close(port_);
    rte_vdev_uninit(name_.c_str());
    for (rte_ring* r : {rx_, tx_, punt_}) {
      void* obj;
      while (rte_ring_sc_dequeue(r, &obj) == 0) rte_pktmbuf_free(static_cast<rte_mbuf*>(obj));
      rte_ring_free(r);
    }
  }
  MacAddress mac() const override { return *MacAddress::parse("02:55:00:00:00:01"); }
  bool ipChecksumOffload() const override { return false; }
  uint16_t dpdkPort() const override { return port_; }
  rte_spinlock_t* txLock() override { return &lock_; }
  rte_ring* puntRing() override { return punt_; }
  absl::Status send(const std::vector<uint8_t>&) override { return absl::OkStatus(); }
  void drainPunted(const std::function<void(const uint8_t*, size_t)>& f) override {
    void* obj;
    while (rte_ring_sc_dequeue(punt_, &obj) == 0) {
      auto* m = static_cast<rte_mbuf*>(obj);
      f(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
      rte_pktmbuf_free(m);
    }
  }
  bool linkUp() override { return true; }
  rte_ring* rx() const { return rx_; }
  // What the PMD sent on the uplink.
  std::vector<test::Frame> collect() {
    std::vector<test::Frame> out;
    void* obj;
    while (rte_ring_sc_dequeue(tx_, &obj) == 0) {
      auto* m = static_cast<rte_mbuf*>(obj);
      const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
      out.emplace_back(d, d + rte_pktmbuf_data_len(m));
      rte_pktmbuf_free(m);
    }
    return out;
  }

 private:
  static inline unsigned next_ = 0;  // names are never reused within the process
  std::string id_;
  std::string name_;
  rte_ring* rx_ = nullptr;
  rte_ring* tx_ = nullptr;
  rte_ring* punt_ = nullptr;
  rte_spinlock_t lock_;
  uint16_t port_ = 0;
};

const Ipv4Address kGateway = *Ipv4Address::parse("10.77.0.1");
// The overlay: our VTEP, two remote nodes' VTEPs and pod CIDRs, the VNI.
const Ipv4Address kVtep = *Ipv4Address::parse("192.168.77.1");
const Ipv4Address kRemote2 = *Ipv4Address::parse("192.168.77.2");
const Ipv4Address kRemote3 = *Ipv4Address::parse("192.168.77.3");
const Ipv4Address kStranger = *Ipv4Address::parse("192.168.77.9");  // no remote node
constexpr uint32_t kVni = 42;
constexpr uint16_t kUplinkPort = kMaxPorts - 1;  // as sluiced numbers it
RemoteNodeConfig remoteNode(const std::string& name, Ipv4Address vtep, const std::string& cidr) {
  RemoteNodeConfig n;
  n.name = name;
  n.vtep = vtep;
  n.pod_cidrs = {*Ipv4Cidr::parse(cidr)};
  return n;
}
Ipv4Address podIp(unsigned host) { return Ipv4Address{kGateway.value - 1 + host}; }  // 10.77.0.<host>
MacAddress podMac(unsigned host) { return *MacAddress::parse("02:77:00:00:00:" + std::to_string(10 + host)); }

// One node: a PMD, the control path, the offload manager.
class Node {
 public:
  // vxlan: the node has a VXLAN uplink (remote node r2 configured) and
  // partial offload marks the uplink's packets, as sluiced without an
  // offload-port; otherwise pod port offl-c0/eth0 is the offload port.
  explicit Node(std::unique_ptr<offload::OffloadProvider> provider, bool vxlan = false)
      : dir_(std::filesystem::temp_directory_path() / ("offload_stage_" + std::to_string(::getpid()))),
        table_(4096), manager_(std::move(provider), /*max_flows=*/64) {
    std::filesystem::create_directories(dir_);
    config_.pod_cidr = *Ipv4Cidr::parse("10.77.0.0/24");
    config_.gateway = kGateway;
    config_.gateway_mac = MacAddress::fromIpv4(kGateway);
    config_.socket_dir = dir_.string();
    config_.offload_port = vxlan ? "" : "offl-c0/eth0";
    if (vxlan) {
      UplinkConfig up;
      up.devargs = "net_ring (test)";
      up.vtep = kVtep;
      up.vtep_prefix = 24;
      config_.overlay.uplink = up;
      config_.overlay.vni = kVni;
      config_.overlay.remote_nodes = {remoteNode("r2", kRemote2, "10.78.0.0/24")};
    }
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
    if (vxlan) {
      uplink_ = std::make_unique<RingUplink>();
      overlay_ = std::make_unique<OverlayControl>(config_.overlay, config_.pod_cidr, *uplink_, kUplinkPort, 1);
      control_->setOverlay(overlay_.get());
      manager_.attachPort(kUplinkPort, uplink_->dpdkPort(), 1);
    }
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
    if (uplink_) {
      manager_.detachPort(kUplinkPort);
      control_->setOverlay(nullptr);
    }
    control_.reset();
    overlay_.reset();
    uplink_.reset();
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
  // Destination pod "offl-d<host>" comes if absent, goes if present (a
  // table change for the differential tests); present tracks which are.
  void togglePod(unsigned host, std::map<unsigned, bool>& present) {
    const std::string name = "offl-d" + std::to_string(host);
    if (present[host]) deletePod(name);
    else addPod(name, host);
    present[host] = !present[host];
  }

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
  // Puts frames (at most a burst) into port_no's rx ring (the uplink's when
  // port_no is kUplinkPort) at once, so that the PMD receives them as one
  // burst, and waits until it processed them.
  void injectBurst(uint16_t port_no, const std::vector<Frame>& frames) {
    ASSERT_LE(frames.size(), kBurstSize);
    rte_mbuf* burst[kBurstSize];
    for (size_t i = 0; i < frames.size(); ++i) {
      burst[i] = rte_pktmbuf_alloc(g_pool);
      ASSERT_NE(burst[i], nullptr);
      std::memcpy(rte_pktmbuf_append(burst[i], static_cast<uint16_t>(frames[i].size())), frames[i].data(),
                  frames[i].size());
    }
    const uint64_t before = counters_.packets.read();
    const auto n = static_cast<unsigned>(frames.size());
    rte_ring* rx = port_no == kUplinkPort ? uplink_->rx() : backend_.ring(port_no)->rx;
    ASSERT_EQ(rte_ring_sp_enqueue_bulk(rx, reinterpret_cast<void**>(burst), n, nullptr), n);
    ASSERT_TRUE(waitUntil([&] { return counters_.packets.read() == before + n; }));
  }
  // The same into the uplink's rx ring.
  void injectUplink(const Frame& f) {
    rte_mbuf* m = rte_pktmbuf_alloc(g_pool);
    ASSERT_NE(m, nullptr);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(f.size())), f.data(), f.size());
    const uint64_t before = counters_.packets.read();
    ASSERT_EQ(rte_ring_sp_enqueue(uplink_->rx(), m), 0);
    ASSERT_TRUE(waitUntil([&] { return counters_.packets.read() == before + 1; }));
  }
  // Everything sent, the uplink's output as port kUplinkPort.
  std::vector<std::pair<uint16_t, Frame>> collectAll() {
    auto out = backend_.collect();
    if (uplink_)
      for (Frame& f : uplink_->collect()) out.emplace_back(kUplinkPort, std::move(f));
    return out;
  }
  // rx packets and bytes of every remote node's tunnel, by name.
  std::map<std::string, std::pair<uint64_t, uint64_t>> tunnelRx() {
    std::map<std::string, std::pair<uint64_t, uint64_t>> out;
    auto nodes = control_->listNodes();
    EXPECT_TRUE(nodes.ok());
    if (nodes.ok())
      for (const RemoteNodeView& n : *nodes) out[n.node.name] = {n.rx_packets, n.rx_bytes};
    return out;
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
  uint16_t uplinkDpdkPort() const { return uplink_->dpdkPort(); }
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
  std::unique_ptr<RingUplink> uplink_;
  std::unique_ptr<OverlayControl> overlay_;
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


// A VXLAN frame from remote VTEP `from` carrying UDP from a remote pod to dst.
Frame vxlanTo(Ipv4Address from, Ipv4Address dst, uint8_t ttl, uint16_t sport, uint32_t seq,
              const std::function<void(test::OuterSpec&)>& edit = nullptr) {
  test::UdpFrameSpec s;
  s.src_mac = *MacAddress::parse("02:78:00:00:00:05");
  s.dst_mac = MacAddress::fromIpv4(kGateway);
  s.src_ip = *Ipv4Address::parse("10.78.0.5");
  s.dst_ip = dst;
  s.ttl = ttl;
  s.src_port = sport;
  s.sequence = seq;
  test::OuterSpec o;
  o.src = from;
  o.dst = kVtep;
  o.vni = kVni;
  if (edit) edit(o);
  return test::vxlanFrame(test::udpFrame(s), o);
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
      if (r3) ASSERT_TRUE(node.control().deleteNode("r3").ok());
      else ASSERT_TRUE(node.control().addNode(remoteNode("r3", kRemote3, "10.79.0.0/24")).ok());
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
  ASSERT_TRUE(node.control().deleteNode("r2").ok());
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
  ASSERT_TRUE(node.control().addNode(remoteNode("r3", kRemote3, "10.79.0.0/24")).ok());
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
