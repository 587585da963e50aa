// Integration tests of the VXLAN overlay on real DPDK vdevs and the
// Linux kernel's own VXLAN: sluiced as a child process whose uplink is an
// af_packet port on a veth; behind the veth, a network namespace holding the
// kernel's VXLAN device plays the remote node, with a remote "pod" namespace
// routed behind it. Local pods are net_virtio_user devices in this process
// (exact frames, exact counts) and, for ping, a dpdk-testpmd icmpecho pod.
// A second fixture runs two sluiced nodes whose uplinks are joined by a veth
// pair. Every wait is on a condition, with a generous deadline.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"
#include "tests/integration/vxlan/netns_topology.h"

namespace sluice::test {
namespace {

const Ipv4Address kGateway = *Ipv4Address::parse("10.244.0.1");
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);
const Ipv4Address kPodIp = *Ipv4Address::parse("10.244.0.5");
const MacAddress kPodMac = MacAddress::fromIpv4(kPodIp);
const Ipv4Address kEchoIp = *Ipv4Address::parse("10.244.0.6");
const Ipv4Address kRemotePodIp = *Ipv4Address::parse("10.245.0.2");
// IPv6 over the same IPv4 underlay: our pod-cidr-v6, the pod's address in it,
// and the remote node's IPv6 pod CIDR, whose address the kernel's namespace
// holds itself.
const Ipv6Address kPodIp6 = *Ipv6Address::parse("fd00:10:244::5");
const Ipv6Address kRemotePodIp6 = *Ipv6Address::parse("fd00:10:245::2");
const char* kRemoteVxMac = "02:00:00:00:77:02";
constexpr uint32_t kVni = 42;

void writeFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

uint64_t drops(const v1::GetStatsResponse& s, const std::string& reason) {
  for (const v1::DropCounter& d : s.drops())
    if (d.reason() == reason) return d.packets();
  ADD_FAILURE() << "no drop reason " << reason;
  return 0;
}

const v1::RemoteNode* tunnel(const v1::GetStatsResponse& s, const std::string& name) {
  for (const v1::RemoteNode& n : s.tunnels())
    if (n.name() == name) return &n;
  return nullptr;
}

v1::AddPortRequest portRequest(const std::string& id, const Ipv4Address& ip) {
  v1::AddPortRequest req;
  req.mutable_attachment()->set_container_id(id);
  req.mutable_attachment()->set_ifname("eth0");
  req.set_ip(ip.toString());
  req.set_mac(MacAddress::fromIpv4(ip).toString());
  return req;
}

// UDP datagrams with a 4-byte sequence number, sent from inside a netns.
constexpr char kUdpSender[] = R"(import socket, struct, sys
dst, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET, socket.SOCK_DGRAM)
for i in range(count):
    s.sendto(struct.pack("!I", i) + b"sluice-vxlan", (dst, port))
)";

// Counts datagrams on a port until `count` distinct sequence numbers came or
// 20 s passed; writes "ready" first and the result ("<total> <distinct>") last.
constexpr char kUdpReceiver[] = R"(import socket, struct, sys
port, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
v6 = len(sys.argv) > 4 and sys.argv[4] == "6"
s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("::" if v6 else "0.0.0.0", port))
s.settimeout(20)
open(out + ".ready", "w").write("ready")
seen, total = set(), 0
try:
    while len(seen) < count:
        data, _ = s.recvfrom(2048)
        total += 1
        seen.add(struct.unpack("!I", data[:4])[0])
except socket.timeout:
    pass
open(out + ".tmp", "w").write("%d %d" % (total, len(seen)))
import os; os.rename(out + ".tmp", out)
)";

// Hostile outer frames toward sluiced's uplink, sent raw from the remote
// node's side of the veth: argv = ifname, our MAC, sluiced's uplink MAC,
// repetitions. Inner frame: a valid UDP packet to the local pod.
constexpr char kInjector[] = R"(import socket, struct, sys
ifname, src_mac, dst_mac, reps = sys.argv[1], bytes.fromhex(sys.argv[2].replace(":", "")), bytes.fromhex(sys.argv[3].replace(":", "")), int(sys.argv[4])
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
def ip(src, dst, proto, payload, ihl=5, frag=0x4000, total=None):
    opts = b"\0" * (max(ihl, 5) * 4 - 20)
    tl = total if total is not None else 20 + len(opts) + len(payload)
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, tl, 1, frag, 64, proto, 0, socket.inet_aton(src), socket.inet_aton(dst)) + opts
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload
inner_ip = ip("10.245.0.2", "10.244.0.5", 17, struct.pack("!HHHH", 1000, 7777, 8 + 16, 0) + b"x" * 16)
inner = bytes.fromhex("020a_f400_0001".replace("_", "")) + bytes.fromhex("02aa00000001") + b"\x08\x00" + inner_ip
# A neighbor solicitation for the local pod's IPv6 address, as a peer without
# a static neighbor entry would send it through the tunnel.
ns_icmp = bytes([135, 0, 0, 0, 0, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, "fd00:10:244::5")
ns_ip6 = struct.pack("!IHBB", 0x60000000, len(ns_icmp), 58, 255) + socket.inet_pton(socket.AF_INET6, "fd00:10:245::2") + socket.inet_pton(socket.AF_INET6, "ff02::1:ff00:5")
inner_nd = bytes.fromhex("3333ff000005") + bytes.fromhex("02aa00000001") + b"\x86\xdd" + ns_ip6 + ns_icmp
def vxlan(flags=0x08, vni=42, src="192.168.77.2", dst="192.168.77.1", ihl=5, frag=0x4000, dport=4789, cut=None, total=None, payload=None):
    vx = struct.pack("!B3xI", flags, vni << 8) + (payload if payload is not None else inner)
    udp = struct.pack("!HHHH", 50000, dport, 8 + len(vx), 0) + vx
    f = dst_mac + src_mac + b"\x08\x00" + ip(src, dst, 17, udp, ihl=ihl, frag=frag, total=total)
    return f[:cut] if cut is not None else f
cases = {
    "vxlan_truncated": vxlan(cut=14 + 20 + 8 + 4),
    "vxlan_bad_flags": vxlan(flags=0x0c),
    "vxlan_unknown_vni": vxlan(vni=43),
    "vxlan_wrong_vtep": vxlan(dst="192.168.77.9"),
    "vxlan_bad_outer_ip": vxlan(ihl=4),
    "uplink_not_vxlan": vxlan(dport=4790),
    "vxlan_unknown_source": vxlan(src="192.168.77.99"),
    "vxlan_inner_nd": vxlan(payload=inner_nd),
}
# IHL 15: a 60-byte header announced in a frame that ends before it does.
cases["vxlan_truncated_ihl15"] = vxlan(ihl=15, cut=14 + 40)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
for _ in range(reps):
    for f in cases.values():
        s.send(f)
print(" ".join(cases.keys()))
)";

// VXLAN from the member VTEP 192.168.77.2 (the kernel's node, pod CIDRs
// 10.245.0.0/24 and fd00:10:245::/64) to the local pod, sent raw from the
// remote node's side of the veth: argv = ifname, our MAC, sluiced's uplink
// MAC, repetitions. Each repetition forges the inner source as a local pod,
// the local pod itself, a pod of another node (10.247.0.0/24), this node's
// VTEP address and a local IPv6 pod, then sends one from the kernel node's
// own pod 10.245.0.2 (sequence number = repetition).
constexpr char kInnerSourceInjector[] = R"(import socket, struct, sys
ifname, src_mac, dst_mac, reps = sys.argv[1], bytes.fromhex(sys.argv[2].replace(":", "")), bytes.fromhex(sys.argv[3].replace(":", "")), int(sys.argv[4])
def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
def ip(src, dst, payload):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0x4000, 64, 17, 0, socket.inet_aton(src), socket.inet_aton(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload
def udp(seq):
    return struct.pack("!HHHHI", 1000, 7777, 8 + 16, 0, seq) + b"x" * 12
inner_macs = bytes.fromhex("020af4000001") + bytes.fromhex("02aa00000001")
def inner4(src, seq):
    return inner_macs + b"\x08\x00" + ip(src, "10.244.0.5", udp(seq))
def inner6(src):
    u = udp(0)
    h = struct.pack("!IHBB", 0x60000000, len(u), 17, 64) + socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, "fd00:10:244::5")
    return inner_macs + b"\x86\xdd" + h + u
