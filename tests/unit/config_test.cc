#include "dataplane/config/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <vector>

namespace sluice {
namespace {

absl::StatusOr<SluicedConfig> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "sluiced");
  return parseSluicedConfig(static_cast<int>(args.size()), args.data());
}

TEST(ConfigTest, DefaultsDeriveGatewayFromCidr) {
  auto c = parse({"--pod-cidr", "10.244.7.0/24"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->gateway.toString(), "10.244.7.1");
  EXPECT_EQ(c->gateway_mac, MacAddress::fromIpv4(c->gateway));
  EXPECT_EQ(c->pmd_cores, std::vector<unsigned>{1});
  EXPECT_EQ(c->tx_flush_interval_us, 0u);
  EXPECT_EQ(c->metrics_port, 0u) << "the metrics endpoint is off unless asked for";
}

TEST(ConfigTest, Ipv6IsOffByDefaultAndItsGatewayDerivesFromTheCidr) {
  auto plain = parse({});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->pod_cidr_v6.has_value());
  EXPECT_FALSE(plain->gateway_v6.has_value());
  auto c = parse({"--pod-cidr-v6", "fd00:10:244:7::/64"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pod_cidr_v6->toString(), "fd00:10:244:7::/64");
  EXPECT_EQ(c->gateway_v6->toString(), "fd00:10:244:7::1") << "host-local IPAM's default gateway";
  auto given = parse({"--pod-cidr-v6", "fd00:10:244:7::/64", "--gateway-v6", "fd00:10:244:7::fe"});
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_EQ(given->gateway_v6->toString(), "fd00:10:244:7::fe");
  EXPECT_EQ(given->ipv6_router_lifetime_s, 0u) << "router solicitations are not answered by default";
  auto ra = parse({"--pod-cidr-v6", "fd00:10:244:7::/64", "--ipv6-router-lifetime", "9000"});
  ASSERT_TRUE(ra.ok()) << ra.status();
  EXPECT_EQ(ra->ipv6_router_lifetime_s, 9000u);
  // From a file too, and shown by the config listing as given.
  std::string path = ::testing::TempDir() + "/sluiced-v6.json";
  std::ofstream(path) << R"({"pod-cidr-v6": "fd00:1::/80"})";
  auto file = parse({"--config", path.c_str()});
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->gateway_v6->toString(), "fd00:1::1");
}

