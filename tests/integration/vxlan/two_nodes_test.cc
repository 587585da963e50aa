// Two sluiced instances as two nodes (separate EAL file prefixes and API
// sockets), their uplinks joined by a veth pair: pods on each exchange UDP
// through the overlay both ways, IPv4 and IPv6 (inside the IPv4 underlay),
// with exact counters on both nodes; and frames of 9000 bytes of IP, with
// the underlay's MTU raised.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"
#include "tests/integration/vxlan/netns_topology.h"

namespace sluice::test {
namespace {

struct Node {
  std::unique_ptr<SluicedProcess> sluiced;
  std::unique_ptr<VirtioPod> pod;
  Ipv4Address pod_ip, gateway;
  Ipv6Address pod_ip6;
};

const v1::RemoteNode* tunnelOf(const v1::GetStatsResponse& s) { return s.tunnels_size() == 1 ? &s.tunnels(0) : nullptr; }

class TwoNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(podPool(), nullptr);
    const std::string tag = processTag();
    const std::string if_a = "slvn" + tag + "a", if_b = "slvn" + tag + "b";
    ASSERT_TRUE(topo_.addVeth(if_a, "", if_b, "")) << topo_.error();
    if (jumbo_) {
      for (const std::string& i : {if_a, if_b}) {
        const std::string cmd = "ip link set dev " + i + " mtu 9216";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      }
    }
    dir_ = "/tmp/slvx2-" + tag;
    std::filesystem::create_directories(dir_);
    const std::string vtep_a = underlay6_ ? "fd00:88::1" : "192.168.88.1";
    const std::string vtep_b = underlay6_ ? "fd00:88::2" : "192.168.88.2";
    startNode(a_, "a", if_a, "10.244.0.0/24", "fd00:44::/64", vtep_a, "b", vtep_b, "10.244.1.0/24", "fd00:44:1::/64");
    startNode(b_, "b", if_b, "10.244.1.0/24", "fd00:44:1::/64", vtep_b, "a", vtep_a, "10.244.0.0/24", "fd00:44::/64");
  }

  void TearDown() override {
    for (Node* n : {&a_, &b_}) {
      n->pod.reset();
      if (n->sluiced) {
        EXPECT_EQ(n->sluiced->stop(), 0) << n->sluiced->log();
      }
    }
    std::filesystem::remove_all(dir_);
  }