def vxlan(inner):
    vx = struct.pack("!B3xI", 0x08, 42 << 8) + inner
    u = struct.pack("!HHHH", 50000, 4789, 8 + len(vx), 0) + vx
    return dst_mac + src_mac + b"\x08\x00" + ip("192.168.77.2", "192.168.77.1", u)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
for rep in range(reps):
    for forged in ("10.244.0.9", "10.244.0.5", "10.247.0.2", "192.168.77.1"):
        s.send(vxlan(inner4(forged, 1000 + rep)))
    s.send(vxlan(inner6("fd00:10:244::9")))
    s.send(vxlan(inner4("10.245.0.2", rep)))
)";

class VxlanKernelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_NE(podPool(), nullptr);
    topo_ = new Topology();
    const std::string tag = processTag();
    remote_ns_ = "slvxr" + tag;
    rpod_ns_ = "slvxp" + tag;
    uplink_if_ = "slvu" + tag + "a";
    remote_if_ = "slvu" + tag + "b";
    Topology& t = *topo_;
    const std::string& r = remote_ns_;
    ASSERT_TRUE(t.addNetns(r) && t.addNetns(rpod_ns_)) << t.error();
    ASSERT_TRUE(t.addVeth(uplink_if_, "", remote_if_, r)) << t.error();
    ASSERT_TRUE(t.addVeth("slvp" + tag + "a", r, "slvp" + tag + "b", rpod_ns_)) << t.error();
    // The remote node: VTEP 192.168.77.2 and the kernel's VXLAN device, VNI
    // 42 on port 4789, everything unknown flooded to our VTEP (as flannel
    // programs it), our pod CIDR routed through our gateway over it.
    const std::vector<std::string> remote_setup = {
        "ip addr add 192.168.77.2/24 dev " + remote_if_,
        std::string("ip link add vx0 address ") + kRemoteVxMac + " type vxlan id 42 dstport 4789 local 192.168.77.2 dev " +
            remote_if_ + " nolearning",
        // IPv6 on vx0 without any address of its own (no link-local: no
        // duplicate address detection, router solicitation or multicast
        // report goes through the tunnel to disturb exact counts); the
        // remote pod's IPv6 address sits on lo, its pod CIDR routed through
        // our gateway over vx0 like IPv4's.
        "ip link set vx0 addrgenmode none",
        "sysctl -qw net.ipv6.conf.vx0.disable_ipv6=0 net.ipv6.conf.lo.disable_ipv6=0 "
        "net.ipv6.conf.vx0.accept_ra=0 net.ipv6.conf.vx0.router_solicitations=0",
        "ip link set vx0 up",
        "ip -6 addr add " + kRemotePodIp6.toString() + "/128 dev lo nodad",
        "ip -6 route add fd00:10:244::/64 via fd00:10:244::1 dev vx0 onlink src " + kRemotePodIp6.toString(),
        "ip -6 neigh add fd00:10:244::1 lladdr " + kGatewayMac.toString() + " dev vx0 nud permanent",
        "bridge fdb append 00:00:00:00:00:00 dev vx0 dst 192.168.77.1",
        "ip addr add 10.245.0.1/24 dev slvp" + tag + "a",
        "sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.vx0.rp_filter=0",
        "ip route add 10.244.0.0/24 via 10.244.0.1 dev vx0 onlink",
        "ip neigh add 10.244.0.1 lladdr " + kGatewayMac.toString() + " dev vx0 nud permanent",
    };
    for (const std::string& c : remote_setup) ASSERT_EQ(t.in(r, c), 0) << c;
    // Inner checksums of what the namespace sends itself filled by the
    // kernel, not left to an offload the af_packet uplink would see unfinished.
    t.in(r, "ethtool -K vx0 tx off");
    ASSERT_EQ(t.in(rpod_ns_, "ip addr add 10.245.0.2/24 dev slvp" + tag + "b"), 0);
    ASSERT_EQ(t.in(rpod_ns_, "ip route add default via 10.245.0.1"), 0);
    // Inner UDP checksums filled by the sender, not left to an offload the
    // af_packet uplink would see unfinished.
    t.in(rpod_ns_, "ethtool -K slvp" + tag + "b tx off");

    std::string error;
    SluicedOptions o;
    o.pod_cidr = "10.244.0.0/24";
    dir_ = "/tmp/slvx-" + tag;
    std::filesystem::create_directories(dir_);
    const std::string cfg = dir_ + "/sluiced.json";
    writeFile(cfg, R"({"vni": 42,
      "uplink": {"devargs": "net_af_packet0,iface=)" + uplink_if_ + R"(", "vtep": "192.168.77.1/24", "mtu": 1500},
      "remote-nodes": [{"name": "kernel", "vtep": "192.168.77.2", "pod-cidrs": ["10.245.0.0/24", "fd00:10:245::/64"],
                        "mac": ")" + kRemoteVxMac + R"("}]})");
    o.extra_flags = {"--config", cfg, "--pod-cidr-v6", "fd00:10:244::/64"};
    node_ = SluicedProcess::start(o, &error).release();
    ASSERT_NE(node_, nullptr) << error;
    v1::AddPortResponse resp;
    v1::AddPortRequest dual_stack = portRequest("vxpod", kPodIp);
    dual_stack.set_ipv6(kPodIp6.toString());
    ASSERT_TRUE(node_->addPort(dual_stack, &resp).ok());
    pod_port_ = resp.port().port_no();
    EXPECT_EQ(resp.port().overlay_mtu(), 1450u) << "reported to the CNI plugin";
    auto pod = VirtioPod::create(resp.port().socket_path(), false, podPool());
    ASSERT_TRUE(pod.ok()) << pod.status();
    pod_ = pod->release();
    ASSERT_TRUE(node_->waitLinkUp(pod_port_)) << node_->log();
    // The next hop (the remote VTEP itself: same /24) resolves by ARP.
    ASSERT_TRUE(waitFor([] { return listNodes().nodes_size() == 1 && listNodes().nodes(0).neighbor_state() == "reachable"; }))
        << listNodes().DebugString() << node_->log();
    writeFile(dir_ + "/send.py", kUdpSender);
    writeFile(dir_ + "/recv.py", kUdpReceiver);
    writeFile(dir_ + "/inject.py", kInjector);
    writeFile(dir_ + "/inject_inner.py", kInnerSourceInjector);
  }

  static void TearDownTestSuite() {
    delete pod_;
    pod_ = nullptr;
    if (node_ != nullptr) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
    delete node_;
    node_ = nullptr;
    delete topo_;
    topo_ = nullptr;
    std::filesystem::remove_all(dir_);
  }

  static v1::ListNodesResponse listNodes() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListNodesResponse r;
    grpc::Status s = node_->remoteNodes().ListNodes(&ctx, {}, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r;
  }

  static inline Topology* topo_ = nullptr;
  static inline SluicedProcess* node_ = nullptr;
  static inline VirtioPod* pod_ = nullptr;
  static inline uint32_t pod_port_ = 0;
  static inline std::string remote_ns_, rpod_ns_, uplink_if_, remote_if_, dir_;
};

TEST_F(VxlanKernelTest, ListNodesShowsTheOverlay) {
  v1::ListNodesResponse r = listNodes();
  EXPECT_EQ(r.overlay().vtep(), "192.168.77.1");
  EXPECT_EQ(r.overlay().vni(), kVni);
  EXPECT_EQ(r.overlay().overlay_mtu(), 1450u);
  ASSERT_EQ(r.nodes_size(), 1);
  EXPECT_EQ(r.nodes(0).vtep(), "192.168.77.2");
  EXPECT_EQ(r.nodes(0).next_hop(), "192.168.77.2");
  std::string mac;
  ASSERT_EQ(topo_->in(remote_ns_, "cat /sys/class/net/" + remote_if_ + "/address", &mac), 0);
  EXPECT_EQ(r.nodes(0).next_hop_mac() + "\n", mac) << "learned by ARP from the kernel";
  CommandResult out = sluicectl(node_->apiSocket(), "nodes");
  EXPECT_EQ(out.exit_code, 0);
  // The config file's node: source static.
  EXPECT_NE(out.output.find("kernel           static     192.168.77.2"), std::string::npos) << out.output;
}