TEST(ConfigTest, MetricsEndpointAddressAndPort) {
  auto c = parse({"--metrics-address", "::1", "--metrics-port", "9476"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->metrics_address, "::1");
  EXPECT_EQ(c->metrics_port, 9476u);
}

TEST(ConfigTest, FlagsOverrideTheFile) {
  std::string path = ::testing::TempDir() + "/sluiced.json";
  std::ofstream(path) << R"({"pod-cidr": "10.1.0.0/16", "pmd-cores": [2, 3], "tx-flush-interval": 50,
                             "main-core": 1})";
  auto c = parse({"--config", path.c_str(), "--tx-flush-interval", "0"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pod_cidr.toString(), "10.1.0.0/16");
  EXPECT_EQ(c->pmd_cores, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(c->tx_flush_interval_us, 0u);
  EXPECT_TRUE(c->ignored_keys.empty()) << "uplink, vni and remote-nodes are real keys now (vxlan tests)";
}

TEST(ConfigTest, BadValuesNameTheSetting) {
  struct Case {
    std::vector<const char*> args;
    const char* mentions;
  } cases[] = {
      {{"--pod-cidr", "10.244.1.1/24"}, "pod-cidr"},
      {{"--pod-cidr", "10.0.0.0/31"}, "pod-cidr"},
      {{"--gateway", "10.9.9.9"}, "gateway"},
      {{"--pmd-cores", ""}, "pmd-cores"},
      {{"--pmd-cores", "1,1"}, "pmd-cores"},
      {{"--pmd-cores", "0"}, "pmd-cores"},  // same as main-core
      {{"--tx-flush-interval", "-1"}, "tx-flush-interval"},
      {{"--max-ports", "1025"}, "max-ports"},
      {{"--pmd-max-sleep-us", "10001"}, "pmd-max-sleep-us"},
      {{"--gateway-mac", "01:00:00:00:00:01"}, "gateway-mac"},
      {{"--log-level", "loud"}, "log-level"},
      {{"--api-socket", "relative.sock"}, "api-socket"},
      {{"--no-such-flag"}, "no-such-flag"},
      {{"--metrics-address", "localhost"}, "metrics-address"},
      {{"--metrics-address", "10.0.0.256"}, "metrics-address"},
      {{"--metrics-port", "65536"}, "metrics-port"},
      {{"--pod-cidr-v6", "fd00::1/64"}, "pod-cidr-v6"},      // host bits set
      {{"--pod-cidr-v6", "fd00::/128"}, "pod-cidr-v6"},      // one address
      {{"--pod-cidr-v6", "fd00::/126"}, "pod-cidr-v6"},
      {{"--pod-cidr-v6", "::/0"}, "pod-cidr-v6"},
      {{"--pod-cidr-v6", "fe80::/64"}, "pod-cidr-v6"},       // link-local
      {{"--pod-cidr-v6", "10.244.0.0/24"}, "pod-cidr-v6"},
      {{"--pod-cidr-v6", "fd00::/64", "--gateway-v6", "fd01::1"}, "gateway-v6"},  // outside
      {{"--pod-cidr-v6", "fd00::/64", "--gateway-v6", "fd00::"}, "gateway-v6"},   // the network
      {{"--pod-cidr-v6", "fd00::/64", "--gateway-v6", "fd00::1/64"}, "gateway-v6"},
      {{"--gateway-v6", "fd00::1"}, "gateway-v6"},  // without pod-cidr-v6
      {{"--pod-cidr-v6", "fd00::/64", "--ipv6-router-lifetime", "9001"}, "ipv6-router-lifetime"},
      {{"--ipv6-router-lifetime", "1800"}, "ipv6-router-lifetime"},  // without pod-cidr-v6
  };
  for (const Case& c : cases) {
    auto r = parse(c.args);
    ASSERT_FALSE(r.ok()) << c.mentions;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.mentions;
    EXPECT_NE(r.status().message().find(c.mentions), std::string::npos) << r.status();
  }
}

TEST(ConfigTest, BadJsonFiles) {
  EXPECT_EQ(applyConfigJson("{", {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(applyConfigJson("[]", {}).status().code(), absl::StatusCode::kInvalidArgument);
  auto wrong_type = applyConfigJson(R"({"pod-cidr": 5})", {});
  EXPECT_NE(wrong_type.status().message().find("pod-cidr"), std::string::npos);
  auto unknown = applyConfigJson(R"({"pod-cdir": "10.0.0.0/24"})", {});
  EXPECT_NE(unknown.status().message().find("pod-cdir: unknown setting"), std::string::npos);
  EXPECT_EQ(parse({"--config", "/nonexistent/sluiced.json"}).status().code(), absl::StatusCode::kNotFound);
}

TEST(ConfigTest, HelpIsNotAnError) {
  auto r = parse({"--help"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  EXPECT_NE(r.status().message().find("--tx-flush-interval"), std::string::npos);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(ConfigTest, FlowCacheKeysFromFileAndFlags) {
  auto d = parse({});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->emc_entries, 8192u);
  EXPECT_EQ(d->emc_insert_inv_prob, 100u);
  EXPECT_TRUE(d->smc_enable);
  EXPECT_EQ(d->flow_limit, 200000u);
  EXPECT_EQ(d->flow_idle_timeout_ms, 10000u);
  EXPECT_EQ(d->upcall_rate, 20000u);
  EXPECT_EQ(d->upcall_burst, 1024u);
  // As the chart writes them (smc-enable is a JSON boolean there).
  auto c = applyConfigJson(R"({"emc-entries": 4096, "emc-insert-inv-prob": 0, "smc-enable": false,
                               "flow-limit": 1000, "flow-idle-timeout-ms": 250})",
                           SluicedConfig{});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->emc_entries, 4096u);
  EXPECT_EQ(c->emc_insert_inv_prob, 0u);
  EXPECT_FALSE(c->smc_enable);
  EXPECT_EQ(c->flow_limit, 1000u);
  EXPECT_EQ(c->flow_idle_timeout_ms, 250u);
  EXPECT_TRUE(c->ignored_keys.empty()) << "cache keys are no longer future keys";
  auto f = parse({"--smc-enable", "false", "--flow-limit", "5", "--emc-entries", "2", "--upcall-rate", "7",
                  "--upcall-burst", "3"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->upcall_rate, 7u);
  EXPECT_EQ(f->upcall_burst, 3u);
  EXPECT_FALSE(f->smc_enable);
  EXPECT_EQ(f->flow_limit, 5u);
  EXPECT_EQ(f->emc_entries, 2u);
}

TEST(ConfigTest, FlowCacheKeysAreValidated) {
  for (std::vector<const char*> args : std::vector<std::vector<const char*>>{
           {"--emc-entries", "1000"},        // not a power of two
           {"--emc-entries", "1"},           // below 2
           {"--emc-insert-inv-prob", "-1"},
           {"--smc-enable", "yes"},
           {"--flow-limit", "0"},
           {"--flow-idle-timeout-ms", "5"},  // below 10 ms
           {"--upcall-rate", "0"},           // would drop every miss
           {"--upcall-burst", "0"},
       }) {
    auto c = parse(args);
    ASSERT_FALSE(c.ok()) << args[0] << " " << args[1];
    EXPECT_NE(c.status().message().find(args[0] + 2), std::string::npos) << c.status();
  }
  EXPECT_FALSE(applyConfigJson(R"({"flow-limit": true})", SluicedConfig{}).ok());
}

}  // namespace
}  // namespace sluice
