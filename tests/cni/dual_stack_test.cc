// Dual-stack pods through the in-process dispatcher, against the fake
// sluiced and Debian's host-local with one range set per family: both
// addresses go to sluiced (ip, ipv6) and into the result (in every spec
// version's form), the device-info file and the attachment record; IPv6-only
// attachments; CHECK of both families; and the refusals: more than one
// address of a family, and a sluiced without an IPv6 pod CIDR, each a clear
// error that leaves nothing behind (no port, no record, no host-local
// reservation).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "cni-plugin/cni_result.h"
#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
namespace {

using nlohmann::json;

constexpr const char* kV4Subnet = "10.244.1.0/24";
constexpr const char* kV6Subnet = "fd00:10:244:1::/64";

json readJson(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f, nullptr, false);
}

class DualStackTest : public CniTest {
 protected:
  // host-local with an IPv4 and an IPv6 range set (the chart's dual-stack
  // IPAM), gateways given so the result's are known, and a default route of
  // each family.
  json dualConf(const std::string& version = "1.1.0") const {
    json c = CniTest::conf(version);
    c["ipam"]["ranges"] = json::array({json::array({{{"subnet", kV4Subnet}, {"gateway", "10.244.1.1"}}}),
                                       json::array({{{"subnet", kV6Subnet}, {"gateway", "fd00:10:244:1::1"}}})});
    c["ipam"]["routes"] = json::array({{{"dst", "0.0.0.0/0"}}, {{"dst", "::/0"}}});
    return c;
  }
  json v6OnlyConf(const std::string& version = "1.1.0") const {
    json c = dualConf(version);
    c["ipam"]["ranges"] = json::array({json::array({{{"subnet", kV6Subnet}, {"gateway", "fd00:10:244:1::1"}}})});
    c["ipam"]["routes"] = json::array({{{"dst", "::/0"}}});
    return c;
  }
  json withPrev(json c, const json& prev) const {
    c["prevResult"] = prev;
    return c;
  }
};

TEST_F(DualStackTest, AddGivesBothAddressesToSluicedTheResultTheRecordAndTheDeviceInfo) {
  RunResult r = run(env("ADD"), dualConf());
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;

  ASSERT_EQ(fake_->addRequests().size(), 1u);
  const v1::AddPortRequest req = fake_->addRequests()[0];
  EXPECT_EQ(req.ip(), "10.244.1.2");
  EXPECT_EQ(req.ipv6(), "fd00:10:244:1::2");

  EXPECT_EQ(r.out["ips"], json::parse(R"([
      {"address": "10.244.1.2/24", "gateway": "10.244.1.1", "interface": 0},
      {"address": "fd00:10:244:1::2/64", "gateway": "fd00:10:244:1::1", "interface": 0}])"));
  EXPECT_EQ(r.out["routes"], json::parse(R"([{"dst": "0.0.0.0/0"}, {"dst": "::/0"}])"));
  ASSERT_EQ(r.out["interfaces"].size(), 1u);
  EXPECT_EQ(r.out["interfaces"][0]["name"], "net1");

  const json rec = record(kContainerId);
  EXPECT_EQ(rec["ip"], "10.244.1.2");
  EXPECT_EQ(rec["ipv6"], "fd00:10:244:1::2");

  const json info = readJson(devinfo_path_);
  EXPECT_EQ(info["type"], "vhost-user");
  EXPECT_EQ(info["ips"], json::array({"10.244.1.2", "fd00:10:244:1::2"}));

  std::vector<std::string> held = heldIps();
  std::sort(held.begin(), held.end());
  EXPECT_EQ(held, (std::vector<std::string>{"10.244.1.2", "fd00:10:244:1::2"}));

  ASSERT_EQ(run(env("DEL"), dualConf()).rc, 0);
  expectNothingLeft();
}