// The node table through the overlay's own service (sluice.v1.RemoteNodes),
// and through the core's deprecated copies of its calls, which answer the
// same for one release.
TEST_F(VxlanKernelTest, RemoteNodesAreManagedThroughTheOverlaysService) {
  auto ctx = [] {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return c;
  };
  v1::AddNodeRequest add;
  add.mutable_node()->set_name("worker-3");
  add.mutable_node()->set_vtep("192.168.77.3");
  add.mutable_node()->add_pod_cidrs("10.246.0.0/24");
  v1::AddNodeResponse added;
  grpc::Status s = node_->remoteNodes().AddNode(ctx().get(), add, &added);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(added.created());
  EXPECT_EQ(added.node().name(), "worker-3");
  EXPECT_EQ(added.node().vtep(), "192.168.77.3");
  ASSERT_EQ(added.node().pod_cidrs_size(), 1);
  EXPECT_EQ(added.node().pod_cidrs(0), "10.246.0.0/24");
  // The same again, through the deprecated call: the existing node.
  ASSERT_TRUE(node_->api().AddNode(ctx().get(), add, &added).ok());
  EXPECT_FALSE(added.created());
  // Another node claiming its CIDR.
  v1::AddNodeRequest clash = add;
  clash.mutable_node()->set_name("worker-4");
  clash.mutable_node()->set_vtep("192.168.77.4");
  EXPECT_EQ(node_->remoteNodes().AddNode(ctx().get(), clash, &added).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);

  std::vector<std::string> names, old_names;
  const v1::ListNodesResponse now = listNodes();
  for (const v1::RemoteNode& n : now.nodes()) names.push_back(n.name());
  v1::ListNodesResponse old;
  ASSERT_TRUE(node_->api().ListNodes(ctx().get(), {}, &old).ok());
  for (const v1::RemoteNode& n : old.nodes()) old_names.push_back(n.name());
  EXPECT_EQ(names, (std::vector<std::string>{"kernel", "worker-3"}));
  EXPECT_EQ(old_names, names);
  EXPECT_EQ(old.overlay().vtep(), "192.168.77.1");

  v1::DeleteNodeRequest del;
  del.set_name("worker-3");
  v1::DeleteNodeResponse deleted;
  ASSERT_TRUE(node_->remoteNodes().DeleteNode(ctx().get(), del, &deleted).ok());
  EXPECT_TRUE(deleted.deleted());
  ASSERT_TRUE(node_->api().DeleteNode(ctx().get(), del, &deleted).ok());
  EXPECT_FALSE(deleted.deleted());
  ASSERT_EQ(listNodes().nodes_size(), 1);
  EXPECT_EQ(listNodes().nodes(0).name(), "kernel");
}

TEST_F(VxlanKernelTest, UdpFromTheKernelsRemotePodArrivesDecapsulated) {
  constexpr int kCount = 200;
  const v1::GetStatsResponse before = node_->stats();
  ASSERT_EQ(topo_->in(rpod_ns_, "python3 " + dir_ + "/send.py 10.244.0.5 7777 " + std::to_string(kCount)), 0);
  std::vector<Frame> got = pod_->receive(kCount);
  ASSERT_EQ(got.size(), static_cast<size_t>(kCount)) << node_->stats().DebugString();
  std::set<uint32_t> seqs;
  for (const Frame& f : got) {
    ASSERT_EQ(f.size(), 14u + 20 + 8 + 16);
    EXPECT_EQ(ethDst(f), kPodMac);
    EXPECT_EQ(ethSrc(f), kGatewayMac);
    EXPECT_EQ(ipv4Ttl(f), 62) << "64, -1 by the remote node's kernel, -1 by sluiced";
    EXPECT_TRUE(ipv4ChecksumValid(f));
    EXPECT_EQ(Ipv4Address({(uint32_t{f[26]} << 24) | (uint32_t{f[27]} << 16) | (uint32_t{f[28]} << 8) | f[29]}),
              kRemotePodIp);
    seqs.insert((uint32_t{f[42]} << 24) | (uint32_t{f[43]} << 16) | (uint32_t{f[44]} << 8) | f[45]);
  }
  EXPECT_EQ(seqs.size(), static_cast<size_t>(kCount));
  const v1::GetStatsResponse after = node_->stats();
  ASSERT_NE(tunnel(after, "kernel"), nullptr);
  EXPECT_EQ(tunnel(after, "kernel")->rx_packets() - tunnel(before, "kernel")->rx_packets(), kCount);
  EXPECT_EQ(tunnel(after, "kernel")->rx_bytes() - tunnel(before, "kernel")->rx_bytes(), kCount * 58u);
  EXPECT_EQ(tunnel(after, "kernel")->tx_packets(), tunnel(before, "kernel")->tx_packets());
}

TEST_F(VxlanKernelTest, UdpFromALocalPodReachesTheKernelsRemotePod) {
  constexpr int kCount = 200;
  const std::string out = dir_ + "/recv.out";
  std::filesystem::remove(out);
  std::filesystem::remove(out + ".ready");
  ASSERT_EQ(topo_->in(rpod_ns_, "sh -c 'python3 " + dir_ + "/recv.py 7777 " + std::to_string(kCount) + " " + out +
                                    " >/dev/null 2>&1 &'"),
            0);
  ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(out + ".ready"); }));
  const v1::GetStatsResponse before = node_->stats();
  std::vector<Frame> frames;
  for (int i = 0; i < kCount; ++i) {
    UdpFrameSpec s{kPodMac, kGatewayMac, kPodIp, kRemotePodIp};
    s.dst_port = 7777;
    s.src_port = static_cast<uint16_t>(4000 + i % 8);
    s.sequence = static_cast<uint32_t>(i);
    frames.push_back(udpFrame(s));
  }
  // In runs of 20 so that neither the af_packet ring nor the kernel's
  // backlog is asked to hold the whole burst at once.
  for (int i = 0; i < kCount; i += 20) {
    std::vector<Frame> run(frames.begin() + i, frames.begin() + i + 20);
    ASSERT_EQ(pod_->send(run), run.size());
    const uint64_t want = tunnel(before, "kernel")->tx_packets() + static_cast<uint64_t>(i) + 20;
    ASSERT_TRUE(waitFor([&] {
      const v1::GetStatsResponse now = node_->stats();
      return tunnel(now, "kernel")->tx_packets() >= want;
    }));
  }
  ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(out); }, std::chrono::seconds(30)));
  EXPECT_EQ(readFile(out), "200 200") << "received, distinct: every datagram exactly once";
  const v1::GetStatsResponse after = node_->stats();
  EXPECT_EQ(tunnel(after, "kernel")->tx_packets() - tunnel(before, "kernel")->tx_packets(), kCount);
  EXPECT_EQ(tunnel(after, "kernel")->tx_bytes() - tunnel(before, "kernel")->tx_bytes(), kCount * 60u);
  EXPECT_EQ(drops(after, "neighbor_unresolved"), drops(before, "neighbor_unresolved"));
  EXPECT_EQ(drops(after, "tx_queue_full"), drops(before, "tx_queue_full"));
  // Both directions' megaflows are listed, matching what their decision read
  // (toward the remote node: its whole pod CIDR, one megaflow).
  grpc::ClientContext ctx;
  v1::ListFlowsResponse flows;
  ASSERT_TRUE(node_->api().ListFlows(&ctx, {}, &flows).ok());
  bool encap = false;
  for (const v1::Flow& f : flows.flows())
    if (f.actions().find("vxlan_encap(tunnel 0),output:31") != std::string::npos &&
        f.match().find("ipv4_dst=10.245.0.0/24,tun_vni=0") != std::string::npos)
      encap = true;
  EXPECT_TRUE(encap) << flows.DebugString();
}

