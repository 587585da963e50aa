// SR-IOV kernel mode's netdev half against the kernel: a veth end stands in
// for the VF's netdev (as in tests/e2e/sriov_kernel_test.sh), moveIntoPod()
// takes it into a real network namespace with the addresses and routes of a
// dual-stack IPAM result, and what the kernel then holds is read back with
// `ip -j`: both addresses (the IPv6 one usable at once, not tentative), the
// default route of each family via its own gateway; returnToHost() brings the
// netdev back under its own name. Needs root (label integration).
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cni-plugin/cni_result.h"
#include "cni-plugin/logger.h"
#include "cni-plugin/sriov_netdev.h"

namespace sluice::cni::testing {
namespace {

using nlohmann::json;

// Runs a shell command; its stdout.
std::string shell(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return {};
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe.get())) out.append(buf.data(), n);
  return out;
}

class SriovNetdevTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    const std::string pid = std::to_string(getpid());
    netns_ = "sluice-netdev-" + pid;
    vf_ = "sndv" + pid;
    peer_ = "sndp" + pid;
    ASSERT_EQ(std::system(("ip netns add " + netns_).c_str()), 0);
    ASSERT_EQ(std::system(("ip link add " + vf_ + " type veth peer name " + peer_ + " && ip link set " + peer_ +
                           " up")
                              .c_str()),
              0);
  }
  void TearDown() override {
    if (netns_.empty()) return;
    (void)std::system(("ip netns del " + netns_ + " 2>/dev/null").c_str());
    (void)std::system(("ip link del " + vf_ + " 2>/dev/null; ip link del " + peer_ + " 2>/dev/null").c_str());
  }
  std::string netnsPath() const { return "/var/run/netns/" + netns_; }
  json ipJson(const std::string& args) const { return json::parse(shell("ip -n " + netns_ + " -j " + args), nullptr, false); }

  std::string netns_, vf_, peer_;
};

TEST_F(SriovNetdevTest, DualStackAddressesAndDefaultRoutesInThePod) {
  absl::StatusOr<Result> ipam = parseResult(json::parse(R"({
      "ips": [{"address": "10.251.0.7/24", "gateway": "10.251.0.1"},
              {"address": "fd00:251::7/64", "gateway": "fd00:251::1"}],
      "routes": [{"dst": "0.0.0.0/0"}, {"dst": "::/0"}]})"),
                                            "test");
  ASSERT_TRUE(ipam.ok()) << ipam.status();
  std::vector<std::string> skipped;
  const MacAddress mac = *MacAddress::parse("02:00:0a:fb:00:07");
  PodNetdevConfig cfg = podNetdevConfig(*ipam, "net1", mac, 1400, &skipped);
  EXPECT_TRUE(skipped.empty());

  absl::StatusOr<HostNetdev> original = moveIntoPod(vf_, netnsPath(), cfg);
  ASSERT_TRUE(original.ok()) << original.status();
  EXPECT_EQ(original->name, vf_);

  json links = ipJson("link show dev net1");
  ASSERT_TRUE(links.is_array() && links.size() == 1) << links;
  EXPECT_EQ(links[0]["address"], "02:00:0a:fb:00:07");
  EXPECT_EQ(links[0]["mtu"], 1400);

  json addrs = ipJson("addr show dev net1");
  ASSERT_TRUE(addrs.is_array() && addrs.size() == 1) << addrs;
  json v4, v6;
  for (const json& a : addrs[0]["addr_info"]) {
    if (a["family"] == "inet") v4 = a;
    if (a["family"] == "inet6" && a["scope"] == "global") v6 = a;
  }
  ASSERT_TRUE(v4.is_object()) << addrs;
  EXPECT_EQ(v4["local"], "10.251.0.7");
  EXPECT_EQ(v4["prefixlen"], 24);
  ASSERT_TRUE(v6.is_object()) << addrs;
  EXPECT_EQ(v6["local"], "fd00:251::7");
  EXPECT_EQ(v6["prefixlen"], 64);
  // Added without Duplicate Address Detection: usable at once.
  EXPECT_FALSE(v6.contains("tentative")) << v6;
  EXPECT_FALSE(v6.contains("dadfailed")) << v6;

  json route4 = ipJson("-4 route show default");
  ASSERT_TRUE(route4.is_array() && route4.size() == 1) << route4;
  EXPECT_EQ(route4[0]["gateway"], "10.251.0.1");
  EXPECT_EQ(route4[0]["dev"], "net1");
  json route6 = ipJson("-6 route show default");
  ASSERT_TRUE(route6.is_array() && route6.size() == 1) << route6;
  EXPECT_EQ(route6[0]["gateway"], "fd00:251::1");
  EXPECT_EQ(route6[0]["dev"], "net1");

  std::ostringstream log_text;
  Logger log(log_text);
  ASSERT_TRUE(returnToHost(netnsPath(), "net1", *original, log).ok());
  EXPECT_TRUE(ipJson("link show").is_array());
  EXPECT_EQ(ipJson("link show").size(), 1u) << "only lo is left in the pod's namespace";
  json home = json::parse(shell("ip -j link show dev " + vf_), nullptr, false);
  ASSERT_TRUE(home.is_array() && home.size() == 1) << home;
  EXPECT_EQ(home[0]["address"], original->mac.toString());
}

// An IPv6 gateway the kernel cannot reach on the link fails the move, and
// the netdev is back in the host as it was.
TEST_F(SriovNetdevTest, AnUnreachableIpv6GatewayUndoesTheMove) {
  absl::StatusOr<Result> ipam = parseResult(json::parse(R"({
      "ips": [{"address": "fd00:251::7/64"}],
      "routes": [{"dst": "::/0", "gw": "fd00:999::1"}]})"),
                                            "test");
  ASSERT_TRUE(ipam.ok()) << ipam.status();
  PodNetdevConfig cfg = podNetdevConfig(*ipam, "net1", *MacAddress::parse("02:00:0a:fb:00:08"), std::nullopt, nullptr);
  absl::StatusOr<HostNetdev> moved = moveIntoPod(vf_, netnsPath(), cfg);
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(std::string(moved.status().message()).find("route ::/0 via fd00:999::1"), std::string::npos)
      << moved.status();
  EXPECT_EQ(ipJson("link show").size(), 1u) << "nothing left in the pod's namespace";
  json home = json::parse(shell("ip -j link show dev " + vf_), nullptr, false);
  EXPECT_TRUE(home.is_array() && home.size() == 1) << home;
}

}  // namespace
}  // namespace sluice::cni::testing
