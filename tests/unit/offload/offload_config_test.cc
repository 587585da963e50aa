// The offload configuration: the JSON object "offload" and the flat flags,
// their defaults and their refusals (exact messages naming the key).
#include <gtest/gtest.h>

#include "dataplane/config/config.h"

namespace sluice {
namespace {

TEST(OffloadConfigTest, DefaultsAreOff) {
  SluicedConfig c;
  EXPECT_EQ(c.offload_provider, "off");
  EXPECT_EQ(c.offload_max_flows, 16384u);
  EXPECT_EQ(c.offload_port, "");
}

TEST(OffloadConfigTest, JsonObjectSetsEverything) {
  auto c = applyConfigJson(R"({"offload": {"provider": "software", "max-flows": 100, "port": "abc/net1"}})", {});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->offload_provider, "software");
  EXPECT_EQ(c->offload_max_flows, 100u);
  EXPECT_EQ(c->offload_port, "abc/net1");
  EXPECT_TRUE(c->ignored_keys.empty());  // no longer a "future" key
}

// The Helm chart renders "offload": true|false (helm/sluice/values.yaml).
TEST(OffloadConfigTest, ChartBooleanSelectsRteFlowOrOff) {
  auto on = applyConfigJson(R"({"offload": true})", {});
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->offload_provider, "rte_flow");
  EXPECT_EQ(on->offload_port, "");  // the uplink
  auto off = applyConfigJson(R"({"offload": false})", {});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->offload_provider, "off");
}

TEST(OffloadConfigTest, BadValuesNameTheKey) {
  auto msg = [](const std::string& json) { return std::string(applyConfigJson(json, {}).status().message()); };
  EXPECT_EQ(msg(R"({"offload": {"provider": "hardware"}})"),
            "config: offload-provider: must be off, rte_flow or software");
  EXPECT_EQ(msg(R"({"offload": {"max-flows": 0}})"), "config: offload-max-flows: '0' is not an integer in 1..4194304");
  EXPECT_EQ(msg(R"({"offload": {"port": "nocolon"}})"),
            "config: offload-port: must be container-id/ifname of a pod port");
  EXPECT_EQ(msg(R"({"offload": {"speed": "fast"}})"), "config: offload.speed: unknown setting");
  EXPECT_EQ(msg(R"({"offload": {"max-flows": true}})"), "config: offload.max-flows: has the wrong type (boolean)");
  EXPECT_EQ(msg(R"({"offload": "software"})"), "config: offload: must be true, false or an object");
}

TEST(OffloadConfigTest, FlagsOverrideTheFile) {
  const char* argv[] = {"sluiced", "--offload-provider", "rte_flow", "--offload-max-flows", "7", "--offload-port", "c/n"};
  auto c = parseSluicedConfig(7, argv);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->offload_provider, "rte_flow");
  EXPECT_EQ(c->offload_max_flows, 7u);
  EXPECT_EQ(c->offload_port, "c/n");
}

}  // namespace
}  // namespace sluice
