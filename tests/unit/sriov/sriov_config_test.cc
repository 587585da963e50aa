// sluiced's SR-IOV config keys: sriov-pools (objects or PF names; the
// chart's extra pool keys reported, not fatal), sysfs-root, sriov-pf-control,
// and refusals that name the key.
#include <gtest/gtest.h>

#include "dataplane/config/config.h"

namespace sluice {
namespace {

TEST(SriovConfig, PoolsRootAndPfControl) {
  auto c = applyConfigJson(R"({"sriov-pools": [{"pf": "ens1f0", "sysfs-root": "/tmp/sys", "vfs": 8, "mode": "vfio"},
                                               "ens1f1"],
                               "sysfs-root": "/host/sys", "sriov-pf-control": "fake"})",
                           SluicedConfig{});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->sriov_pools.size(), 2u);
  EXPECT_EQ(c->sriov_pools[0].pf, "ens1f0");
  EXPECT_EQ(c->sriov_pools[0].sysfs_root, "/tmp/sys");
  EXPECT_EQ(c->sriov_pools[1].pf, "ens1f1");
  EXPECT_EQ(c->sriov_pools[1].sysfs_root, "");
  EXPECT_EQ(c->sysfs_root, "/host/sys");
  EXPECT_EQ(c->sriov_pf_control, "fake");
  EXPECT_EQ(c->sriov_pools[0].vfs, 8u);
  EXPECT_EQ(c->sriov_pools[0].mode, sriov::VfDriverMode::kVfio);
  EXPECT_EQ(c->sriov_pools[1].vfs, 0u);
  EXPECT_EQ(c->sriov_pools[1].mode, sriov::VfDriverMode::kUnchanged);
  EXPECT_TRUE(c->ignored_keys.empty());
  auto kernel = applyConfigJson(R"({"sriov-pools": [{"pf": "a", "mode": "kernel", "resourceName": "x/y"}]})",
                                SluicedConfig{});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->sriov_pools[0].mode, sriov::VfDriverMode::kKernel);
  EXPECT_EQ(kernel->ignored_keys, (std::vector<std::string>{"sriov-pools[].resourceName"}));
}

TEST(SriovConfig, Defaults) {
  SluicedConfig c;
  EXPECT_TRUE(c.sriov_pools.empty());
  EXPECT_EQ(c.sysfs_root, "/sys");
  EXPECT_EQ(c.sriov_pf_control, "netlink");
}

TEST(SriovConfig, RefusalsNameTheKey) {
  for (const char* doc : {R"({"sriov-pools": {"pf": "a"}})", R"({"sriov-pools": [{"pf": "../x"}]})",
                          R"({"sriov-pools": [{"pf": 3}]})", R"({"sriov-pools": [{"pf": "a", "sysfs-root": "rel"}]})",
                          R"({"sriov-pools": ["a", {"pf": "a"}]})", R"({"sriov-pools": [7]})",
                          R"({"sriov-pools": [{"pf": "a", "vfs": -1}]})", R"({"sriov-pools": [{"pf": "a", "vfs": 65536}]})",
                          R"({"sriov-pools": [{"pf": "a", "vfs": "8"}]})", R"({"sriov-pools": [{"pf": "a", "mode": "dpdk"}]})"}) {
    auto c = applyConfigJson(doc, SluicedConfig{});
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << doc;
    EXPECT_NE(c.status().message().find("sriov-pools"), std::string_view::npos) << c.status();
  }
  auto root = applyConfigJson(R"({"sysfs-root": "sys"})", SluicedConfig{});
  EXPECT_NE(root.status().message().find("sysfs-root"), std::string_view::npos);
  auto pf = applyConfigJson(R"({"sriov-pf-control": "real"})", SluicedConfig{});
  EXPECT_NE(pf.status().message().find("sriov-pf-control"), std::string_view::npos);
}

}  // namespace
}  // namespace sluice