TEST_F(DualStackTest, AnIpv6OnlyAttachmentSendsNoIpv4AndChecksAndDeletes) {
  RunResult r = run(env("ADD"), v6OnlyConf());
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  EXPECT_EQ(fake_->addRequests()[0].ip(), "");
  EXPECT_EQ(fake_->addRequests()[0].ipv6(), "fd00:10:244:1::2");
  EXPECT_EQ(r.out["ips"], json::parse(R"([
      {"address": "fd00:10:244:1::2/64", "gateway": "fd00:10:244:1::1", "interface": 0}])"));
  EXPECT_EQ(record(kContainerId)["ip"], "");
  EXPECT_EQ(record(kContainerId)["ipv6"], "fd00:10:244:1::2");
  EXPECT_EQ(readJson(devinfo_path_)["ips"], json::array({"fd00:10:244:1::2"}));

  RunResult check = run(env("CHECK"), withPrev(v6OnlyConf(), r.out));
  EXPECT_EQ(check.rc, 0) << check.stdout_text;

  ASSERT_EQ(run(env("DEL"), v6OnlyConf()).rc, 0);
  expectNothingLeft();
}

// A sluiced whose node has no IPv6 pod CIDR refuses the IPv6 address: ADD
// says which family and which setting, and undoes everything, the
// host-local reservation of both addresses included.
TEST_F(DualStackTest, AddRefusedForIpv6SaysWhichSettingAndLeavesNothing) {
  fake_->setIpv6(false);
  RunResult r = run(env("ADD"), dualConf());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_EQ(r.msg(),
            "this node's sluiced does not take IPv6 (pod address fd00:10:244:1::2): it has no IPv6 pod CIDR; set "
            "sluiced's \"pod-cidr-v6\" (chart: network.podCIDRv6) or give this network's IPAM no IPv6 range "
            "(sluiced AddPort: ipv6: this node has no IPv6 pod CIDR (config key pod-cidr-v6))");
  EXPECT_EQ(fake_->addRequests().size(), 1u);
  expectNothingLeft();

  // The same network without its IPv6 range works on that node.
  json v4 = CniTest::conf();
  ASSERT_EQ(run(env("ADD"), v4).rc, 0);
  ASSERT_EQ(run(env("DEL"), v4).rc, 0);
  expectNothingLeft();
}

TEST_F(DualStackTest, TwoAddressesOfAFamilyAreRefusedBeforeSluicedAndReleased) {
  json c = dualConf();
  c["ipam"]["ranges"] = json::array({json::array({{{"subnet", kV6Subnet}}}),
                                     json::array({{{"subnet", "fd00:10:245:1::/64"}}})});
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_EQ(r.msg(),
            "ipam host-local returned 2 IPv6 addresses (fd00:10:244:1::2/64, fd00:10:245:1::2/64); a sluice "
            "attachment takes at most one address per family: give the IPAM one range set per family");
  EXPECT_TRUE(fake_->calls().empty()) << "sluiced must not be asked";
  expectNothingLeft();

  c["ipam"]["ranges"] = json::array({json::array({{{"subnet", kV4Subnet}}}),
                                     json::array({{{"subnet", "10.244.2.0/24"}}})});
  RunResult v4 = run(env("ADD"), c);
  EXPECT_EQ(v4.code(), 7) << v4.stdout_text;
  EXPECT_NE(v4.msg().find("returned 2 IPv4 addresses (10.244.1.2/24, 10.244.2.2/24)"), std::string::npos)
      << v4.msg();
  expectNothingLeft();
}