  void startNode(Node& n, const std::string& name, const std::string& uplink_if, const std::string& cidr,
                 const std::string& cidr6, const std::string& vtep, const std::string& peer,
                 const std::string& peer_vtep, const std::string& peer_cidr, const std::string& peer_cidr6) {
    const std::string cfg = dir_ + "/" + name + ".json";
    // Jumbo: net_af_packet copies a received frame into one mbuf and never
    // chains, so its ring's frames and sluiced's buffers must hold a whole
    // 9216-byte VXLAN frame; the uplink's MTU makes the overlay MTU 9166.
    const std::string af_packet_sizes = jumbo_ ? ",framesz=10240,blocksz=20480" : "";
    const std::string uplink_mtu = jumbo_ ? R"(, "mtu": 9216)" : "";
    std::ofstream(cfg) << R"({"vni": 7, "uplink": {"devargs": "net_af_packet0,iface=)" << uplink_if << af_packet_sizes
                       << R"(", "vtep": ")" << vtep << (underlay6_ ? "/64\"" : "/24\"") << uplink_mtu
                       << R"(}, "remote-nodes": [{"name": ")" << peer << R"(", "vtep": ")" << peer_vtep
                       << R"(", "pod-cidrs": [")" << peer_cidr << R"(", ")" << peer_cidr6 << R"("]}]})";
    SluicedOptions o;
    o.pod_cidr = cidr;
    // The UPF test's pool is the one routed prefix range the nodes allow.
    o.extra_flags = {"--config", cfg, "--pod-cidr-v6", cidr6, "--routed-prefix-ranges", "10.100.0.0/16"};
    if (jumbo_) o.extra_flags.insert(o.extra_flags.end(), {"--port-mtu", "9216", "--mbuf-size", "10240"});
    std::string error;
    n.sluiced = SluicedProcess::start(o, &error);
    ASSERT_NE(n.sluiced, nullptr) << error;
    const Ipv4Cidr c = *Ipv4Cidr::parse(cidr);
    n.gateway = Ipv4Address{c.network.value + 1};
    n.pod_ip = Ipv4Address{c.network.value + 10};
    n.pod_ip6 = Ipv6Cidr::parse(cidr6)->host(10);
    v1::AddPortRequest req;
    req.mutable_attachment()->set_container_id("pod-" + name);
    req.mutable_attachment()->set_ifname("eth0");
    req.set_ip(n.pod_ip.toString());
    req.set_ipv6(n.pod_ip6.toString());
    v1::AddPortResponse resp;
    ASSERT_TRUE(n.sluiced->addPort(req, &resp).ok());
    auto pod = VirtioPod::create(resp.port().socket_path(), false, podPool());
    ASSERT_TRUE(pod.ok()) << pod.status();
    n.pod = std::move(*pod);
    ASSERT_TRUE(n.sluiced->waitLinkUp(resp.port().port_no())) << n.sluiced->log();
  }

  // n frames from `from`'s pod to `to`'s pod; checks they arrive rewritten.
  void sendAndCheck(Node& from, Node& to, int n, size_t frame_len = UdpFrameSpec{}.frame_len) {
    std::vector<Frame> frames;
    for (int i = 0; i < n; ++i) {
      UdpFrameSpec s{MacAddress::fromIpv4(from.pod_ip), MacAddress::fromIpv4(from.gateway), from.pod_ip, to.pod_ip};
      s.frame_len = frame_len;
      s.sequence = static_cast<uint32_t>(i);
      s.src_port = static_cast<uint16_t>(5000 + i % 16);
      Frame f = udpFrame(s);
      // A payload pattern that shows a misplaced byte (UDP checksum off).
      for (size_t b = 46; b < f.size(); ++b) f[b] = static_cast<uint8_t>(b * 7 + b / 251);
      f[40] = f[41] = 0;
      frames.push_back(std::move(f));
    }
    ASSERT_EQ(from.pod->send(frames), frames.size());
    std::vector<Frame> got = to.pod->receive(frames.size());
    ASSERT_EQ(got.size(), frames.size()) << from.sluiced->stats().DebugString() << to.sluiced->stats().DebugString();
    for (size_t i = 0; i < got.size(); ++i) {
      const Frame& f = got[i];
      ASSERT_EQ(f.size(), frames[i].size());
      EXPECT_EQ(ethDst(f), MacAddress::fromIpv4(to.pod_ip));
      EXPECT_EQ(ethSrc(f), MacAddress::fromIpv4(to.gateway));
      EXPECT_EQ(ipv4Ttl(f), 62) << "one hop per node";
      EXPECT_TRUE(ipv4ChecksumValid(f));
      EXPECT_EQ(udpSequence(f), i) << "order kept";
      EXPECT_TRUE(std::equal(f.begin() + 26, f.end(), frames[i].begin() + 26)) << "addresses and payload intact";
    }
  }

  // The same over IPv6: hop limit one lower per node, the rest as sent.
  void sendAndCheck6(Node& from, Node& to, int n) {
    std::vector<Frame> frames;
    for (int i = 0; i < n; ++i) {
      Udp6FrameSpec s{MacAddress::fromIpv4(from.pod_ip), MacAddress::fromIpv4(from.gateway), from.pod_ip6,
                      to.pod_ip6};
      s.sequence = static_cast<uint32_t>(i);
      s.src_port = static_cast<uint16_t>(5000 + i % 16);
      frames.push_back(udp6Frame(s));
    }
    ASSERT_EQ(from.pod->send(frames), frames.size());
    std::vector<Frame> got = to.pod->receive(frames.size());
    ASSERT_EQ(got.size(), frames.size()) << from.sluiced->stats().DebugString() << to.sluiced->stats().DebugString();
    for (size_t i = 0; i < got.size(); ++i) {
      const Frame& f = got[i];
      ASSERT_EQ(f.size(), frames[i].size());
      EXPECT_EQ(ethDst(f), MacAddress::fromIpv4(to.pod_ip));
      EXPECT_EQ(ethSrc(f), MacAddress::fromIpv4(to.gateway));
      EXPECT_EQ(f[21], 62) << "hop limit: one per node";
      EXPECT_TRUE(std::equal(f.begin() + 12, f.begin() + 21, frames[i].begin() + 12)) << "EtherType, IPv6 header";
      EXPECT_TRUE(std::equal(f.begin() + 22, f.end(), frames[i].begin() + 22)) << "addresses and payload intact";
      EXPECT_EQ(udp6Sequence(f), i) << "order kept";
    }
  }

  void waitReachable() {
    for (Node* n : {&a_, &b_}) {
      ASSERT_TRUE(waitFor([&] {
        const v1::GetStatsResponse s = n->sluiced->stats();
        return tunnelOf(s) != nullptr && tunnelOf(s)->neighbor_state() == "reachable";
      })) << n->sluiced->log();
    }
  }

  Topology topo_;
  std::string dir_;
  Node a_, b_;
  bool jumbo_ = false;     // set by TwoNodesJumboTest before SetUp
  bool underlay6_ = false;  // set by TwoNodesIpv6UnderlayTest before SetUp
};