TEST_F(VxlanKernelTest, PingFromTheRemotePodIsAnsweredByATestpmdPod) {
  ASSERT_EQ(shell("command -v ping"), 0) << "ping missing: apt-get install iputils-ping";
  ASSERT_EQ(shell("command -v dpdk-testpmd"), 0) << "dpdk-testpmd missing: apt-get install dpdk";
  // A second local pod: dpdk-testpmd in icmpecho mode (answers ARP and ping).
  v1::AddPortResponse resp;
  ASSERT_TRUE(node_->addPort(portRequest("vxecho", kEchoIp), &resp).ok());
  const std::string log = dir_ + "/testpmd.log";
  const std::string cmd = "stdbuf -oL dpdk-testpmd -l 0,1 --main-lcore 1 --no-huge --no-pci -m 1024 --no-shconf "
                          "--file-prefix=slvx-echo-" + processTag() + " --vdev net_virtio_user0,path=" +
                          resp.port().socket_path() + ",mac=" + MacAddress::fromIpv4(kEchoIp).toString() +
                          " -- --forward-mode=icmpecho --total-num-mbufs=32768 --stats-period 1 > " + log +
                          " 2>&1 & echo $!";
  std::string pid_text;
  ASSERT_EQ(shell(cmd, &pid_text), 0);
  const pid_t testpmd = static_cast<pid_t>(std::stol(pid_text));
  struct Killer {
    pid_t pid;
    ~Killer() {
      ::kill(pid, SIGINT);
      waitFor([&] { return ::kill(pid, 0) != 0; }, std::chrono::seconds(10));
      ::kill(pid, SIGKILL);
    }
  } killer{testpmd};
  // Forwarding once its first statistics period is printed.
  ASSERT_TRUE(waitFor([&] { return readFile(log).find("Port statistics") != std::string::npos; },
                      std::chrono::seconds(30)))
      << readFile(log);
  ASSERT_TRUE(node_->waitLinkUp(resp.port().port_no()));
  const v1::GetStatsResponse before = node_->stats();
  std::string out;
  EXPECT_EQ(topo_->in(rpod_ns_, "ping -c 3 -i 0.2 -W 5 10.244.0.6", &out), 0) << out << readFile(log);
  EXPECT_NE(out.find("3 packets transmitted, 3 received"), std::string::npos) << out;
  const v1::GetStatsResponse after = node_->stats();
  EXPECT_EQ(tunnel(after, "kernel")->rx_packets() - tunnel(before, "kernel")->rx_packets(), 3u) << "echo requests";
  EXPECT_EQ(tunnel(after, "kernel")->tx_packets() - tunnel(before, "kernel")->tx_packets(), 3u) << "echo replies";
  v1::DeletePortResponse del;
  EXPECT_TRUE(node_->deletePort("vxecho", "eth0", &del).ok());
}

// IPv6 inside the IPv4 tunnel, kernel to pod: delivered through the /128
// table with the hop limit one lower, every byte of the datagram as sent.
TEST_F(VxlanKernelTest, Ipv6UdpFromTheKernelsRemotePodArrivesDecapsulated) {
  constexpr int kCount = 200;
  const v1::GetStatsResponse before = node_->stats();
  ASSERT_EQ(topo_->in(remote_ns_, "python3 " + dir_ + "/send.py " + kPodIp6.toString() + " 7777 " +
                                      std::to_string(kCount)),
            0);
  std::vector<Frame> got = pod_->receive(kCount);
  ASSERT_EQ(got.size(), static_cast<size_t>(kCount)) << node_->stats().DebugString();
  std::set<uint32_t> seqs;
  for (const Frame& f : got) {
    ASSERT_EQ(f.size(), 14u + 40 + 8 + 16);
    EXPECT_EQ(ethDst(f), kPodMac);
    EXPECT_EQ(ethSrc(f), kGatewayMac);
    EXPECT_EQ(f[12], 0x86);
    EXPECT_EQ(f[13], 0xdd);
    EXPECT_EQ(f[21], 63) << "hop limit 64, -1 by sluiced (the remote node sent it itself)";
    EXPECT_EQ(Frame(f.begin() + 22, f.begin() + 38), Frame(kRemotePodIp6.bytes.begin(), kRemotePodIp6.bytes.end()));
    EXPECT_EQ(Frame(f.begin() + 38, f.begin() + 54), Frame(kPodIp6.bytes.begin(), kPodIp6.bytes.end()));
    EXPECT_EQ(Frame(f.begin() + 66, f.end()), Frame({'s', 'l', 'u', 'i', 'c', 'e', '-', 'v', 'x', 'l', 'a', 'n'}));
    seqs.insert((uint32_t{f[62]} << 24) | (uint32_t{f[63]} << 16) | (uint32_t{f[64]} << 8) | f[65]);
  }
  EXPECT_EQ(seqs.size(), static_cast<size_t>(kCount));
  const v1::GetStatsResponse after = node_->stats();
  EXPECT_EQ(tunnel(after, "kernel")->rx_packets() - tunnel(before, "kernel")->rx_packets(), kCount);
  EXPECT_EQ(tunnel(after, "kernel")->rx_bytes() - tunnel(before, "kernel")->rx_bytes(), kCount * 78u);
  EXPECT_EQ(tunnel(after, "kernel")->tx_packets(), tunnel(before, "kernel")->tx_packets());
}

// IPv6 from a pod to the remote node's IPv6 pod CIDR: encapsulated toward
// its VTEP over IPv4, taken by the kernel's VXLAN device, every datagram
// delivered once; one megaflow covers the remote CIDR.
TEST_F(VxlanKernelTest, Ipv6UdpFromALocalPodReachesTheKernelsRemotePod) {
  constexpr int kCount = 200;
  const std::string out = dir_ + "/recv6.out";
  std::filesystem::remove(out);
  std::filesystem::remove(out + ".ready");
  ASSERT_EQ(topo_->in(remote_ns_, "sh -c 'python3 " + dir_ + "/recv.py 7777 " + std::to_string(kCount) + " " + out +
                                      " 6 >/dev/null 2>&1 &'"),
            0);
  ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(out + ".ready"); }));
  const v1::GetStatsResponse before = node_->stats();
  std::vector<Frame> frames;
  uint64_t bytes = 0;
  for (int i = 0; i < kCount; ++i) {
    Udp6FrameSpec s{kPodMac, kGatewayMac, kPodIp6, kRemotePodIp6};
    s.dst_port = 7777;
    s.src_port = static_cast<uint16_t>(4000 + i % 8);
    s.sequence = static_cast<uint32_t>(i);
    frames.push_back(udp6Frame(s));
    bytes += frames.back().size();
  }
  for (int i = 0; i < kCount; i += 20) {
    std::vector<Frame> run(frames.begin() + i, frames.begin() + i + 20);
    ASSERT_EQ(pod_->send(run), run.size());
    const uint64_t want = tunnel(before, "kernel")->tx_packets() + static_cast<uint64_t>(i) + 20;
    ASSERT_TRUE(waitFor([&] { return tunnel(node_->stats(), "kernel")->tx_packets() >= want; }))
        << node_->stats().DebugString();
  }
  ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(out); }, std::chrono::seconds(30)));
  EXPECT_EQ(readFile(out), "200 200") << "received, distinct: every datagram exactly once";
  const v1::GetStatsResponse after = node_->stats();
  EXPECT_EQ(tunnel(after, "kernel")->tx_packets() - tunnel(before, "kernel")->tx_packets(), kCount);
  EXPECT_EQ(tunnel(after, "kernel")->tx_bytes() - tunnel(before, "kernel")->tx_bytes(), bytes);
  EXPECT_EQ(drops(after, "no_route"), drops(before, "no_route"));
  EXPECT_EQ(drops(after, "neighbor_unresolved"), drops(before, "neighbor_unresolved"));
  grpc::ClientContext ctx;
  v1::ListFlowsResponse flows;
  ASSERT_TRUE(node_->api().ListFlows(&ctx, {}, &flows).ok());
  int encap = 0;
  for (const v1::Flow& f : flows.flows())
    if (f.actions().find("vxlan_encap(tunnel 0),output:31(l3v6_rewrite)") != std::string::npos) ++encap;
  EXPECT_EQ(encap, 1) << flows.DebugString();
}

// Outer fragments are not injected here: DPDK 22.11's af_packet port joins a
// PACKET_FANOUT group with the kernel's defragmentation flag, so the kernel
// reassembles (or holds) fragments before the PMD sees them. The fragment
// drop is asserted on bytes in tests/unit/vxlan/decap_test.cc and fuzzed.
TEST_F(VxlanKernelTest, MalformedOuterFramesAreDroppedAndCountedByReason) {
  constexpr int kReps = 5;
  const v1::GetStatsResponse before = node_->stats();
  std::string our_mac;
  ASSERT_EQ(topo_->in(remote_ns_, "cat /sys/class/net/" + remote_if_ + "/address", &our_mac), 0);
  our_mac.pop_back();
  std::string out;
  ASSERT_EQ(topo_->in(remote_ns_, "python3 " + dir_ + "/inject.py " + remote_if_ + " " + our_mac + " " +
                                      listNodes().overlay().vtep_mac() + " " + std::to_string(kReps),
                      &out),
            0)
      << out;
  const std::map<std::string, uint64_t> expected = {
      {"vxlan_truncated", 2 * kReps},  // cut after the UDP header; IHL 15 beyond the frame
      {"vxlan_bad_flags", kReps},     {"vxlan_unknown_vni", kReps}, {"vxlan_wrong_vtep", kReps},
      {"vxlan_bad_outer_ip", kReps},  {"uplink_not_vxlan", kReps},
      {"vxlan_unknown_source", kReps}, {"vxlan_inner_nd", kReps},
  };
  ASSERT_TRUE(waitFor([&] {
    const v1::GetStatsResponse s = node_->stats();
    for (const auto& [reason, n] : expected)
      if (drops(s, reason) - drops(before, reason) < n) return false;
    return true;
  })) << node_->stats().DebugString();
  const v1::GetStatsResponse after = node_->stats();
  for (const auto& [reason, n] : expected) EXPECT_EQ(drops(after, reason) - drops(before, reason), n) << reason;
  EXPECT_EQ(pod_->drainCount(), 0u) << "nothing malformed reached the pod";
  EXPECT_EQ(tunnel(after, "kernel")->rx_packets(), tunnel(before, "kernel")->rx_packets())
      << "only the well-formed VXLAN from a known VTEP counts as tunnel traffic";
}

