// Two nodes that find each other through the Kubernetes API, end to end: two
// sluiced instances, each in its own network namespace with its uplink on
// one end of a veth pair, each with a pod, and each with its own
// sluice-agent pointed at the same fake API server. Neither has a node
// table: each agent publishes its node's VTEP on its Node and fills its
// sluiced's table from the other's. Then pod traffic flows both ways, keeps
// flowing while the API server is down, follows the peer to a new VTEP
// address, and stops (counted) when the peer's Node is deleted.
//
// Two busy-polling dataplanes plus two agents and a python API server on
// two cores would starve each other; the PMDs sleep while their queues run
// light (pmd-max-sleep-us), as a quiet node's would. Every wait is on a
// condition with a deadline.
#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"
#include "tests/integration/vxlan/netns_topology.h"
#include "tests/kube/agent_process.h"
#include "tests/kube/fake_apiserver.h"

namespace sluice::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kToken[] = "two-nodes-token";

struct Node {
  std::string name, netns, uplink_if, config;
  Ipv4Address pod_ip, gateway;
  std::unique_ptr<SluicedProcess> sluiced;
  std::unique_ptr<AgentProcess> agent;
  std::unique_ptr<VirtioPod> pod;
  uint32_t port_no = 0;
};

class TwoKubeNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(podPool(), nullptr);
    const std::string tag = processTag();
    dir_ = "/tmp/slk2-" + tag;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::string error;
    api_ = FakeApiServer::start(dir_ + "/api", kToken, &error);
    ASSERT_NE(api_, nullptr) << error;
    a_.name = "node-a";
    b_.name = "node-b";
    a_.netns = "slk" + tag + "a";
    b_.netns = "slk" + tag + "b";
    a_.uplink_if = "slk" + tag + "ua";
    b_.uplink_if = "slk" + tag + "ub";
    ASSERT_TRUE(topo_.addNetns(a_.netns)) << topo_.error();
    ASSERT_TRUE(topo_.addNetns(b_.netns)) << topo_.error();
    ASSERT_TRUE(topo_.addVeth(a_.uplink_if, a_.netns, b_.uplink_if, b_.netns)) << topo_.error();
    // The Nodes as the kubelets registered them: pod CIDRs and addresses,
    // no Sluice annotation yet.
    putNode({{"name", "node-a"}, {"pod_cidrs", {"10.244.0.0/24"}}, {"internal_ip", "192.168.88.1"}});
    putNode({{"name", "node-b"}, {"pod_cidrs", {"10.244.1.0/24"}}, {"internal_ip", "192.168.88.2"}});
    startNode(a_, "10.244.0.0/24", "192.168.88.1");
    startNode(b_, "10.244.1.0/24", "192.168.88.2");
  }

  void TearDown() override {
    for (Node* n : {&a_, &b_}) {
      if (n->agent) {
        EXPECT_EQ(n->agent->stop(), 0) << n->agent->log();
      }
      n->pod.reset();
      if (n->sluiced) {
        EXPECT_EQ(n->sluiced->stop(), 0) << n->sluiced->log();
      }
    }
    if (HasFailure()) {
      for (Node* n : {&a_, &b_})
        if (n->agent) std::cerr << "--- agent " << n->name << "\n" << n->agent->log();
    }
    api_.reset();
    fs::remove_all(dir_);
  }

  void putNode(const json& fields) {
    json cmd = fields;
    cmd["op"] = "put";
    ASSERT_FALSE(api_->control(cmd).is_null()) << cmd.dump();
  }

  void writeConfig(Node& n, const std::string& vtep) {
    n.config = dir_ + "/" + n.name + ".json";
    std::ofstream(n.config) << R"({"vni": 7, "uplink": {"devargs": "net_af_packet0,iface=)" << n.uplink_if
                            << R"(", "vtep": ")" << vtep << R"(/24"}})";
  }

  void startNode(Node& n, const std::string& cidr, const std::string& vtep) {
    writeConfig(n, vtep);
    SluicedOptions o;
    o.pod_cidr = cidr;
    o.netns = n.netns;
    o.extra_flags = {"--config", n.config, "--pmd-max-sleep-us", "200"};
    std::string error;
    n.sluiced = SluicedProcess::start(o, &error);
    ASSERT_NE(n.sluiced, nullptr) << error;
    const Ipv4Cidr c = *Ipv4Cidr::parse(cidr);
    n.gateway = Ipv4Address{c.network.value + 1};
    n.pod_ip = Ipv4Address{c.network.value + 10};
    // Client mode: the pod listens, so sluiced reconnects after its restart.
    v1::AddPortResponse resp;
    ASSERT_TRUE(n.sluiced->addPort(portRequest("pod-" + n.name, n.pod_ip.toString(), v1::VHOST_MODE_CLIENT), &resp).ok());
    n.port_no = resp.port().port_no();
    auto pod = VirtioPod::create(resp.port().socket_path(), /*server=*/true, podPool());
    ASSERT_TRUE(pod.ok()) << pod.status();
    n.pod = std::move(*pod);
    ASSERT_TRUE(n.sluiced->waitLinkUp(n.port_no)) << n.sluiced->log();
    n.agent = std::make_unique<AgentProcess>(
        dir_ + "/agent-" + n.name + ".log",
        std::vector<std::string>{SLUICE_AGENT_PATH, "--kubeconfig", api_->kubeconfig(), "--node-name", n.name,
                                 "--api-socket", n.sluiced->apiSocket(), "--resync-interval", "1",
                                 "--watch-timeout", "5", "--backoff-initial-ms", "100", "--backoff-max-ms", "1000"});
  }

  static v1::ListNodesResponse list(Node& n) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListNodesResponse r;
    grpc::Status s = n.sluiced->remoteNodes().ListNodes(&ctx, {}, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r;
  }
  // The remote node `name` in n's table as "vtep cidrs source"; "" if absent.
  static std::string entry(Node& n, const std::string& name) {
    const v1::ListNodesResponse table = list(n);
    for (const v1::RemoteNode& r : table.nodes()) {
      if (r.name() != name) continue;
      std::string cidrs;
      for (const std::string& c : r.pod_cidrs()) cidrs += (cidrs.empty() ? "" : ",") + c;
      return r.vtep() + " " + cidrs + " " + v1::NodeSource_Name(r.source());
    }
    return "";
  }
  static const v1::RemoteNode* tunnelOf(const v1::GetStatsResponse& s) {
    return s.tunnels_size() == 1 ? &s.tunnels(0) : nullptr;
  }
  static bool reachable(Node& n) {
    const v1::GetStatsResponse s = n.sluiced->stats();
    return tunnelOf(s) != nullptr && tunnelOf(s)->neighbor_state() == "reachable";
  }
  static uint64_t drops(Node& n, const std::string& reason) {
    const v1::GetStatsResponse s = n.sluiced->stats();
    for (const v1::DropCounter& d : s.drops())
      if (d.reason() == reason) return d.packets();
    return 0;
  }

  std::vector<Frame> frames(Node& from, Node& to, int n) {
    std::vector<Frame> out;
    for (int i = 0; i < n; ++i) {
      UdpFrameSpec s{MacAddress::fromIpv4(from.pod_ip), MacAddress::fromIpv4(from.gateway), from.pod_ip, to.pod_ip};
      s.sequence = static_cast<uint32_t>(i);
      s.src_port = static_cast<uint16_t>(5000 + i % 16);
      out.push_back(udpFrame(s));
    }
    return out;
  }
  // n frames from `from`'s pod to `to`'s: all arrive, routed once on each
  // node, in order, addresses and payload intact; the tunnels count them.
  void sendAndCheck(Node& from, Node& to, int n) {
    const v1::GetStatsResponse f0 = from.sluiced->stats(), t0 = to.sluiced->stats();
    std::vector<Frame> sent = frames(from, to, n);
    ASSERT_EQ(from.pod->send(sent), sent.size());
    std::vector<Frame> got = to.pod->receive(sent.size());
    ASSERT_EQ(got.size(), sent.size()) << from.sluiced->stats().DebugString() << to.sluiced->stats().DebugString();
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].size(), sent[i].size());
      EXPECT_EQ(ethDst(got[i]), MacAddress::fromIpv4(to.pod_ip));
      EXPECT_EQ(ethSrc(got[i]), MacAddress::fromIpv4(to.gateway));
      EXPECT_EQ(ipv4Ttl(got[i]), 62) << "one hop per node";
      EXPECT_EQ(udpSequence(got[i]), i);
      EXPECT_TRUE(std::equal(got[i].begin() + 26, got[i].end(), sent[i].begin() + 26));
    }
    const v1::GetStatsResponse f1 = from.sluiced->stats(), t1 = to.sluiced->stats();
    ASSERT_NE(tunnelOf(f1), nullptr);
    ASSERT_NE(tunnelOf(t1), nullptr);
    const uint64_t tx_before = tunnelOf(f0) != nullptr ? tunnelOf(f0)->tx_packets() : 0;
    const uint64_t rx_before = tunnelOf(t0) != nullptr ? tunnelOf(t0)->rx_packets() : 0;
    EXPECT_EQ(tunnelOf(f1)->tx_packets() - tx_before, static_cast<uint64_t>(n));
    EXPECT_EQ(tunnelOf(t1)->rx_packets() - rx_before, static_cast<uint64_t>(n));
  }

  Topology topo_;
  std::string dir_;
  std::unique_ptr<FakeApiServer> api_;
  Node a_, b_;
};

