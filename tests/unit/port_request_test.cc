#include "dataplane/core/port_request.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

const Ipv4Cidr kCidr = *Ipv4Cidr::parse("10.244.1.0/24");
const Ipv4Address kGateway = *Ipv4Address::parse("10.244.1.1");

RawPortRequest good() {
  RawPortRequest r;
  r.container_id = "0123456789abcdef0123";
  r.ifname = "net1";
  r.pod_namespace = "default";
  r.pod_name = "dpdk-app-0";
  r.ip = "10.244.1.10";
  return r;
}

TEST(PortRequestTest, AcceptsAGoodRequestAndDerivesTheMac) {
  auto r = parsePortRequest(good(), kCidr, kGateway);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->mac.toString(), "02:53:0a:f4:01:0a");
  // The first 12 characters of the id, FNV-1a 64 of the whole id, the ifname.
  EXPECT_EQ(*vhostSocketPath("/run/sluice/vhost", *r), "/run/sluice/vhost/0123456789ab-209b70f2f9c550c9-net1.sock");
  RawPortRequest sub = good();
  sub.socket_subdir = "pod-0123";
  EXPECT_EQ(*vhostSocketPath("/run/sluice/vhost", *parsePortRequest(sub, kCidr, kGateway)),
            "/run/sluice/vhost/pod-0123/net1.sock");
}

TEST(PortRequestTest, TheMtuIsTheRequestsOrTheNodesDefaultWithinItsRange) {
  EXPECT_EQ(parsePortRequest(good(), kCidr, kGateway)->mtu, 1500u) << "0: the default's default";
  EXPECT_EQ(parsePortRequest(good(), kCidr, kGateway, {}, std::nullopt, 9000)->mtu, 9000u);
  for (uint32_t ok : {68u, 1400u, 9216u}) {
    RawPortRequest r = good();
    r.mtu = ok;
    EXPECT_EQ(parsePortRequest(r, kCidr, kGateway)->mtu, ok);
  }
  for (uint32_t bad : {1u, 67u, 9217u, 65536u}) {
    RawPortRequest r = good();
    r.mtu = bad;
    EXPECT_EQ(parsePortRequest(r, kCidr, kGateway).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  // A port with IPv6 needs IPv6's minimum link MTU, asked for or by default.
  const Ipv6PodCidr v6{*Ipv6Cidr::parse("fd00::/64"), *Ipv6Address::parse("fd00::1")};
  RawPortRequest r = good();
  r.ipv6 = "fd00::a";
  r.mtu = 1279;
  EXPECT_EQ(parsePortRequest(r, kCidr, kGateway, {}, v6).status().code(), absl::StatusCode::kInvalidArgument);
  r.mtu = 0;
  EXPECT_EQ(parsePortRequest(r, kCidr, kGateway, {}, v6, 1000).status().code(), absl::StatusCode::kInvalidArgument);
  r.mtu = 1280;
  EXPECT_EQ(parsePortRequest(r, kCidr, kGateway, {}, v6, 1000)->mtu, 1280u);
}

// Queue pairs: 1 when absent, at least 1 when given, vhost-user only (the
// node's maximum is the control's to check); a different count is a
// different request.
TEST(PortRequestTest, QueuesAreOneByDefaultPositiveAndForVhostUserOnly) {
  EXPECT_EQ(parsePortRequest(good(), kCidr, kGateway)->queues, 1u);
  RawPortRequest r = good();
  r.queues = 4;
  auto four = parsePortRequest(r, kCidr, kGateway);
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(four->queues, 4u);
  EXPECT_FALSE(four->sameParameters(*parsePortRequest(good(), kCidr, kGateway)));
  r.queues = 0;
  auto zero = parsePortRequest(r, kCidr, kGateway);
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("queues: must be at least 1"), std::string::npos) << zero.status();
  RawPortRequest vdev = good();
  vdev.kind = PortKind::kDpdkVdev;
  vdev.devargs = "net_null";
  vdev.queues = 2;
  auto refused = parsePortRequest(vdev, kCidr, kGateway);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("queues: only for vhost-user ports"), std::string::npos)
      << refused.status();
}