// The inner source of tunnelled traffic must be the sending node's: from a
// member VTEP, inner sources of a local pod, of another node's pod CIDR, of
// this node's own address or of a local IPv6 pod are dropped and counted as
// overlay_spoofed_source; the kernel node's own pod still reaches ours,
// every byte as routed.
TEST_F(VxlanKernelTest, ForgedInnerSourcesAreDroppedAndTheSendersOwnPodsForwarded) {
  constexpr int kReps = 5;
  auto ctx = [] {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return c;
  };
  // Another node, whose pods the kernel's node may not speak for.
  v1::AddNodeRequest add;
  add.mutable_node()->set_name("worker-5");
  add.mutable_node()->set_vtep("192.168.77.5");
  add.mutable_node()->add_pod_cidrs("10.247.0.0/24");
  v1::AddNodeResponse added;
  grpc::Status s = node_->remoteNodes().AddNode(ctx().get(), add, &added);
  ASSERT_TRUE(s.ok()) << s.error_message();

  const v1::GetStatsResponse before = node_->stats();
  std::string our_mac;
  ASSERT_EQ(topo_->in(remote_ns_, "cat /sys/class/net/" + remote_if_ + "/address", &our_mac), 0);
  our_mac.pop_back();
  std::string out;
  ASSERT_EQ(topo_->in(remote_ns_, "python3 " + dir_ + "/inject_inner.py " + remote_if_ + " " + our_mac + " " +
                                      listNodes().overlay().vtep_mac() + " " + std::to_string(kReps),
                      &out),
            0)
      << out;
  std::vector<Frame> got = pod_->receive(kReps);
  ASSERT_EQ(got.size(), static_cast<size_t>(kReps)) << node_->stats().DebugString();
  for (int i = 0; i < kReps; ++i) {
    const Frame& f = got[i];
    ASSERT_EQ(f.size(), 14u + 20 + 8 + 16);
    EXPECT_EQ(ethDst(f), kPodMac);
    EXPECT_EQ(ethSrc(f), kGatewayMac);
    EXPECT_EQ(ipv4Ttl(f), 63) << "64, -1 by sluiced";
    EXPECT_TRUE(ipv4ChecksumValid(f));
    EXPECT_EQ(Ipv4Address({(uint32_t{f[26]} << 24) | (uint32_t{f[27]} << 16) | (uint32_t{f[28]} << 8) | f[29]}),
              kRemotePodIp);
    EXPECT_EQ(Ipv4Address({(uint32_t{f[30]} << 24) | (uint32_t{f[31]} << 16) | (uint32_t{f[32]} << 8) | f[33]}),
              kPodIp);
    EXPECT_EQ((uint32_t{f[42]} << 24) | (uint32_t{f[43]} << 16) | (uint32_t{f[44]} << 8) | f[45], uint32_t(i))
        << "in order, the legitimate ones only";
    EXPECT_EQ(Frame(f.begin() + 46, f.end()), Frame(12, 'x'));
  }
  ASSERT_TRUE(waitFor([&] {
    return drops(node_->stats(), "overlay_spoofed_source") - drops(before, "overlay_spoofed_source") >= 5u * kReps;
  })) << node_->stats().DebugString();
  const v1::GetStatsResponse after = node_->stats();
  EXPECT_EQ(drops(after, "overlay_spoofed_source") - drops(before, "overlay_spoofed_source"), 5u * kReps);
  EXPECT_EQ(drops(after, "vxlan_unknown_source") - drops(before, "vxlan_unknown_source"), 0u)
      << "the outer source is a member: only the inner one is forged";
  EXPECT_EQ(pod_->drainCount(), 0u) << "nothing forged reached the pod";

  v1::DeleteNodeRequest del;
  del.set_name("worker-5");
  v1::DeleteNodeResponse deleted;
  ASSERT_TRUE(node_->remoteNodes().DeleteNode(ctx().get(), del, &deleted).ok());
}

// Turns transmit checksum offload off on an interface (argv[1]) through the
// ethtool ioctl (ETHTOOL_STXCSUM), without the ethtool program: a veth
// otherwise hands its peer packets whose checksums are still to be filled,
// which an af_packet reader sees unfinished.
constexpr char kTxChecksumOff[] = R"(import array, fcntl, socket, struct, sys
value = array.array("B", struct.pack("II", 0x17, 0))
ifreq = struct.pack("16sP", sys.argv[1].encode(), value.buffer_info()[0]) + bytes(16)
fcntl.ioctl(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), 0x8946, ifreq)
)";

// An IPv6 underlay with the kernel's VXLAN over IPv6 as the peer: sluiced's
// VTEP fd00:77::1, the kernel's fd00:77::2 ("type vxlan ... local fd00:77::2
// remote fd00:77::1", UDP checksums on as the kernel defaults for IPv6). Each
// side resolves the other by neighbor discovery; pod traffic of both
// families crosses the tunnel both ways, every byte and counter exact.
class VxlanKernelIpv6UnderlayTest : public ::testing::Test {
 protected:
  static constexpr char kOurVtep[] = "fd00:77::1";
  static constexpr char kKernelVtep[] = "fd00:77::2";

