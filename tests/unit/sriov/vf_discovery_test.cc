// Discovery of VFs from a fake sysfs tree: order, PCI addresses, netdev
// names, and each way a tree can be wrong.
#include "dataplane/modules/sriov/vf_discovery.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/unit/sriov/fake_sysfs.h"

namespace sluice::sriov {
namespace {

using testing::FakeSysfs;

TEST(PciAddress, AcceptsSysfsFormOnly) {
  EXPECT_TRUE(isPciAddress("0000:3b:02.1"));
  EXPECT_TRUE(isPciAddress("ffff:ff:1f.7"));
  EXPECT_FALSE(isPciAddress("0000:3b:02.8"));   // function 0-7
  EXPECT_FALSE(isPciAddress("0000:3b:20.0"));   // device < 0x20
  EXPECT_FALSE(isPciAddress("0000:3B:02.1"));   // sysfs is lower case
  EXPECT_FALSE(isPciAddress("3b:02.1"));        // domain required
  EXPECT_FALSE(isPciAddress("0000:3b:02.1/"));
  EXPECT_FALSE(isPciAddress("../../etc/pa"));
  EXPECT_FALSE(isPciAddress(""));
}

TEST(VfDiscovery, FindsEveryVfInIndexOrderWithNetdevs) {
  FakeSysfs sys;
  // Created out of order, and virtfn10 sorts before virtfn2 as text.
  sys.addVf("pf0", 10, "0000:3b:03.2", "pf0v10");
  sys.addVf("pf0", 2, "0000:3b:02.2", "");
  sys.addVf("pf0", 0, "0000:3b:02.0", "pf0v0");
  sys.addVf("pf0", 1, "0000:3b:02.1", "pf0v1");
  std::filesystem::create_directories(sys.pfDevice("pf0") / "physfn-not-a-vf");
  auto vfs = discoverVfs(sys.root(), "pf0");
  ASSERT_TRUE(vfs.ok()) << vfs.status();
  ASSERT_EQ(vfs->size(), 4u);
  EXPECT_EQ((*vfs)[0].index, 0u);
  EXPECT_EQ((*vfs)[0].pci_address, "0000:3b:02.0");
  EXPECT_EQ((*vfs)[0].netdev, "pf0v0");
  EXPECT_EQ((*vfs)[0].pf, "pf0");
  EXPECT_EQ((*vfs)[1].index, 1u);
  EXPECT_EQ((*vfs)[2].index, 2u);
  EXPECT_EQ((*vfs)[2].netdev, "");  // no kernel driver (vfio-pci)
  EXPECT_EQ((*vfs)[3].index, 10u);
  EXPECT_EQ((*vfs)[3].pci_address, "0000:3b:03.2");
  EXPECT_EQ((*vfs)[3].sysfs_root, sys.root());
}

TEST(VfDiscovery, CurrentNetdevFollowsRenamesAndMoves) {
  FakeSysfs sys;
  sys.addVf("pf0", 0, "0000:3b:02.0", "pf0v0");
  auto vfs = discoverVfs(sys.root(), "pf0");
  ASSERT_TRUE(vfs.ok());
  EXPECT_EQ(currentNetdev((*vfs)[0]), "pf0v0");
  sys.setNetdev("0000:3b:02.0", "renamed");
  EXPECT_EQ(currentNetdev((*vfs)[0]), "renamed");
  sys.setNetdev("0000:3b:02.0", "");  // moved into a pod's namespace
  EXPECT_EQ(currentNetdev((*vfs)[0]), "");
}

TEST(VfDiscovery, MissingPfIsNotFound) {
  FakeSysfs sys;
  auto vfs = discoverVfs(sys.root(), "nope0");
  EXPECT_EQ(vfs.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(vfs.status().message().find("nope0"), std::string_view::npos);
}

TEST(VfDiscovery, PfWithoutVfsIsFailedPrecondition) {
  FakeSysfs sys;
  sys.addPf("pf0");
  auto vfs = discoverVfs(sys.root(), "pf0");
  EXPECT_EQ(vfs.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(vfs.status().message().find("sriov_numvfs"), std::string_view::npos);
}

TEST(VfDiscovery, DanglingOrForeignLinksAreFailedPrecondition) {
  FakeSysfs sys;
  sys.addPf("pf0");
  std::filesystem::create_directory_symlink("/nonexistent/0000:3b:02.0", sys.pfDevice("pf0") / "virtfn0");
  EXPECT_EQ(discoverVfs(sys.root(), "pf0").status().code(), absl::StatusCode::kFailedPrecondition);

  FakeSysfs sys2;
  sys2.addPf("pf1");
  std::filesystem::create_directories(sys2.pciDir("not-a-pci-address"));
  std::filesystem::create_directory_symlink(sys2.pciDir("not-a-pci-address"), sys2.pfDevice("pf1") / "virtfn0");
  auto vfs = discoverVfs(sys2.root(), "pf1");
  EXPECT_EQ(vfs.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(vfs.status().message().find("not a PCI address"), std::string_view::npos);
}

TEST(VfDiscovery, PathEscapingPfNamesAreRejected) {
  FakeSysfs sys;
  for (const char* pf : {"", "..", "../x", "a/b", "waytoolongname16"})
    EXPECT_EQ(discoverVfs(sys.root(), pf).status().code(), absl::StatusCode::kInvalidArgument) << pf;
}

}  // namespace
}  // namespace sluice::sriov