TEST_F(DualStackTest, RuntimeIpsOfBothFamiliesWithoutIpam) {
  json c = CniTest::conf();
  c.erase("ipam");
  c["runtimeConfig"]["ips"] = {"10.244.1.30/24", "fd00:10:244:1::30/64"};
  RunResult r = run(env("ADD"), c);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  EXPECT_EQ(fake_->addRequests()[0].ip(), "10.244.1.30");
  EXPECT_EQ(fake_->addRequests()[0].ipv6(), "fd00:10:244:1::30");
  EXPECT_EQ(r.out["ips"], json::parse(R"([{"address": "10.244.1.30/24", "interface": 0},
                                          {"address": "fd00:10:244:1::30/64", "interface": 0}])"));
  ASSERT_EQ(run(env("DEL"), c).rc, 0);

  c["runtimeConfig"]["ips"] = {"fd00:10:244:1::30/64", "fd00:10:244:1::31/64"};
  RunResult two = run(env("ADD"), c);
  EXPECT_EQ(two.code(), 7) << two.stdout_text;
  EXPECT_NE(two.msg().find("runtimeConfig.ips returned 2 IPv6 addresses"), std::string::npos) << two.msg();
  expectNothingLeft();
}

TEST_F(DualStackTest, CheckVerifiesBothFamilies) {
  RunResult add = run(env("ADD"), dualConf());
  ASSERT_EQ(add.rc, 0) << add.stdout_text;
  EXPECT_EQ(run(env("CHECK"), withPrev(dualConf(), add.out)).rc, 0);

  // The IPv6 address: written differently but the same address passes; another fails.
  json same = add.out;
  same["ips"][1]["address"] = "fd00:10:244:1:0:0:0:2/64";
  EXPECT_EQ(run(env("CHECK"), withPrev(dualConf(), same)).rc, 0);
  json other = add.out;
  other["ips"][1]["address"] = "fd00:10:244:1::9/64";
  RunResult wrong6 = run(env("CHECK"), withPrev(dualConf(), other));
  EXPECT_EQ(wrong6.code(), 101) << wrong6.stdout_text;
  EXPECT_EQ(wrong6.msg(), "port IPv6 is \"fd00:10:244:1::2\", prevResult says \"fd00:10:244:1::9\"");

  // prevResult without the IPv6 entry: the port has one it does not list.
  json v4only = add.out;
  v4only["ips"].erase(1);
  RunResult missing6 = run(env("CHECK"), withPrev(dualConf(), v4only));
  EXPECT_EQ(missing6.code(), 101) << missing6.stdout_text;
  EXPECT_EQ(missing6.msg(), "port IPv6 is \"fd00:10:244:1::2\", prevResult says \"\"");

  // And without the IPv4 entry.
  json v6only = add.out;
  v6only["ips"].erase(0);
  RunResult missing4 = run(env("CHECK"), withPrev(dualConf(), v6only));
  EXPECT_EQ(missing4.code(), 101) << missing4.stdout_text;
  EXPECT_EQ(missing4.msg(), "port IPv4 is \"10.244.1.2\", prevResult says \"\"");

  ASSERT_EQ(run(env("DEL"), dualConf()).rc, 0);
  expectNothingLeft();
}

// Every spec version: the dual-stack result in exactly that version's form
// (before 1.0.0 each "ips" entry names its family).
class DualStackVersionsTest : public DualStackTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(DualStackVersionsTest, AddResultHasBothFamiliesInTheConfigsForm) {
  const std::string version = GetParam();
  const bool before100 = version[0] == '0';
  RunResult r = run(env("ADD"), dualConf(version));
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;
  json ip4 = {{"address", "10.244.1.2/24"}, {"gateway", "10.244.1.1"}, {"interface", 0}};
  json ip6 = {{"address", "fd00:10:244:1::2/64"}, {"gateway", "fd00:10:244:1::1"}, {"interface", 0}};
  if (before100) {
    ip4["version"] = "4";
    ip6["version"] = "6";
  }
  EXPECT_EQ(r.out["cniVersion"], version);
  EXPECT_EQ(r.out["ips"], json::array({ip4, ip6}));
  EXPECT_EQ(r.out["routes"], json::parse(R"([{"dst": "0.0.0.0/0"}, {"dst": "::/0"}])"));
  // The result read back (as a runtime's prevResult) has both again.
  absl::StatusOr<Result> back = parseResult(r.out, "test");
  ASSERT_TRUE(back.ok()) << back.status();
  AttachmentAddresses a = back->addressesForInterface(0);
  ASSERT_TRUE(a.ipv4 && a.ipv6);
  EXPECT_EQ(a.ipv6->address.toString(), "fd00:10:244:1::2");
  EXPECT_EQ(a.ipv6->gateway->toString(), "fd00:10:244:1::1");
  if (version != "0.3.0" && version != "0.3.1") {
    EXPECT_EQ(run(env("CHECK"), withPrev(dualConf(version), r.out)).rc, 0);
  }
  ASSERT_EQ(run(env("DEL"), dualConf(version)).rc, 0);
  expectNothingLeft();
}