  static void SetUpTestSuite() {
    ASSERT_NE(podPool(), nullptr);
    topo_ = new Topology();
    const std::string tag = processTag();
    remote_ns_ = "slv6r" + tag;
    uplink_if_ = "slv6u" + tag + "a";
    remote_if_ = "slv6u" + tag + "b";
    Topology& t = *topo_;
    const std::string& r = remote_ns_;
    ASSERT_TRUE(t.addNetns(r)) << t.error();
    ASSERT_TRUE(t.addVeth(uplink_if_, "", remote_if_, r)) << t.error();
    // IPv6 on the underlay link and vx0 without link-local addresses (no
    // DAD, router solicitation or MLD to disturb exact counts); the remote
    // pod addresses of both families on lo, our pod CIDRs routed through our
    // gateway over vx0.
    const std::string gw_mac = kGatewayMac.toString();
    const std::vector<std::string> remote_setup = {
        "ip link set " + remote_if_ + " addrgenmode none",
        "sysctl -qw net.ipv6.conf." + remote_if_ + ".disable_ipv6=0 net.ipv6.conf.lo.disable_ipv6=0 "
        "net.ipv6.conf." + remote_if_ + ".accept_ra=0 net.ipv6.conf." + remote_if_ + ".router_solicitations=0",
        "ip -6 addr add " + std::string(kKernelVtep) + "/64 dev " + remote_if_ + " nodad",
        std::string("ip link add vx0 address ") + kRemoteVxMac + " type vxlan id 42 dstport 4789 local " +
            kKernelVtep + " remote " + kOurVtep + " dev " + remote_if_ + " nolearning",
        "ip link set vx0 addrgenmode none",
        "sysctl -qw net.ipv6.conf.vx0.disable_ipv6=0 net.ipv6.conf.vx0.accept_ra=0 "
        "net.ipv6.conf.vx0.router_solicitations=0",
        "ip link set vx0 up",
        "ip addr add " + kRemotePodIp.toString() + "/32 dev lo",
        "ip route add 10.244.0.0/24 via 10.244.0.1 dev vx0 onlink src " + kRemotePodIp.toString(),
        "ip neigh add 10.244.0.1 lladdr " + gw_mac + " dev vx0 nud permanent",
        "ip -6 addr add " + kRemotePodIp6.toString() + "/128 dev lo nodad",
        "ip -6 route add fd00:10:244::/64 via fd00:10:244::1 dev vx0 onlink src " + kRemotePodIp6.toString(),
        "ip -6 neigh add fd00:10:244::1 lladdr " + gw_mac + " dev vx0 nud permanent",
    };
    for (const std::string& c : remote_setup) ASSERT_EQ(t.in(r, c), 0) << c;

    std::string error;
    SluicedOptions o;
    o.pod_cidr = "10.244.0.0/24";
    dir_ = "/tmp/slv6-" + tag;
    std::filesystem::create_directories(dir_);
    // The kernel's outer UDP checksums finished before they reach the veth
    // (sluiced verifies them).
    writeFile(dir_ + "/txcsum_off.py", kTxChecksumOff);
    ASSERT_EQ(t.in(r, "python3 " + dir_ + "/txcsum_off.py " + remote_if_), 0);
    const std::string cfg = dir_ + "/sluiced.json";
    writeFile(cfg, R"({"vni": 42,
      "uplink": {"devargs": "net_af_packet0,iface=)" + uplink_if_ + R"(", "vtep": "fd00:77::1/64", "mtu": 1500},
      "remote-nodes": [{"name": "kernel", "vtep": "fd00:77::2", "pod-cidrs": ["10.245.0.0/24", "fd00:10:245::/64"],
                        "mac": ")" + kRemoteVxMac + R"("}]})");
    o.extra_flags = {"--config", cfg, "--pod-cidr-v6", "fd00:10:244::/64"};
    node_ = SluicedProcess::start(o, &error).release();
    ASSERT_NE(node_, nullptr) << error;
    v1::AddPortResponse resp;
    v1::AddPortRequest dual_stack = portRequest("v6upod", kPodIp);
    dual_stack.set_ipv6(kPodIp6.toString());
    ASSERT_TRUE(node_->addPort(dual_stack, &resp).ok());
    EXPECT_EQ(resp.port().overlay_mtu(), 1430u) << "1500 - 70 of outer IPv6 headers";
    auto pod = VirtioPod::create(resp.port().socket_path(), false, podPool());
    ASSERT_TRUE(pod.ok()) << pod.status();
    pod_ = pod->release();
    ASSERT_TRUE(node_->waitLinkUp(resp.port().port_no()));
    // Our solicitation answered by the kernel's advertisement.
    ASSERT_TRUE(waitFor([] { return listNodes().nodes_size() == 1 && listNodes().nodes(0).neighbor_state() == "reachable"; }))
        << listNodes().DebugString() << node_->log();
    writeFile(dir_ + "/send.py", kUdpSender);
    writeFile(dir_ + "/recv.py", kUdpReceiver);
  }

  static void TearDownTestSuite() {
    delete pod_;
    pod_ = nullptr;
    if (node_ != nullptr) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
    delete node_;
    node_ = nullptr;
    delete topo_;
    topo_ = nullptr;
    std::filesystem::remove_all(dir_);
  }

  static v1::ListNodesResponse listNodes() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListNodesResponse r;
    grpc::Status s = node_->remoteNodes().ListNodes(&ctx, {}, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r;
  }

  static inline Topology* topo_ = nullptr;
  static inline SluicedProcess* node_ = nullptr;
  static inline VirtioPod* pod_ = nullptr;
  static inline std::string remote_ns_, uplink_if_, remote_if_, dir_;
};

// The kernel sends to both pod addresses: it resolved our VTEP by a
// solicitation the PMD answered, its checksummed datagrams pass our check,
// and the pod gets every datagram with the hop limit or TTL one lower.
TEST_F(VxlanKernelIpv6UnderlayTest, BothFamiliesFromTheKernelArriveDecapsulated) {
  const v1::ListNodesResponse nodes = listNodes();
  EXPECT_EQ(nodes.overlay().vtep(), kOurVtep);
  ASSERT_EQ(nodes.nodes_size(), 1);
  EXPECT_EQ(nodes.nodes(0).vtep(), kKernelVtep);
  EXPECT_EQ(nodes.nodes(0).next_hop(), kKernelVtep);
  constexpr int kCount = 100;
  const v1::GetStatsResponse before = node_->stats();
  for (const std::string& dst : {kPodIp.toString(), kPodIp6.toString()})
    ASSERT_EQ(topo_->in(remote_ns_, "python3 " + dir_ + "/send.py " + dst + " 7777 " + std::to_string(kCount)), 0);
  std::vector<Frame> got = pod_->receive(2 * kCount);
  ASSERT_EQ(got.size(), 2u * kCount) << node_->stats().DebugString();
  std::set<uint32_t> seqs4, seqs6;
  const Frame payload_tail = {'s', 'l', 'u', 'i', 'c', 'e', '-', 'v', 'x', 'l', 'a', 'n'};
  for (const Frame& f : got) {
    EXPECT_EQ(ethDst(f), kPodMac);
    EXPECT_EQ(ethSrc(f), kGatewayMac);
    if (f[12] == 0x08) {
      ASSERT_EQ(f.size(), 14u + 20 + 8 + 16);
      EXPECT_EQ(ipv4Ttl(f), 63) << "64, -1 by sluiced (the remote node sent it itself)";
      EXPECT_TRUE(ipv4ChecksumValid(f));
      EXPECT_EQ(Frame(f.begin() + 46, f.end()), payload_tail);
      seqs4.insert((uint32_t{f[42]} << 24) | (uint32_t{f[43]} << 16) | (uint32_t{f[44]} << 8) | f[45]);
    } else {
      ASSERT_EQ(f.size(), 14u + 40 + 8 + 16);
      EXPECT_EQ(f[21], 63) << "hop limit 64, -1 by sluiced";
      EXPECT_EQ(Frame(f.begin() + 22, f.begin() + 38), Frame(kRemotePodIp6.bytes.begin(), kRemotePodIp6.bytes.end()));
      EXPECT_EQ(Frame(f.begin() + 38, f.begin() + 54), Frame(kPodIp6.bytes.begin(), kPodIp6.bytes.end()));
      EXPECT_EQ(Frame(f.begin() + 66, f.end()), payload_tail);
      seqs6.insert((uint32_t{f[62]} << 24) | (uint32_t{f[63]} << 16) | (uint32_t{f[64]} << 8) | f[65]);
    }
  }
  EXPECT_EQ(seqs4.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(seqs6.size(), static_cast<size_t>(kCount));
  const v1::GetStatsResponse after = node_->stats();
  ASSERT_NE(tunnel(after, "kernel"), nullptr);
  EXPECT_EQ(tunnel(after, "kernel")->rx_packets() - tunnel(before, "kernel")->rx_packets(), 2u * kCount);
  EXPECT_EQ(tunnel(after, "kernel")->rx_bytes() - tunnel(before, "kernel")->rx_bytes(), kCount * (58u + 78u));
  EXPECT_EQ(tunnel(after, "kernel")->tx_packets(), tunnel(before, "kernel")->tx_packets());
  EXPECT_EQ(drops(after, "vxlan_bad_udp_checksum"), 0u);
}

// The pod sends both families to the kernel's pod addresses: encapsulated in
// outer IPv6 with a UDP checksum the kernel verifies (it drops a bad or zero
// one by default), every datagram received once.
TEST_F(VxlanKernelIpv6UnderlayTest, BothFamiliesFromAPodReachTheKernel) {
  constexpr int kCount = 100;
  const std::string out4 = dir_ + "/recv4.out", out6 = dir_ + "/recv6.out";
  struct Receiver {
    std::string port, out, family;
  };
  for (const Receiver& r : {Receiver{"7777", out4, ""}, Receiver{"7778", out6, " 6"}}) {
    std::filesystem::remove(r.out);
    std::filesystem::remove(r.out + ".ready");
    ASSERT_EQ(topo_->in(remote_ns_, "sh -c 'python3 " + dir_ + "/recv.py " + r.port + " " + std::to_string(kCount) +
                                        " " + r.out + r.family + " >/dev/null 2>&1 &'"),
              0);
    ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(r.out + ".ready"); }));
  }
  const v1::GetStatsResponse before = node_->stats();
  std::vector<Frame> frames;
  uint64_t bytes = 0;
  for (int i = 0; i < kCount; ++i) {
    UdpFrameSpec s{kPodMac, kGatewayMac, kPodIp, kRemotePodIp};
    s.dst_port = 7777;
    s.src_port = static_cast<uint16_t>(4000 + i % 8);
    s.sequence = static_cast<uint32_t>(i);
    frames.push_back(udpFrame(s));
    Udp6FrameSpec s6{kPodMac, kGatewayMac, kPodIp6, kRemotePodIp6};
    s6.dst_port = 7778;
    s6.src_port = static_cast<uint16_t>(4000 + i % 8);
    s6.sequence = static_cast<uint32_t>(i);
    s6.frame_len = 80 + static_cast<size_t>(i % 7);  // odd lengths too: the checksum's last byte pads
    frames.push_back(udp6Frame(s6));
  }
  for (const Frame& f : frames) bytes += f.size();
  for (size_t i = 0; i < frames.size(); i += 20) {
    std::vector<Frame> run(frames.begin() + static_cast<std::ptrdiff_t>(i),
                           frames.begin() + static_cast<std::ptrdiff_t>(i) + 20);
    ASSERT_EQ(pod_->send(run), run.size());
    const uint64_t want = tunnel(before, "kernel")->tx_packets() + i + 20;
    ASSERT_TRUE(waitFor([&] { return tunnel(node_->stats(), "kernel")->tx_packets() >= want; }))
        << node_->stats().DebugString();
  }
  for (const std::string& out : {out4, out6}) {
    ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(out); }, std::chrono::seconds(30)));
    EXPECT_EQ(readFile(out), "100 100") << out << ": received, distinct: every datagram exactly once";
  }
  const v1::GetStatsResponse after = node_->stats();
  EXPECT_EQ(tunnel(after, "kernel")->tx_packets() - tunnel(before, "kernel")->tx_packets(), 2u * kCount);
  EXPECT_EQ(tunnel(after, "kernel")->tx_bytes() - tunnel(before, "kernel")->tx_bytes(), bytes);
  EXPECT_EQ(drops(after, "neighbor_unresolved"), drops(before, "neighbor_unresolved"));
  EXPECT_EQ(drops(after, "no_route"), drops(before, "no_route"));
  // The kernel's own count of IPv6 UDP checksum failures in its namespace.
  std::string csum_errors;
  ASSERT_EQ(topo_->in(remote_ns_, "awk '/^Udp6InCsumErrors/ {print $2}' /proc/net/snmp6", &csum_errors), 0);
  EXPECT_EQ(csum_errors, "0\n");
}


