// Offload providers found by their configuration name: rte_flow and the
// software stand-in register themselves (linked whole through
// sluice_control), the stand-in carries its warning, and an unknown name is
// refused by the configuration with the message it always had.
#include "dataplane/modules/offload/offload_provider_registry.h"

#include <gtest/gtest.h>

#include <cstring>

#include "dataplane/config/config.h"
#include "dataplane/config/provider_names.h"

namespace sluice::offload {
namespace {

TEST(OffloadProviderRegistry, TheStandInIsFoundByItsNameAndWarns) {
  const OffloadProviderRegistration* software = findOffloadProvider("software");
  ASSERT_NE(software, nullptr);
  ASSERT_NE(software->warning, nullptr);
  EXPECT_NE(std::string_view(software->warning).find("not hardware offload"), std::string_view::npos);
  std::unique_ptr<OffloadProvider> made = software->make(100);
  ASSERT_NE(made, nullptr);
  EXPECT_STREQ(made->name(), "software");
}

TEST(OffloadProviderRegistry, RteFlowIsRealAndQuiet) {
  const OffloadProviderRegistration* rte_flow = findOffloadProvider("rte_flow");
  ASSERT_NE(rte_flow, nullptr);
  EXPECT_EQ(rte_flow->warning, nullptr);
  std::unique_ptr<OffloadProvider> made = rte_flow->make(100);
  ASSERT_NE(made, nullptr);
  EXPECT_STREQ(made->name(), "rte_flow");
}

TEST(OffloadProviderRegistry, AnUnknownNameIsRefusedAsBefore) {
  EXPECT_EQ(findOffloadProvider("hardware"), nullptr);
  EXPECT_EQ(findOffloadProvider("off"), nullptr);  // the key's own value, no provider
  EXPECT_FALSE(isProviderName(kOffloadProviderKey, "hardware"));
  auto c = applyConfigJson(R"({"offload": {"provider": "hardware"}})", SluicedConfig{});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(), "config: offload-provider: must be off, rte_flow or software");
  for (const char* name : {"off", "rte_flow", "software"}) {
    auto ok = applyConfigJson(std::string(R"({"offload": {"provider": ")") + name + "\"}}", SluicedConfig{});
    ASSERT_TRUE(ok.ok()) << name << ": " << ok.status();
    EXPECT_EQ(ok->offload_provider, name);
  }
}

}  // namespace
}  // namespace sluice::offload
