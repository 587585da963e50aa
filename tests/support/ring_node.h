// A node in one process for tests of the real fast path: the real Pmd loop
// on a thread, the real control path (DataplaneControl with its flow thread),
// optionally the offload manager and a VXLAN uplink, and net_ring ethdevs
// standing in for pods and the uplink (a PortBackend that makes ring
// ethdevs, so a test puts frames into a port's rx ring and takes them out of
// every tx ring). Every injection waits until the PMD has processed it, so
// tests see the outcome of each frame or burst deterministically.
// Needs EAL (runRingNodeTests starts it: no hugepages, no PCI) and root.
#pragma once

#include <gtest/gtest.h>
#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/ethdev_open.h"
#include "dataplane/modules/offload/offload_manager.h"
#include "dataplane/modules/offload/offload_module.h"
#include "dataplane/modules/overlay/overlay_control.h"
#include "dataplane/modules/overlay/overlay_module.h"
#include "dataplane/modules/overlay/uplink_io.h"
#include "dataplane/datapath/flow/flow_lookup.h"
#include "dataplane/datapath/pmd.h"
#include "dataplane/datapath/tsan_dpdk.h"
#include "tests/support/frames.h"
#include "tests/unit/vxlan/vxlan_frames.h"

namespace sluice::test {

// The process's packet buffers (made by runRingNodeTests).
inline rte_mempool*& ringNodePool() {
  static rte_mempool* pool = nullptr;
  return pool;
}

// An mbuf of ringNodePool() holding frame f: one segment when f fits one
// buffer, else a chain of full buffers (as vhost delivers a jumbo frame).
inline rte_mbuf* frameMbuf(const Frame& f) {
  rte_mbuf* head = nullptr;
  size_t at = 0;
  do {
    rte_mbuf* seg = rte_pktmbuf_alloc(ringNodePool());
    if (seg == nullptr) {
      rte_pktmbuf_free(head);
      return nullptr;
    }
    const auto take = static_cast<uint16_t>(std::min<size_t>(f.size() - at, rte_pktmbuf_tailroom(seg)));
    std::memcpy(rte_pktmbuf_append(seg, take), f.data() + at, take);
    at += take;
    if (head == nullptr) {
      head = seg;
    } else if (rte_pktmbuf_chain(head, seg) != 0) {
      rte_pktmbuf_free(seg);
      rte_pktmbuf_free(head);
      return nullptr;
    }
  } while (at < f.size());
  return head;
}

// The frame an mbuf holds, every segment of it.
inline Frame mbufFrame(const rte_mbuf* m) {
  Frame f(rte_pktmbuf_pkt_len(m));
  const void* d = rte_pktmbuf_read(m, 0, static_cast<uint32_t>(f.size()), f.data());
  if (d != f.data()) std::memcpy(f.data(), d, f.size());
  return f;
}

inline bool waitUntil(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(10)) {
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
  absl::StatusOr<CreatedPort> createVhostUser(uint16_t port_no, const std::string&, bool, uint16_t) override {
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
    if (!openEthdev(r.dpdk_port, rte_eth_conf{}, ringNodePool()).ok() || !annotatePortHandover(r.dpdk_port))
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
  bool linkUp(const CreatedPort&) override { return true; }

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
        takeOver(m);
        out.emplace_back(port_no, mbufFrame(m));
        rte_pktmbuf_free(m);
      }
    }
    return out;
  }

 private:
  static void drain(rte_ring* ring) {
    void* obj;
    while (rte_ring_sc_dequeue(ring, &obj) == 0) {
      takeOver(static_cast<rte_mbuf*>(obj));
      rte_pktmbuf_free(static_cast<rte_mbuf*>(obj));
    }
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
    const absl::Status opened = openEthdev(port_, rte_eth_conf{}, ringNodePool());
    EXPECT_TRUE(opened.ok()) << opened;
    EXPECT_TRUE(annotatePortHandover(port_));
  }
  ~RingUplink() override {
    rte_eth_dev_stop(port_);
    rte_eth_dev_close(port_);
    rte_vdev_uninit(name_.c_str());
    for (rte_ring* r : {rx_, tx_, punt_}) {
      void* obj;
      while (rte_ring_sc_dequeue(r, &obj) == 0) {
        takeOver(static_cast<rte_mbuf*>(obj));
        rte_pktmbuf_free(static_cast<rte_mbuf*>(obj));
      }
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
      takeOver(m);
      f(rte_pktmbuf_mtod(m, const uint8_t*), rte_pktmbuf_data_len(m));
      rte_pktmbuf_free(m);
    }
  }
  bool linkUp() override { return true; }
  rte_ring* rx() const { return rx_; }
  // What the PMD sent on the uplink.
  std::vector<Frame> collect() {
    std::vector<Frame> out;
    void* obj;
    while (rte_ring_sc_dequeue(tx_, &obj) == 0) {
      auto* m = static_cast<rte_mbuf*>(obj);
      takeOver(m);
      out.emplace_back(mbufFrame(m));
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
constexpr uint16_t kUplinkPort = kUplinkPortNo;  // as sluiced numbers it
inline RemoteNodeConfig remoteNode(const std::string& name, Ipv4Address vtep, const std::string& cidr) {
  RemoteNodeConfig n;
  n.name = name;
  n.vtep = vtep;
  n.pod_cidrs = {*Ipv4Cidr::parse(cidr)};
  return n;
}
inline Ipv4Address podIp(unsigned host) { return Ipv4Address{kGateway.value - 1 + host}; }  // 10.77.0.<host>
inline MacAddress podMac(unsigned host) { return *MacAddress::parse("02:77:00:00:00:" + std::to_string(10 + host)); }

// What a Node is made with besides its offload provider.
struct NodeOptions {
  bool vxlan = false;          // a VXLAN uplink, remote node r2 configured
  uint32_t flow_limit = 4096;  // megaflows
  UpcallGateConfig gate{};     // tsc_hz 0: the real TSC rate
  // ICMP errors: tsc_hz 0 is the gate's; by default a budget no test can
  // spend, so that every expired packet is answered however long a test takes.
  IcmpErrorLimiterConfig icmp_errors{0, 10'000'000};
  // Last changes to sluiced's configuration (more remote CIDRs, static
  // neighbors) before the node is made from it.
  std::function<void(SluicedConfig&)> edit_config;
};

// What a pod's port (Node::addPod) may differ in from the defaults. Outside
// Node: a nested type's member initializers cannot make its default argument.
struct PodSettings {
  uint32_t mtu = 0;               // 0: the node's default
  std::string ipv6 = {};          // empty: none
  bool source_validation = true;  // false: the pod may send with any source (a router)
};

// One node: a PMD, the control path and, given a provider, the offload manager.
class Node {
 public:
  // vxlan: the node has a VXLAN uplink (remote node r2 configured) and
  // partial offload marks the uplink's packets, as sluiced without an
  // offload-port; otherwise pod port offl-c0/eth0 is the offload port.
  // A null provider: no partial offload at all.
  explicit Node(std::unique_ptr<offload::OffloadProvider> provider, bool vxlan = false)
      : Node(std::move(provider), NodeOptions{vxlan, 4096, {}, {}, {}}) {}
  Node(std::unique_ptr<offload::OffloadProvider> provider, const NodeOptions& options)
      : dir_(std::filesystem::temp_directory_path() / ("ring_node_" + std::to_string(::getpid()))),
        table_(*(pmd_context_.megaflows = std::make_unique<flow::MegaflowTable>(options.flow_limit))),
        manager_(provider ? std::make_unique<offload::OffloadManager>(std::move(provider), /*max_flows=*/64)
                          : nullptr) {
    const bool vxlan = options.vxlan;
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
    if (options.edit_config) options.edit_config(config_);
    flow::FlowLookupConfig fc;
    fc.emc = {256, 4, 7};
    fc.smc = {1024, true};
    pmd_context_.lookup = std::move(*flow::FlowLookup::create(fc, table_));
    pmd_context_.gate = options.gate;
    if (pmd_context_.gate.tsc_hz == 0) pmd_context_.gate.tsc_hz = rte_get_tsc_hz();
    pmd_context_.icmp_errors = options.icmp_errors;
    pmd_context_.fragment_pool = ringNodePool();
    pmd_context_.marks = manager_ ? &manager_->marks() : nullptr;
    pmd_ = std::make_unique<Pmd>(pmd_context_);
    control_ = std::make_unique<DataplaneControl>(config_, backend_, std::vector<PmdContext*>{&pmd_context_},
                                                  rte_get_tsc_hz());
    if (manager_) {
      OffloadModule::Target target{config_.offload_port, std::nullopt};
      if (vxlan) target.port_no = kUplinkPort;
      offload_module_ = std::make_unique<OffloadModule>(*control_, *manager_, target);
    }
    if (vxlan) {
      uplink_ = std::make_unique<RingUplink>();
      overlay_ = std::make_unique<OverlayControl>(config_.overlay, config_.pod_cidr, *uplink_, kUplinkPort, 1);
      overlay_module_ = std::move(*OverlayModule::attach(*control_, *overlay_));
    }
    control_->start();
    thread_ = std::thread([this] { pmd_->run(); });
    EXPECT_TRUE(waitUntil([this] { return mailbox_.running.load(); }));
  }
  ~Node() {
    control_->removeAllPorts();
    control_->stopFlowThread();
    mailbox_.stop.store(true);
    thread_.join();
    overlay_module_.reset();
    offload_module_.reset();
    control_.reset();
    overlay_.reset();
    uplink_.reset();
    std::filesystem::remove_all(dir_);
  }

  uint16_t addPod(const std::string& container, unsigned host, const PodSettings& settings = {}) {
    RawPortRequest r;
    r.container_id = container;
    r.ifname = "eth0";
    r.ip = podIp(host).toString();
    r.mac = podMac(host).toString();
    r.mtu = settings.mtu;
    r.ipv6 = settings.ipv6;
    r.source_validation = settings.source_validation;
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
    rte_mbuf* m = frameMbuf(f);
    ASSERT_NE(m, nullptr);
    const uint64_t before = counters_.packets.read();
    handOver(m);
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
      burst[i] = frameMbuf(frames[i]);
      ASSERT_NE(burst[i], nullptr);
    }
    const uint64_t before = counters_.packets.read();
    const auto n = static_cast<unsigned>(frames.size());
    for (unsigned i = 0; i < n; ++i) handOver(burst[i]);
    rte_ring* rx = port_no == kUplinkPort ? uplink_->rx() : backend_.ring(port_no)->rx;
    ASSERT_EQ(rte_ring_sp_enqueue_bulk(rx, reinterpret_cast<void**>(burst), n, nullptr), n);
    ASSERT_TRUE(waitUntil([&] { return counters_.packets.read() == before + n; }));
  }
  // The same into the uplink's rx ring.
  void injectUplink(const Frame& f) {
    rte_mbuf* m = frameMbuf(f);
    ASSERT_NE(m, nullptr);
    const uint64_t before = counters_.packets.read();
    handOver(m);
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
    for (const RemoteNodeView& n : overlay_module_->listNodes()) out[n.node.name] = {n.rx_packets, n.rx_bytes};
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
  rte_ring* uplinkRx() const { return uplink_->rx(); }
  PmdCounters& counters() { return counters_; }
  PmdContext& pmdContext() { return pmd_context_; }
  offload::OffloadManager& manager() { return *manager_; }
  DataplaneControl& control() { return *control_; }
  OverlayModule& overlay() { return *overlay_module_; }
  OffloadModule& offload() { return *offload_module_; }

 private:
  std::filesystem::path dir_;
  SluicedConfig config_;
  RingBackend backend_;
  PmdContext pmd_context_;
  PmdMailbox& mailbox_ = pmd_context_.mailbox;
  PmdCounters& counters_ = pmd_context_.counters;
  flow::MegaflowTable& table_;
  std::unique_ptr<offload::OffloadManager> manager_;
  std::unique_ptr<Pmd> pmd_;
  std::unique_ptr<DataplaneControl> control_;
  std::unique_ptr<RingUplink> uplink_;
  std::unique_ptr<OverlayControl> overlay_;
  std::unique_ptr<OffloadModule> offload_module_;
  std::unique_ptr<OverlayModule> overlay_module_;
  std::thread thread_;
};

inline Frame udpTo(unsigned src_host, Ipv4Address dst, uint8_t ttl, uint16_t sport, uint32_t seq) {
  UdpFrameSpec s;
  s.src_mac = podMac(src_host);
  s.dst_mac = MacAddress::fromIpv4(kGateway);
  s.src_ip = podIp(src_host);
  s.dst_ip = dst;
  s.ttl = ttl;
  s.src_port = sport;
  s.sequence = seq;
  return udpFrame(s);
}

// A VXLAN frame from remote VTEP `from` carrying UDP from a remote pod to dst.
inline Frame vxlanTo(Ipv4Address from, Ipv4Address dst, uint8_t ttl, uint16_t sport, uint32_t seq,
              const std::function<void(OuterSpec&)>& edit = nullptr) {
  UdpFrameSpec s;
  s.src_mac = *MacAddress::parse("02:78:00:00:00:05");
  s.dst_mac = MacAddress::fromIpv4(kGateway);
  s.src_ip = *Ipv4Address::parse("10.78.0.5");
  s.dst_ip = dst;
  s.ttl = ttl;
  s.src_port = sport;
  s.sequence = seq;
  OuterSpec o;
  o.src = from;
  o.dst = kVtep;
  o.vni = kVni;
  if (edit) edit(o);
  return vxlanFrame(udpFrame(s), o);
}

// Starts EAL (no hugepages, no PCI, a file prefix of its own) and the packet
// pool that ring nodes take their mbufs from.
inline bool startRingNodeEal(const std::string& name) {
  const std::string prefix = "--file-prefix=" + name + "_" + std::to_string(::getpid());
  std::vector<std::string> args = {name, "-l", "0", "--no-huge", "--no-pci", "-m", "512", "--no-shconf", prefix,
                                   "--log-level=3"};
  std::vector<char*> argv_eal;
  for (auto& a : args) argv_eal.push_back(a.data());
  if (rte_eal_init(static_cast<int>(argv_eal.size()), argv_eal.data()) < 0) {
    std::fprintf(stderr, "EAL initialisation failed\n");
    return false;
  }
  ringNodePool() = rte_pktmbuf_pool_create_by_ops("ring_node_pool", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                                  SOCKET_ID_ANY, handoverPoolOps());
  return ringNodePool() != nullptr;
}

// A test binary's main: EAL, every test, EAL stopped.
inline int runRingNodeTests(int argc, char** argv, const std::string& name) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!startRingNodeEal(name)) return 1;
  const int rc = RUN_ALL_TESTS();
  rte_eal_cleanup();
  return rc;
}

}  // namespace sluice::test