// The external network on the uplink: sluiced's uplink (VTEP 192.168.78.1/24,
// no remote node) faces a "gateway" namespace, a router with forwarding on
// that routes the pod CIDR back to the VTEP address, and behind it an
// "external host" namespace (198.51.100.2). Once untagged, once with
// external-vlan 100. This kernel has no 802.1Q devices (CONFIG_VLAN_8021Q
// off), so there the gateway namespace holds a trunk port in user space:
// the uplink's veth end carries VLAN 100 tagged, and a relay passes only
// that VLAN, untagged, to and from the router's own veth (anything else is
// dropped, so only tagged frames can work). Each test starts its own
// sluiced (the keys take a restart).
const Ipv4Address kExternalHost = *Ipv4Address::parse("198.51.100.2");

// Raw frames from the gateway's side toward sluiced's uplink: argv = ifname,
// source MAC, sluiced's uplink MAC, VLAN (0: untagged). One of each case.
constexpr char kOutsideInjector[] = R"(import socket, struct, sys
ifname, vlan = sys.argv[1], int(sys.argv[4])
src_mac, dst_mac = (bytes.fromhex(a.replace(":", "")) for a in sys.argv[2:4])
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
def frame(src, dst, tag):
    udp = struct.pack("!HHHH", 1000, 7777, 8 + 16, 0) + b"y" * 16
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0x4000, 63, 17, 0, socket.inet_aton(src), socket.inet_aton(dst))
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    vlan_tag = struct.pack("!HH", 0x8100, tag) if tag else b""
    return dst_mac + src_mac + vlan_tag + b"\x08\x00" + h + udp
cases = {
    "external_spoofed_source": frame("10.244.0.77", "10.244.0.5", vlan),
    "external_not_local": frame("198.51.100.2", "10.245.0.1", vlan),
    "external_wrong_vlan": frame("198.51.100.2", "10.244.0.5", 7 if vlan == 0 else vlan + 1),
}
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
for f in cases.values():
    s.send(f)
print(" ".join(cases.keys()))
)";

// An 802.1Q trunk port: argv = trunk ifname, access ifname, VLAN, ready
// file. Frames of that VLAN from the trunk leave the access side untagged;
// untagged frames from the access side leave the trunk tagged. The kernel
// moves a received tag into the packet's metadata: it is read back from
// PACKET_AUXDATA.
constexpr char kVlanTrunk[] = R"(import select, socket, struct, sys
trunk, access, vid, ready = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
SOL_PACKET, PACKET_AUXDATA, TP_STATUS_VLAN_VALID, PACKET_OUTGOING = 263, 8, 0x10, 4
def port(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.bind((ifname, 0))
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    return s
t, a = port(trunk), port(access)
open(ready, "w").write("ready")
while True:
    for s in select.select([t, a], [], [])[0]:
        data, anc, _, addr = s.recvmsg(65536, socket.CMSG_SPACE(20))
        if addr[2] == PACKET_OUTGOING:
            continue
        tci = None
        for level, kind, value in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA:
                status, _, _, _, _, v = struct.unpack("IIIHHH", value[:18])
                if status & TP_STATUS_VLAN_VALID:
                    tci = v
        if tci is None and data[12:14] == b"\x81\x00":
            tci = struct.unpack("!H", data[14:16])[0]
            data = data[:12] + data[16:]
        if s is t:
            if tci is not None and tci & 0xfff == vid:
                a.send(data)
        elif tci is None:
            t.send(data[:12] + struct.pack("!HH", 0x8100, vid) + data[12:])
)";