TEST(PortRequestTest, NamesThatCouldEscapeTheSocketDirectoryAreRejected) {
  for (const std::string& bad : std::vector<std::string>{"../etc", "..", ".", "a/b", "/abs", std::string("a\0b", 3), "", "a b", "-rf"}) {
    RawPortRequest r = good();
    r.ifname = bad;
    if (bad != "-rf") {  // a valid Linux interface name (it is escaped in file names anyway)
      EXPECT_EQ(parsePortRequest(r, kCidr, kGateway).status().code(), absl::StatusCode::kInvalidArgument) << bad;
    }
    r = good();
    r.container_id = bad;
    EXPECT_EQ(parsePortRequest(r, kCidr, kGateway).status().code(), absl::StatusCode::kInvalidArgument) << bad;
    r = good();
    r.socket_subdir = bad;
    if (!bad.empty()) {  // an empty subdir means "none"
      EXPECT_EQ(parsePortRequest(r, kCidr, kGateway).status().code(), absl::StatusCode::kInvalidArgument) << bad;
    }
  }
  RawPortRequest long_ifname = good();
  long_ifname.ifname = "abcdefghijklmnop";  // 16 > IFNAMSIZ - 1
  EXPECT_EQ(parsePortRequest(long_ifname, kCidr, kGateway).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PortRequestTest, ASocketGroupOnlyForServerModeVhostUserAndNeverMinusOne) {
  RawPortRequest r = good();
  r.vhost_mode = VhostMode::kServer;
  r.socket_group = 0;
  auto ok = parsePortRequest(r, kCidr, kGateway);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->socket_group, 0u);
  r.socket_group = 4294967294u;
  EXPECT_EQ(parsePortRequest(r, kCidr, kGateway)->socket_group, 4294967294u);
  r.socket_group = 4294967295u;  // chown's "leave the group"
  EXPECT_EQ(parsePortRequest(r, kCidr, kGateway).status().message(),
            "socket_group: 4294967295 is not a group");
  r.socket_group = 2000;
  r.vhost_mode = VhostMode::kClient;  // the pod makes that socket
  EXPECT_EQ(parsePortRequest(r, kCidr, kGateway).status().message(),
            "socket_group: only for server-mode vhost-user ports (sluiced makes no other socket)");
  RawPortRequest same = good(), grouped = good();
  grouped.socket_group = 2000;
  EXPECT_FALSE(parsePortRequest(same, kCidr, kGateway)->sameParameters(*parsePortRequest(grouped, kCidr, kGateway)));
}

TEST(PortRequestTest, AddressErrorsHaveTheirOwnCodes) {
  struct Case {
    const char* ip;
    const char* mac;
    absl::StatusCode code;
  } cases[] = {
      {"10.244.1", "", absl::StatusCode::kInvalidArgument},
      {"10.244.1.300", "", absl::StatusCode::kInvalidArgument},
      {"10.244.2.10", "", absl::StatusCode::kFailedPrecondition},  // other node's CIDR
      {"10.244.1.0", "", absl::StatusCode::kFailedPrecondition},   // network
      {"10.244.1.255", "", absl::StatusCode::kFailedPrecondition}, // broadcast
      {"10.244.1.1", "", absl::StatusCode::kFailedPrecondition},   // gateway
      {"10.244.1.10", "zz:00:00:00:00:00", absl::StatusCode::kInvalidArgument},
      {"10.244.1.10", "01:00:00:00:00:01", absl::StatusCode::kInvalidArgument},  // multicast
      {"10.244.1.10", "00:00:00:00:00:00", absl::StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    RawPortRequest r = good();
    r.ip = c.ip;
    r.mac = c.mac;
    auto parsed = parsePortRequest(r, kCidr, kGateway);
    EXPECT_EQ(parsed.status().code(), c.code) << c.ip << " " << c.mac << " " << parsed.status();
  }
}

TEST(PortRequestTest, KubernetesNamesAreChecked) {
  RawPortRequest r = good();
  r.pod_name = "Bad_Name";
  auto parsed = parsePortRequest(r, kCidr, kGateway);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("pod_name"), std::string::npos);
}