const std::string kA = "192.168.88.1 10.244.0.0/24 NODE_SOURCE_KUBERNETES";
const std::string kB = "192.168.88.2 10.244.1.0/24 NODE_SOURCE_KUBERNETES";

TEST_F(TwoKubeNodesTest, NodesFindEachOtherAndTrafficFollowsTheCluster) {
  // Discovery: each agent published its VTEP; each table holds the other.
  ASSERT_TRUE(waitFor([&] { return entry(a_, "node-b") == kB && entry(b_, "node-a") == kA; }, std::chrono::seconds(60)))
      << a_.agent->log() << b_.agent->log();
  EXPECT_EQ(entry(a_, "node-a"), "") << "never its own node";
  EXPECT_EQ(list(a_).nodes_size(), 1);
  for (Node* n : {&a_, &b_}) ASSERT_TRUE(waitFor([&] { return reachable(*n); })) << n->sluiced->log();
  sendAndCheck(a_, b_, 200);
  sendAndCheck(b_, a_, 200);

  // The API server goes away: both tables stay, traffic keeps flowing.
  ASSERT_FALSE(api_->control({{"op", "stop"}}).is_null());
  ASSERT_TRUE(waitFor([&] { return !list(a_).controller().synced() && !list(b_).controller().synced(); },
                      std::chrono::seconds(30)));
  sendAndCheck(a_, b_, 100);
  sendAndCheck(b_, a_, 100);
  EXPECT_EQ(entry(a_, "node-b"), kB);
  ASSERT_FALSE(api_->control({{"op", "start"}}).is_null());
  ASSERT_TRUE(waitFor([&] { return list(a_).controller().synced() && list(b_).controller().synced(); },
                      std::chrono::seconds(60)));

  // node-b comes back with a new address (its sluiced restarted on it; its
  // kubelet reports it among the Node's InternalIPs, so the VTEP may move
  // there): its agent publishes the new VTEP, the Node is MODIFIED, node-a's
  // table follows in place and the traffic with it.
  const uint32_t tunnel = list(a_).nodes(0).tunnel();
  putNode({{"name", "node-b"}, {"internal_ips", {"192.168.88.2", "192.168.88.12"}}});
  writeConfig(b_, "192.168.88.12");
  std::string error;
  ASSERT_TRUE(b_.sluiced->restart(&error)) << error;
  // The pod's virtio_user takes the new connection once it has seen the
  // old one drop, which it notices when its link status is read.
  ASSERT_TRUE(waitFor([&] {
    rte_eth_link link{};
    rte_eth_link_get_nowait(b_.pod->portId(), &link);
    const v1::ListPortsResponse ports = b_.sluiced->ports();
    return link.link_status == RTE_ETH_LINK_UP && ports.ports_size() == 1 && ports.ports(0).link_up();
  })) << b_.sluiced->log();
  const std::string moved = "192.168.88.12 10.244.1.0/24 NODE_SOURCE_KUBERNETES";
  ASSERT_TRUE(waitFor([&] { return entry(a_, "node-b") == moved; }, std::chrono::seconds(60)))
      << a_.agent->log() << b_.agent->log();
  EXPECT_EQ(list(a_).nodes(0).tunnel(), tunnel) << "changed in place";
  EXPECT_EQ(entry(b_, "node-a"), kA) << "node-b's table came back from its checkpoint";
  ASSERT_TRUE(waitFor([&] { return reachable(a_) && reachable(b_); })) << a_.sluiced->log();
  sendAndCheck(a_, b_, 100);
  sendAndCheck(b_, a_, 100);

  // node-b's Node is deleted: node-a drops its tunnel, and packets to
  // node-b's pods are dropped as unroutable, counted, not sent.
  ASSERT_FALSE(api_->control({{"op", "delete"}, {"name", "node-b"}}).is_null());
  ASSERT_TRUE(waitFor([&] { return list(a_).nodes_size() == 0; }, std::chrono::seconds(60))) << a_.agent->log();
  const uint64_t no_route = drops(a_, "no_route");
  ASSERT_EQ(a_.pod->send(frames(a_, b_, 5)), 5u);
  ASSERT_TRUE(waitFor([&] { return drops(a_, "no_route") == no_route + 5; })) << a_.sluiced->stats().DebugString();
  EXPECT_EQ(a_.sluiced->stats().tunnels_size(), 0);
  EXPECT_EQ(b_.pod->drainCount(), 0u);
}

}  // namespace
}  // namespace sluice::test