// The VTEPs IPv6 (fd00:88::1 and ::2 on the veth): each node resolves the
// other by Neighbor Discovery (answered by the other sluiced) and tunnels
// over IPv6/UDP with the UDP checksum IPv6 requires.
class TwoNodesIpv6UnderlayTest : public TwoNodesTest {
 protected:
  void SetUp() override {
    underlay6_ = true;
    TwoNodesTest::SetUp();
  }
};

// The underlay (veth) and both uplinks at MTU 9216, the pods' ports too.
class TwoNodesJumboTest : public TwoNodesTest {
 protected:
  void SetUp() override {
    jumbo_ = true;
    TwoNodesTest::SetUp();
  }
};

TEST_F(TwoNodesJumboTest, A9000BytePacketCrossesPodToOverlayToPodIntactBothWays) {
  waitReachable();
  const v1::GetStatsResponse a0 = a_.sluiced->stats();
  constexpr int kCount = 20;
  sendAndCheck(a_, b_, kCount, 14 + 9000);
  sendAndCheck(b_, a_, kCount, 14 + 9000);
  const v1::GetStatsResponse a1 = a_.sluiced->stats();
  EXPECT_EQ(tunnelOf(a1)->tx_packets() - tunnelOf(a0)->tx_packets(), kCount);
  EXPECT_EQ(tunnelOf(a1)->tx_bytes() - tunnelOf(a0)->tx_bytes(), kCount * (14u + 9000));
  EXPECT_EQ(tunnelOf(a1)->rx_bytes() - tunnelOf(a0)->rx_bytes(), kCount * (14u + 9000));
}

TEST_F(TwoNodesTest, PodsOnTwoNodesExchangeTrafficThroughTheOverlay) {
  // Each node resolves the other's VTEP by ARP (answered by the other sluiced).
  waitReachable();
  const v1::GetStatsResponse a0 = a_.sluiced->stats(), b0 = b_.sluiced->stats();
  constexpr int kCount = 300;
  sendAndCheck(a_, b_, kCount);
  sendAndCheck(b_, a_, kCount);
  const v1::GetStatsResponse a1 = a_.sluiced->stats(), b1 = b_.sluiced->stats();
  EXPECT_EQ(tunnelOf(a1)->tx_packets() - tunnelOf(a0)->tx_packets(), kCount);
  EXPECT_EQ(tunnelOf(b1)->rx_packets() - tunnelOf(b0)->rx_packets(), kCount);
  EXPECT_EQ(tunnelOf(b1)->tx_packets() - tunnelOf(b0)->tx_packets(), kCount);
  EXPECT_EQ(tunnelOf(a1)->rx_packets() - tunnelOf(a0)->rx_packets(), kCount);
  EXPECT_EQ(tunnelOf(a1)->tx_bytes() - tunnelOf(a0)->tx_bytes(), tunnelOf(b1)->rx_bytes() - tunnelOf(b0)->rx_bytes());

  // Deleting the node stops the traffic at once: the encap megaflow is
  // revalidated away and the destination has no route any more.
  grpc::ClientContext ctx;
  v1::DeleteNodeRequest del;
  del.set_name("b");
  v1::DeleteNodeResponse dresp;
  ASSERT_TRUE(a_.sluiced->remoteNodes().DeleteNode(&ctx, del, &dresp).ok());
  EXPECT_TRUE(dresp.deleted());
  auto noRoute = [&] {
    const v1::GetStatsResponse st = a_.sluiced->stats();
    for (const v1::DropCounter& d : st.drops())
      if (d.reason() == "no_route") return d.packets();
    return uint64_t{0};
  };
  const uint64_t no_route_before = noRoute();
  UdpFrameSpec s{MacAddress::fromIpv4(a_.pod_ip), MacAddress::fromIpv4(a_.gateway), a_.pod_ip, b_.pod_ip};
  ASSERT_EQ(a_.pod->send({udpFrame(s), udpFrame(s), udpFrame(s)}), 3u);
  ASSERT_TRUE(waitFor([&] { return noRoute() == no_route_before + 3; })) << a_.sluiced->stats().DebugString();
}

