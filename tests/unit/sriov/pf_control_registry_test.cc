// PF control implementations found by their configuration name: the real one
// and the stand-in register themselves (linked whole through sluice_control),
// the stand-in carries its warning, and an unknown name is refused by the
// configuration with the message it always had.
#include "dataplane/modules/sriov/pf_control_registry.h"

#include <gtest/gtest.h>

#include "dataplane/config/config.h"
#include "dataplane/config/provider_names.h"
#include "dataplane/modules/sriov/netlink_pf_control.h"
#include "dataplane/stand_ins/fake_pf/fake_pf_control.h"

namespace sluice::sriov {
namespace {

TEST(PfControlRegistry, TheStandInIsFoundByItsNameAndWarns) {
  const PfControlProvider* fake = findPfControl("fake");
  ASSERT_NE(fake, nullptr);
  ASSERT_NE(fake->warning, nullptr);
  EXPECT_NE(std::string_view(fake->warning).find("tests only"), std::string_view::npos);
  std::unique_ptr<PfControl> made = fake->make();
  EXPECT_NE(dynamic_cast<FakePfControl*>(made.get()), nullptr);
}

TEST(PfControlRegistry, NetlinkIsRealAndQuiet) {
  const PfControlProvider* netlink = findPfControl("netlink");
  ASSERT_NE(netlink, nullptr);
  EXPECT_EQ(netlink->warning, nullptr);
  std::unique_ptr<PfControl> made = netlink->make();
  EXPECT_NE(dynamic_cast<NetlinkPfControl*>(made.get()), nullptr);
}

TEST(PfControlRegistry, AnUnknownNameIsRefusedAsBefore) {
  EXPECT_EQ(findPfControl("real"), nullptr);
  EXPECT_FALSE(isProviderName(kPfControlKey, "real"));
  auto c = applyConfigJson(R"({"sriov-pf-control": "real"})", SluicedConfig{});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(), "config: sriov-pf-control: must be netlink or fake (tests only)");
  auto fake = applyConfigJson(R"({"sriov-pf-control": "fake"})", SluicedConfig{});
  ASSERT_TRUE(fake.ok()) << fake.status();
  EXPECT_EQ(fake->sriov_pf_control, "fake");
}

}  // namespace
}  // namespace sluice::sriov
