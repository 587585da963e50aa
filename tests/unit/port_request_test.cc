#include "dataplane/control/port_request.h"

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
  EXPECT_EQ(*vhostSocketPath("/run/sluice/vhost", *r), "/run/sluice/vhost/0123456789ab-net1.sock");
  RawPortRequest sub = good();
  sub.socket_subdir = "pod-0123";
  EXPECT_EQ(*vhostSocketPath("/run/sluice/vhost", *parsePortRequest(sub, kCidr, kGateway)),
            "/run/sluice/vhost/pod-0123/net1.sock");
}

TEST(PortRequestTest, NamesThatCouldEscapeTheSocketDirectoryAreRejected) {
  for (const std::string& bad : std::vector<std::string>{"../etc", "..", ".", "a/b", "/abs", std::string("a\0b", 3), "", "a b", "-rf"}) {
    RawPortRequest r = good();
    r.ifname = bad;
    EXPECT_EQ(parsePortRequest(r, kCidr, kGateway).status().code(), absl::StatusCode::kInvalidArgument) << bad;
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

}  // namespace
}  // namespace sluice