TEST_F(TwoNodesTest, Ipv6PodsOnTwoNodesExchangeTrafficThroughTheOverlay) {
  waitReachable();
  const v1::GetStatsResponse a0 = a_.sluiced->stats(), b0 = b_.sluiced->stats();
  constexpr int kCount = 300;
  sendAndCheck6(a_, b_, kCount);
  sendAndCheck6(b_, a_, kCount);
  const v1::GetStatsResponse a1 = a_.sluiced->stats(), b1 = b_.sluiced->stats();
  // The tunnels count inner frames: udp6Frame's, whole.
  const uint64_t kFrame = Udp6FrameSpec{}.frame_len;
  EXPECT_EQ(tunnelOf(a1)->tx_packets() - tunnelOf(a0)->tx_packets(), kCount);
  EXPECT_EQ(tunnelOf(b1)->rx_packets() - tunnelOf(b0)->rx_packets(), kCount);
  EXPECT_EQ(tunnelOf(b1)->tx_packets() - tunnelOf(b0)->tx_packets(), kCount);
  EXPECT_EQ(tunnelOf(a1)->rx_packets() - tunnelOf(a0)->rx_packets(), kCount);
  EXPECT_EQ(tunnelOf(a1)->tx_bytes() - tunnelOf(a0)->tx_bytes(), kCount * kFrame);
  EXPECT_EQ(tunnelOf(b1)->rx_bytes() - tunnelOf(b0)->rx_bytes(), kCount * kFrame);
}