TEST(PortRequestTest, SocketPathsThatDoNotFitAUnixAddressAreRejected) {
  RawPortRequest r = good();
  r.socket_subdir = std::string(64, 'a');
  auto parsed = parsePortRequest(r, kCidr, kGateway);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(vhostSocketPath("/var/run/sluice/a-rather-long-socket-directory-name", *parsed).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// sluiced accepts exactly what Linux's dev_valid_name accepts, as sluice-cni
// does: a name the runtime passed to ADD must be deletable.
TEST(PortRequestTest, InterfaceNamesFollowLinux) {
  for (const std::string& ok : std::vector<std::string>{"net@1", "eth0.100", "-rf", "...", "a%b", "x", "\x01" "ctl",
                                                        "\xff\xfe", "abcdefghijklmno", "net1;rm", "$(x)"}) {
    EXPECT_TRUE(validateAttachment({"c1", ok}).ok()) << ok << ": " << validateAttachment({"c1", ok});
  }
  for (const std::string& bad : std::vector<std::string>{"", ".", "..", "a/b", "a:b", "a b", "a\tb", "a\nb", "a\vb",
                                                         "a\fb", "a\rb", "a\xa0", std::string("a\0b", 3),
                                                         "abcdefghijklmnop"}) {
    auto s = validateAttachment({"c1", bad});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message().substr(0, 17), "attachment.ifname") << s;
  }
}

PortRequest withIfname(const std::string& ifname, const std::string& subdir = "") {
  RawPortRequest raw = good();
  raw.ifname = ifname;
  raw.socket_subdir = subdir;
  auto r = parsePortRequest(raw, kCidr, kGateway);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

TEST(PortRequestTest, InterfaceNamesAreEscapedInSocketNames) {
  EXPECT_EQ(*vhostSocketPath("/v", withIfname("net@1", "p")), "/v/p/net%401.sock");
  EXPECT_EQ(*vhostSocketPath("/v", withIfname(".x", "p")), "/v/p/%2ex.sock");  // never a hidden file
  EXPECT_EQ(*vhostSocketPath("/v", withIfname("a.b-c_D9", "p")), "/v/p/a.b-c_D9.sock");
  EXPECT_EQ(*vhostSocketPath("/v", withIfname("\xff%", "p")), "/v/p/%ff%25.sock");
  EXPECT_EQ(*vhostSocketPath("/v", withIfname("net@1")), "/v/0123456789ab-209b70f2f9c550c9-net%401.sock");
  // '%' is escaped too, so names that look alike get their own files.
  EXPECT_NE(*vhostSocketPath("/v", withIfname("a%40", "p")), *vhostSocketPath("/v", withIfname("a@", "p")));
  // The longest names fit sun_path under the default socket directory.
  const PortRequest longest = withIfname(std::string(15, '@'));
  auto path = vhostSocketPath("/var/run/sluice/vhost", longest);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_LT(path->size(), 108u);
}

TEST(PortRequestTest, ContainersSharingAPrefixGetTheirOwnSockets) {
  RawPortRequest a = good(), b = good();
  b.container_id = "0123456789abcdef0124";  // same first 12 characters
  const std::string pa = *vhostSocketPath("/v", *parsePortRequest(a, kCidr, kGateway));
  const std::string pb = *vhostSocketPath("/v", *parsePortRequest(b, kCidr, kGateway));
  EXPECT_EQ(pa, "/v/0123456789ab-209b70f2f9c550c9-net1.sock");
  EXPECT_EQ(pb, "/v/0123456789ab-209b71f2f9c5527c-net1.sock");
  RawPortRequest shorter = good();
  shorter.container_id = "0123456789ab";
  EXPECT_EQ(*vhostSocketPath("/v", *parsePortRequest(shorter, kCidr, kGateway)),
            "/v/0123456789ab-7462bf9e43b49151-net1.sock");
}

// A checkpoint written by a sluiced before the hash names sockets the old way;
// those ports must come back on their sockets after an upgrade.
TEST(PortRequestTest, TheOldSocketNameStillMatchesItsPort) {
  const PortRequest r = *parsePortRequest(good(), kCidr, kGateway);
  EXPECT_TRUE(vhostSocketPathMatches("/v", r, "/v/0123456789ab-209b70f2f9c550c9-net1.sock"));
  EXPECT_TRUE(vhostSocketPathMatches("/v", r, "/v/0123456789ab-net1.sock"));
  EXPECT_FALSE(vhostSocketPathMatches("/v", r, "/w/0123456789ab-net1.sock"));    // socket-dir moved
  EXPECT_FALSE(vhostSocketPathMatches("/v", r, "/v/0123456789ab-net2.sock"));    // another port's
  EXPECT_FALSE(vhostSocketPathMatches("/v", r, "/v/0123456789abcdef0123-net1.sock"));
  // Subdir sockets kept their names; only those match.
  const PortRequest sub = withIfname("net1", "pod-0123");
  EXPECT_TRUE(vhostSocketPathMatches("/v", sub, "/v/pod-0123/net1.sock"));
  EXPECT_FALSE(vhostSocketPathMatches("/v", sub, "/v/0123456789ab-net1.sock"));
  // A name the old rule refused never had an old socket.
  EXPECT_FALSE(vhostSocketPathMatches("/v", withIfname("net@1"), "/v/0123456789ab-net@1.sock"));
}

}  // namespace
}  // namespace sluice