class VxlanExternalTest : public ::testing::Test {
 protected:
  // Builds the namespaces and starts sluiced with external-vlan `vlan`.
  void start(uint16_t vlan) {
    ASSERT_NE(podPool(), nullptr);
    const std::string tag = processTag();
    gw_ns_ = "slxg" + tag;
    ext_ns_ = "slxe" + tag;
    uplink_if_ = "slxu" + tag + "a";
    gw_if_ = "slxu" + tag + "b";
    router_if_ = vlan != 0 ? "slxt" + tag + "b" : gw_if_;
    Topology& t = topo_;
    ASSERT_TRUE(t.addNetns(gw_ns_) && t.addNetns(ext_ns_)) << t.error();
    ASSERT_TRUE(t.addVeth(uplink_if_, "", gw_if_, gw_ns_)) << t.error();
    ASSERT_TRUE(t.addVeth("slxh" + tag + "a", gw_ns_, "slxh" + tag + "b", ext_ns_)) << t.error();
    dir_ = "/tmp/slxn-" + tag;
    std::filesystem::create_directories(dir_);
    writeFile(dir_ + "/send.py", kUdpSender);
    writeFile(dir_ + "/recv.py", kUdpReceiver);
    writeFile(dir_ + "/inject.py", kOutsideInjector);
    writeFile(dir_ + "/txcsum_off.py", kTxChecksumOff);
    writeFile(dir_ + "/trunk.py", kVlanTrunk);
    const std::string& gw_addr_if = router_if_;
    if (vlan != 0) {
      ASSERT_TRUE(t.addVeth("slxt" + tag + "a", gw_ns_, router_if_, gw_ns_)) << t.error();
      std::string pid;
      ASSERT_EQ(t.in(gw_ns_, "sh -c 'python3 " + dir_ + "/trunk.py " + gw_if_ + " slxt" + tag + "a " +
                                 std::to_string(vlan) + " " + dir_ + "/trunk.ready >" + dir_ +
                                 "/trunk.log 2>&1 & echo $!'",
                         &pid),
                0);
      trunk_pid_ = static_cast<pid_t>(std::stol(pid));
      ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(dir_ + "/trunk.ready"); }));
    }
    std::vector<std::string> gw_setup;
    for (const std::string& c : std::vector<std::string>{
             "ip addr add 192.168.78.254/24 dev " + gw_addr_if,
             "ip addr add 198.51.100.1/24 dev slxh" + tag + "a",
             "sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0",
             "ip route add 10.244.0.0/24 via 192.168.78.1 dev " + gw_addr_if,
         })
      gw_setup.push_back(c);
    // With the trunk, the uplink's veth end holds no address and forwards
    // nothing itself: untagged frames go nowhere.
    if (vlan != 0) gw_setup.push_back("sysctl -qw net.ipv4.conf." + gw_if_ + ".forwarding=0");
    for (const std::string& c : gw_setup) ASSERT_EQ(t.in(gw_ns_, c), 0) << c;
    ASSERT_EQ(t.in(ext_ns_, "ip addr add 198.51.100.2/24 dev slxh" + tag + "b"), 0);
    ASSERT_EQ(t.in(ext_ns_, "ip route add default via 198.51.100.1"), 0);
    // The host's checksums filled by its kernel (the af_packet uplink would
    // otherwise see them unfinished).
    ASSERT_EQ(t.in(ext_ns_, "python3 " + dir_ + "/txcsum_off.py slxh" + tag + "b"), 0);

    std::string error;
    SluicedOptions o;
    o.pod_cidr = "10.244.0.0/24";
    const std::string cfg = dir_ + "/sluiced.json";
    writeFile(cfg, R"({"vni": 42, "uplink": {"devargs": "net_af_packet0,iface=)" + uplink_if_ +
                       R"(", "vtep": "192.168.78.1/24", "mtu": 1500},
      "external-gateway": "192.168.78.254", "external-vlan": )" + std::to_string(vlan) + "}");
    o.extra_flags = {"--config", cfg};
    node_.reset(SluicedProcess::start(o, &error).release());
    ASSERT_NE(node_, nullptr) << error;
    // The gateway reaches our VTEP without asking (exact counts below).
    ASSERT_EQ(t.in(gw_ns_, "ip neigh replace 192.168.78.1 lladdr " + overlay().vtep_mac() + " dev " + gw_addr_if +
                               " nud permanent"),
              0);
    v1::AddPortResponse resp;
    ASSERT_TRUE(node_->addPort(portRequest("xpod", kPodIp), &resp).ok());
    pod_port_ = resp.port().port_no();
    auto pod = VirtioPod::create(resp.port().socket_path(), false, podPool());
    ASSERT_TRUE(pod.ok()) << pod.status();
    pod_ = std::move(*pod);
    ASSERT_TRUE(node_->waitLinkUp(pod_port_)) << node_->log();
    ASSERT_TRUE(waitFor([&] { return overlay().external().neighbor_state() == "reachable"; }))
        << overlay().DebugString() << node_->log();
  }

  void TearDown() override {
    if (trunk_pid_ > 0) ::kill(trunk_pid_, SIGKILL);
    pod_.reset();
    if (node_ != nullptr) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
    node_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  v1::Overlay overlay() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListNodesResponse r;
    grpc::Status s = node_->remoteNodes().ListNodes(&ctx, {}, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r.overlay();
  }

  // A ping from the pod to the external host, UDP both ways, a spoofed pod
  // source, and frames from outside that must not reach the pod.
  void exercise(uint16_t vlan) {
    const v1::Overlay o = overlay();
    EXPECT_EQ(o.external().gateway(), "192.168.78.254");
    EXPECT_EQ(o.external().vlan(), vlan);
    std::string gw_mac;
    ASSERT_EQ(topo_.in(gw_ns_, "cat /sys/class/net/" + router_if_ + "/address", &gw_mac), 0);
    gw_mac.pop_back();
    EXPECT_EQ(o.external().gateway_mac(), gw_mac);
    const uint32_t uplink_port = o.uplink_port();

    // Ping: the reply as the pod receives it, byte for byte but for the
    // host's IPv4 identification and flags (its kernel's choice) and the
    // header checksum that covers them.
    v1::GetStatsResponse before = node_->stats();
    ASSERT_EQ(pod_->send({icmpEcho(kPodMac, kGatewayMac, kPodIp, kExternalHost, 8, 0x5101, 1)}), 1u);
    std::vector<Frame> got = pod_->receive(1);
    ASSERT_EQ(got.size(), 1u) << node_->stats().DebugString();
    const Frame want = icmpEcho(kGatewayMac, kPodMac, kExternalHost, kPodIp, 0, 0x5101, 1, 62);
    ASSERT_EQ(got[0].size(), want.size());
    EXPECT_TRUE(ipv4ChecksumValid(got[0]));
    Frame masked = got[0];
    for (size_t i : {18, 19, 20, 21, 24, 25}) masked[i] = want[i];
    EXPECT_EQ(masked, want) << "TTL 64, -1 by the gateway, -1 by sluiced";
    v1::GetStatsResponse after = node_->stats();
    EXPECT_EQ(portStats(after, pod_port_)->rx_packets() - portStats(before, pod_port_)->rx_packets(), 1u);
    EXPECT_EQ(portStats(after, pod_port_)->tx_packets() - portStats(before, pod_port_)->tx_packets(), 1u);
    EXPECT_EQ(portStats(after, uplink_port)->tx_packets() - portStats(before, uplink_port)->tx_packets(), 1u)
        << "the echo request, toward the gateway";

    // UDP from the pod to the host: every datagram exactly once.
    constexpr int kCount = 40;
    const std::string out = dir_ + "/recv.out";
    ASSERT_EQ(topo_.in(ext_ns_, "sh -c 'python3 " + dir_ + "/recv.py 7777 " + std::to_string(kCount) + " " + out +
                                    " >/dev/null 2>&1 &'"),
              0);
    ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(out + ".ready"); }));
    before = node_->stats();
    std::vector<Frame> frames;
    for (int i = 0; i < kCount; ++i) {
      UdpFrameSpec s{kPodMac, kGatewayMac, kPodIp, kExternalHost};
      s.dst_port = 7777;
      s.src_port = static_cast<uint16_t>(4000 + i % 4);
      s.sequence = static_cast<uint32_t>(i);
      frames.push_back(udpFrame(s));
    }
    ASSERT_EQ(pod_->send(frames), frames.size());
    ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(out); }, std::chrono::seconds(30)));
    EXPECT_EQ(readFile(out), "40 40") << "received, distinct";
    after = node_->stats();
    EXPECT_EQ(portStats(after, uplink_port)->tx_packets() - portStats(before, uplink_port)->tx_packets(),
              static_cast<uint64_t>(kCount));
    EXPECT_EQ(drops(after, "external_gateway_unresolved"), 0u);

    // UDP from the host to the pod: as sent, TTL two lower.
    ASSERT_EQ(topo_.in(ext_ns_, "python3 " + dir_ + "/send.py 10.244.0.5 7777 " + std::to_string(kCount)), 0);
    got = pod_->receive(kCount);
    ASSERT_EQ(got.size(), static_cast<size_t>(kCount)) << node_->stats().DebugString();
    for (const Frame& f : got) {
      ASSERT_EQ(f.size(), 14u + 20 + 8 + 16);
      EXPECT_EQ(ethDst(f), kPodMac);
      EXPECT_EQ(ethSrc(f), kGatewayMac);
      EXPECT_EQ(ipv4Ttl(f), 62);
      EXPECT_TRUE(ipv4ChecksumValid(f));
      EXPECT_EQ(std::string(f.begin() + 46, f.end()), "sluice-vxlan");
    }

    // A pod source that is not the pod's: dropped before anything else.
    before = node_->stats();
    UdpFrameSpec spoofed{kPodMac, kGatewayMac, *Ipv4Address::parse("10.244.0.99"), kExternalHost};
    ASSERT_EQ(pod_->send({udpFrame(spoofed)}), 1u);
    ASSERT_TRUE(waitFor([&] { return drops(node_->stats(), "spoofed_source_ip") == drops(before, "spoofed_source_ip") + 1; }));
    after = node_->stats();
    EXPECT_EQ(portStats(after, uplink_port)->tx_packets(), portStats(before, uplink_port)->tx_packets());

    // From outside: a cluster source, transit, another VLAN: one drop each.
    std::string injected;
    before = node_->stats();
    ASSERT_EQ(topo_.in(gw_ns_, "python3 " + dir_ + "/inject.py " + gw_if_ + " " + gw_mac + " " + o.vtep_mac() + " " +
                                   std::to_string(vlan),
                       &injected),
              0)
        << injected;
    const std::vector<std::string> reasons = {"external_spoofed_source", "external_not_local", "external_wrong_vlan"};
    ASSERT_TRUE(waitFor([&] {
      const v1::GetStatsResponse s = node_->stats();
      for (const std::string& r : reasons)
        if (drops(s, r) == drops(before, r)) return false;
      return true;
    })) << node_->stats().DebugString();
    after = node_->stats();
    for (const std::string& r : reasons) EXPECT_EQ(drops(after, r) - drops(before, r), 1u) << r;
    EXPECT_EQ(pod_->drainCount(), 0u) << "nothing from outside reached the pod";
  }

  Topology topo_;
  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_;
  uint32_t pod_port_ = 0;
  std::string gw_ns_, ext_ns_, uplink_if_, gw_if_, router_if_, dir_;
  pid_t trunk_pid_ = 0;  // the VLAN trunk's relay (VLAN test only)
};

TEST_F(VxlanExternalTest, APodReachesAnExternalHostUntagged) {
  start(0);
  if (HasFatalFailure()) return;
  exercise(0);
}

TEST_F(VxlanExternalTest, APodReachesAnExternalHostInAVlan) {
  start(100);
  if (HasFatalFailure()) return;
  exercise(100);
}

}  // namespace
}  // namespace sluice::test