// A UPF-like pod on node b owns a routed /16 (its UE pool): traffic to
// addresses in it reaches the UPF from a pod on its node and, once node a
// learns the prefix with node b (as the node controller sends it, through
// ApplyNodes), from a pod on node a through the tunnel. After the UPF's
// port is removed, and node b's prefix withdrawn on node a, both nodes drop
// traffic to it as unrouted.
TEST_F(TwoNodesTest, ARoutedPrefixReachesItsPodFromBothNodesAndGoesWithThePort) {
  waitReachable();
  const Ipv4Address upf_ip = *Ipv4Address::parse("10.244.1.20");
  v1::AddPortRequest req;
  req.mutable_attachment()->set_container_id("upf-b");
  req.mutable_attachment()->set_ifname("n3");
  req.set_ip(upf_ip.toString());
  req.add_routed_prefixes("10.100.0.0/16");
  v1::AddPortResponse resp;
  ASSERT_TRUE(b_.sluiced->addPort(req, &resp).ok());
  ASSERT_EQ(resp.port().routed_prefixes_size(), 1);
  auto upf = VirtioPod::create(resp.port().socket_path(), false, podPool());
  ASSERT_TRUE(upf.ok()) << upf.status();
  ASSERT_TRUE(b_.sluiced->waitLinkUp(resp.port().port_no())) << b_.sluiced->log();

  // Node a learns node b's prefix (the static node b becomes one the API put).
  auto putB = [&](bool with_prefix) {
    v1::ApplyNodesRequest apply;
    v1::NodeOp* op = apply.add_ops();
    v1::RemoteNode* n = op->mutable_put();
    n->set_name("b");
    n->set_vtep("192.168.88.2");
    n->add_pod_cidrs("10.244.1.0/24");
    n->add_pod_cidrs("fd00:44:1::/64");
    if (with_prefix) n->add_routed_prefixes("10.100.0.0/16");
    op->set_replace(true);
    grpc::ClientContext ctx;
    v1::ApplyNodesResponse out;
    ASSERT_TRUE(a_.sluiced->remoteNodes().ApplyNodes(&ctx, apply, &out).ok());
    ASSERT_EQ(out.results_size(), 1);
    ASSERT_EQ(out.results(0).code(), grpc::StatusCode::OK) << out.results(0).message();
  };
  {
    grpc::ClientContext ctx;
    v1::DeleteNodeRequest del;
    del.set_name("b");
    v1::DeleteNodeResponse dresp;
    ASSERT_TRUE(a_.sluiced->remoteNodes().DeleteNode(&ctx, del, &dresp).ok());
  }
  putB(true);
  waitReachable();

  // UE addresses, from the pod beside the UPF (one hop) and from node a (two).
  auto toUe = [](const Node& from, const char* ue, int n) {
    std::vector<Frame> frames;
    for (int i = 0; i < n; ++i) {
      UdpFrameSpec s{MacAddress::fromIpv4(from.pod_ip), MacAddress::fromIpv4(from.gateway), from.pod_ip,
                     *Ipv4Address::parse(ue)};
      s.sequence = static_cast<uint32_t>(i);
      s.src_port = static_cast<uint16_t>(6000 + i);
      frames.push_back(udpFrame(s));
    }
    return frames;
  };
  constexpr int kCount = 20;
  for (auto [from, ue, ttl] : {std::tuple{&b_, "10.100.1.5", 63}, std::tuple{&a_, "10.100.200.7", 62}}) {
    const std::vector<Frame> sent = toUe(*from, ue, kCount);
    ASSERT_EQ(from->pod->send(sent), sent.size());
    std::vector<Frame> got = (*upf)->receive(sent.size());
    ASSERT_EQ(got.size(), sent.size()) << a_.sluiced->stats().DebugString() << b_.sluiced->stats().DebugString();
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(ethDst(got[i]), MacAddress::fromIpv4(upf_ip));
      EXPECT_EQ(ethSrc(got[i]), MacAddress::fromIpv4(b_.gateway));
      EXPECT_EQ(ipv4Ttl(got[i]), ttl);
      EXPECT_EQ(udpSequence(got[i]), i);
      EXPECT_TRUE(std::equal(got[i].begin() + 26, got[i].end(), sent[i].begin() + 26)) << "addresses and payload";
    }
  }

  // DEL: the port goes on node b, and node b's prefix on node a.
  ASSERT_TRUE(b_.sluiced->deletePort("upf-b", "n3").ok());
  upf->reset();
  putB(false);
  auto noRoute = [](Node& n) { return dropCount(n.sluiced->stats(), "no_route"); };
  for (Node* from : {&b_, &a_}) {
    const uint64_t before = noRoute(*from);
    ASSERT_EQ(from->pod->send(toUe(*from, "10.100.1.5", 3)), 3u);
    ASSERT_TRUE(waitFor([&] { return noRoute(*from) == before + 3; })) << from->sluiced->stats().DebugString();
  }
}

TEST_F(TwoNodesIpv6UnderlayTest, PodsOfBothFamiliesCrossAnIpv6UnderlayBothWays) {
  waitReachable();
  const v1::GetStatsResponse a0 = a_.sluiced->stats(), b0 = b_.sluiced->stats();
  constexpr int kCount = 100;
  sendAndCheck(a_, b_, kCount);
  sendAndCheck(b_, a_, kCount);
  sendAndCheck6(a_, b_, kCount);
  sendAndCheck6(b_, a_, kCount);
  const v1::GetStatsResponse a1 = a_.sluiced->stats(), b1 = b_.sluiced->stats();
  // The tunnels count inner frames, whole: udpFrame's and udp6Frame's.
  const uint64_t bytes = kCount * (UdpFrameSpec{}.frame_len + Udp6FrameSpec{}.frame_len);
  for (const auto& [before, after] : {std::tie(a0, a1), std::tie(b0, b1)}) {
    EXPECT_EQ(tunnelOf(after)->tx_packets() - tunnelOf(before)->tx_packets(), 2 * kCount);
    EXPECT_EQ(tunnelOf(after)->rx_packets() - tunnelOf(before)->rx_packets(), 2 * kCount);
    EXPECT_EQ(tunnelOf(after)->tx_bytes() - tunnelOf(before)->tx_bytes(), bytes);
    EXPECT_EQ(tunnelOf(after)->rx_bytes() - tunnelOf(before)->rx_bytes(), bytes);
  }
  EXPECT_EQ(tunnelOf(a1)->vtep(), "fd00:88::2");
  EXPECT_EQ(tunnelOf(b1)->vtep(), "fd00:88::1");
}

}  // namespace
}  // namespace sluice::test