INSTANTIATE_TEST_SUITE_P(AllVersions, DualStackVersionsTest,
                         ::testing::Values("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = "v" + param_info.param;
                           for (char& ch : name) ch = ch == '.' ? '_' : ch;
                           return name;
                         });

TEST(AttachmentAddressesTest, OnePerFamilyNoneOrMoreAreErrors) {
  auto parse = [](const char* text) { return *parseResult(json::parse(text), "test"); };
  absl::StatusOr<AttachmentAddresses> both = parse(R"({"ips":[{"address":"fd00::5/64","gateway":"fd00::1"},
      {"address":"10.0.0.5/24"}]})").attachmentAddresses("ipam x");
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->ipv4->address.toString(), "10.0.0.5");
  EXPECT_EQ(both->ipv4->prefix_len, 24);
  EXPECT_EQ(both->ipv6->address.toString(), "fd00::5");
  EXPECT_EQ(both->ipv6->prefix_len, 64);
  EXPECT_EQ(both->ipv6->gateway->toString(), "fd00::1");

  absl::StatusOr<AttachmentAddresses> none = parse(R"({"ips":[]})").attachmentAddresses("ipam x");
  EXPECT_EQ(none.status().message(),
            "ipam x returned no address; sluiced needs an IPv4 or an IPv6 address (or both)");
  absl::StatusOr<AttachmentAddresses> two =
      parse(R"({"ips":[{"address":"10.0.0.5/24"},{"address":"10.0.1.5/24"}]})").attachmentAddresses("ipam x");
  EXPECT_EQ(two.status().message(),
            "ipam x returned 2 IPv4 addresses (10.0.0.5/24, 10.0.1.5/24); a sluice attachment takes at most one "
            "address per family: give the IPAM one range set per family");
}

TEST(AttachmentAddressesTest, Ipv6CidrParsing) {
  std::optional<Ipv6Assignment> a = parseIpv6Cidr("FD00:10:244:1:0::7/64");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->address.toString(), "fd00:10:244:1::7");
  EXPECT_EQ(a->prefix_len, 64);
  EXPECT_TRUE(parseIpv6Cidr("::/0").has_value());
  EXPECT_TRUE(parseIpv6Cidr("fd00::1/128").has_value());
  for (const char* bad : {"fd00::1", "fd00::1/129", "fd00::1/064", "fd00::1/", "fd00::1%eth0/64", "10.0.0.1/24",
                          "[fd00::1]/64", "fd00::1/6 4"}) {
    EXPECT_FALSE(parseIpv6Cidr(bad).has_value()) << bad;
  }
  // The result parser takes both families and refuses anything else.
  EXPECT_TRUE(parseResult(json::parse(R"({"ips":[{"address":"fd00::5/64","gateway":"fd00::1"}]})"), "t").ok());
  EXPECT_FALSE(parseResult(json::parse(R"({"ips":[{"address":"fd00::5/64","gateway":"fd00::1/64"}]})"), "t").ok());
  EXPECT_FALSE(parseResult(json::parse(R"({"ips":[{"address":"fd00::5/200"}]})"), "t").ok());
}

}  // namespace
}  // namespace sluice::cni::testing
