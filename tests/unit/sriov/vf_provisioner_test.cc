// VF creation and driver binding on a fake sysfs tree: the files written, in
// order, and their undo. KernelSysfs writes the plain files and then plays
// the kernel's part (sriov_numvfs makes virtfn links and VF devices bound to
// the VF driver, and refuses a non-zero to non-zero change with EBUSY;
// unbind drops the driver link; drivers_probe binds to driver_override or
// the VF driver), so a wrong order shows up as a wrong end state too.
#include "dataplane/modules/sriov/vf_provisioner.h"

#include <gtest/gtest.h>

#include <absl/strings/str_cat.h>
#include <absl/strings/match.h>
#include <absl/strings/str_replace.h>

#include <filesystem>
#include <fstream>

#include "tests/unit/sriov/fake_sysfs.h"

namespace sluice::sriov {
namespace {
namespace fs = std::filesystem;

constexpr const char* kVfDriver = "iavf";

class KernelSysfs : public FileSysfs {
 public:
  explicit KernelSysfs(std::string root) : root_(std::move(root)) {
    const fs::path pf_dev = fs::path(root_) / "bus/pci/devices/0000:3b:00.0";
    fs::create_directories(pf_dev);
    fs::create_directories(fs::path(root_) / "class/net/pf0");
    fs::create_directory_symlink("../../../bus/pci/devices/0000:3b:00.0", fs::path(root_) / "class/net/pf0/device");
    put(pf_dev / "sriov_totalvfs", "8\n");
    put(pf_dev / "sriov_numvfs", "0\n");
    for (const char* d : {kVfDriver, "vfio-pci"}) {
      fs::create_directories(fs::path(root_) / "bus/pci/drivers" / d);
      put(fs::path(root_) / "bus/pci/drivers" / d / "unbind", "");
    }
    put(fs::path(root_) / "bus/pci/drivers_probe", "");
  }

  absl::Status write(const std::string& path, const std::string& value) override {
    // Lexically: the links in the path are what the writer named.
    const std::string rel = path.substr(root_.size() + 1);
    writes_.push_back(absl::StrCat(rel, " ", absl::StrReplaceAll(value, {{"\n", "\\n"}})));
    if (!fail_suffix_.empty() && rel.ends_with(fail_suffix_) && --fail_after_ < 0)
      return absl::InternalError("injected failure");
    if (rel.ends_with("sriov_numvfs")) {
      const unsigned want = static_cast<unsigned>(std::stoul(std::string(value)));
      if (numvfs_ != 0 && want != 0 && want != numvfs_) return absl::FailedPreconditionError("EBUSY");
      if (absl::Status s = FileSysfs::write(path, value); !s.ok()) return s;
      setVfs(want);
      return absl::OkStatus();
    }
    if (absl::Status s = FileSysfs::write(path, value); !s.ok()) return s;
    if (rel.ends_with("/unbind")) fs::remove(vfDir(std::string(value)) / "driver");
    if (rel == "bus/pci/drivers_probe") {
      const std::string pci(value);
      auto o = read((vfDir(pci) / "driver_override").string());
      bind(pci, o.ok() && !o->empty() && *o != "(null)" ? *o : kVfDriver);
    }
    return absl::OkStatus();
  }

  // What the kernel does to a VF's driver, without recording a write.
  void bind(const std::string& pci, const std::string& driver) {
    fs::remove(vfDir(pci) / "driver");
    fs::create_directory_symlink("../../drivers/" + driver, vfDir(pci) / "driver");
  }
  void setOverride(const std::string& pci, const std::string& v) { put(vfDir(pci) / "driver_override", v + "\n"); }
  void setVfs(unsigned n) {
    for (unsigned i = 0; i < numvfs_; ++i) {
      fs::remove(pfDev() / ("virtfn" + std::to_string(i)));
      fs::remove_all(vfDir(pci(i)));
    }
    numvfs_ = n;
    put(pfDev() / "sriov_numvfs", std::to_string(n) + "\n");
    for (unsigned i = 0; i < n; ++i) {
      fs::create_directories(vfDir(pci(i)));
      fs::create_directory_symlink("../" + pci(i), pfDev() / ("virtfn" + std::to_string(i)));
      setOverride(pci(i), "(null)");
      bind(pci(i), kVfDriver);
    }
  }
  std::string driverOf(const std::string& pci) {
    auto d = linkTarget((vfDir(pci) / "driver").string());
    return d.ok() ? *d : "";
  }
  void failOn(std::string suffix, int after) {
    fail_suffix_ = std::move(suffix);
    fail_after_ = after;
  }

  static std::string pci(unsigned i) { return "0000:3b:02." + std::to_string(i); }
  fs::path pfDev() const { return fs::path(root_) / "bus/pci/devices/0000:3b:00.0"; }
  fs::path vfDir(const std::string& pci) const { return fs::path(root_) / "bus/pci/devices" / pci; }
  std::vector<std::string> takeWrites() { return std::exchange(writes_, {}); }

 private:
  static void put(const fs::path& p, const std::string& content) { std::ofstream(p) << content; }
  std::string root_;
  unsigned numvfs_ = 0;
  std::vector<std::string> writes_;
  std::string fail_suffix_;
  int fail_after_ = 0;
};

class VfProvisionerTest : public ::testing::Test {
 protected:
  testing::FakeSysfs tmp_;
  KernelSysfs sysfs_{tmp_.root()};
  PoolConfig pool(uint32_t vfs, VfDriverMode mode) { return {"pf0", "", vfs, mode}; }
};

using Writes = std::vector<std::string>;

TEST_F(VfProvisionerTest, CreatesVfsBindsThemToVfioAndRemovesThemOnUndo) {
  auto rec = provisionPool(sysfs_, tmp_.root(), pool(2, VfDriverMode::kVfio));
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(sysfs_.takeWrites(), (Writes{"class/net/pf0/device/sriov_numvfs 2",
                                         "bus/pci/devices/0000:3b:02.0/driver_override vfio-pci",
                                         "bus/pci/devices/0000:3b:02.0/driver/unbind 0000:3b:02.0",
                                         "bus/pci/drivers_probe 0000:3b:02.0",
                                         "bus/pci/devices/0000:3b:02.1/driver_override vfio-pci",
                                         "bus/pci/devices/0000:3b:02.1/driver/unbind 0000:3b:02.1",
                                         "bus/pci/drivers_probe 0000:3b:02.1"}));
  EXPECT_EQ(sysfs_.driverOf(KernelSysfs::pci(0)), "vfio-pci");
  EXPECT_EQ(sysfs_.driverOf(KernelSysfs::pci(1)), "vfio-pci");
  EXPECT_TRUE(rec->created);
  EXPECT_EQ(rec->previous_numvfs, 0u);
  ASSERT_EQ(rec->rebound.size(), 2u);
  EXPECT_EQ(rec->rebound[0].previous_override, "");

  ASSERT_TRUE(undoProvision(sysfs_, *rec).ok());
  EXPECT_EQ(sysfs_.takeWrites(), (Writes{"class/net/pf0/device/sriov_numvfs 0"}));
  EXPECT_FALSE(fs::exists(tmp_.root() + "/class/net/pf0/device/virtfn0"));
}

TEST_F(VfProvisionerTest, AnotherCountIsSetToZeroFirstAndRestoredOnUndo) {
  sysfs_.setVfs(4);
  auto rec = provisionPool(sysfs_, tmp_.root(), pool(2, VfDriverMode::kUnchanged));
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_EQ(sysfs_.takeWrites(),
            (Writes{"class/net/pf0/device/sriov_numvfs 0", "class/net/pf0/device/sriov_numvfs 2"}));
  EXPECT_TRUE(fs::exists(tmp_.root() + "/class/net/pf0/device/virtfn1"));
  EXPECT_FALSE(fs::exists(tmp_.root() + "/class/net/pf0/device/virtfn2"));
  EXPECT_TRUE(rec->rebound.empty());
  ASSERT_TRUE(undoProvision(sysfs_, *rec).ok());
  EXPECT_EQ(sysfs_.takeWrites(),
            (Writes{"class/net/pf0/device/sriov_numvfs 0", "class/net/pf0/device/sriov_numvfs 4"}));
  EXPECT_TRUE(fs::exists(tmp_.root() + "/class/net/pf0/device/virtfn3"));
}

TEST_F(VfProvisionerTest, KernelModeRebindsOnlyVfioVfsAndUndoRestoresTheirOverride) {
  sysfs_.setVfs(2);
  sysfs_.setOverride(KernelSysfs::pci(1), "vfio-pci");
  sysfs_.bind(KernelSysfs::pci(1), "vfio-pci");
  auto rec = provisionPool(sysfs_, tmp_.root(), pool(2, VfDriverMode::kKernel));
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_FALSE(rec->created);  // the count was right: no VF was created
  EXPECT_EQ(sysfs_.takeWrites(), (Writes{"bus/pci/devices/0000:3b:02.1/driver_override \\n",
                                         "bus/pci/devices/0000:3b:02.1/driver/unbind 0000:3b:02.1",
                                         "bus/pci/drivers_probe 0000:3b:02.1"}));
  EXPECT_EQ(sysfs_.driverOf(KernelSysfs::pci(0)), kVfDriver);
  EXPECT_EQ(sysfs_.driverOf(KernelSysfs::pci(1)), kVfDriver);

  ASSERT_TRUE(undoProvision(sysfs_, *rec).ok());
  EXPECT_EQ(sysfs_.takeWrites(), (Writes{"bus/pci/devices/0000:3b:02.1/driver_override vfio-pci",
                                         "bus/pci/devices/0000:3b:02.1/driver/unbind 0000:3b:02.1",
                                         "bus/pci/drivers_probe 0000:3b:02.1"}));
  EXPECT_EQ(sysfs_.driverOf(KernelSysfs::pci(1)), "vfio-pci");
}

TEST_F(VfProvisionerTest, VfsAlreadyAsConfiguredWriteNothing) {
  sysfs_.setVfs(2);
  auto rec = provisionPool(sysfs_, tmp_.root(), pool(2, VfDriverMode::kKernel));
  ASSERT_TRUE(rec.ok()) << rec.status();
  EXPECT_FALSE(rec->changedAnything());
  auto none = provisionPool(sysfs_, tmp_.root(), pool(0, VfDriverMode::kUnchanged));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->changedAnything());
  EXPECT_TRUE(sysfs_.takeWrites().empty());
}

TEST_F(VfProvisionerTest, MoreVfsThanTheTotalOrNoSriovAreRefusedBeforeAnyWrite) {
  auto rec = provisionPool(sysfs_, tmp_.root(), pool(9, VfDriverMode::kVfio));
  EXPECT_EQ(rec.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rec.status().message(), "sriov-pools: pf pf0: vfs 9 exceeds its sriov_totalvfs 8");
  fs::remove(sysfs_.pfDev() / "sriov_totalvfs");
  rec = provisionPool(sysfs_, tmp_.root(), pool(2, VfDriverMode::kVfio));
  EXPECT_EQ(rec.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StartsWith(rec.status().message(), "sriov-pools: pf pf0 has no SR-IOV capability")) << rec.status();
  EXPECT_TRUE(sysfs_.takeWrites().empty());
}

TEST_F(VfProvisionerTest, AFailedBindUndoesEverythingWritten) {
  sysfs_.setVfs(3);
  sysfs_.failOn("drivers_probe", 1);  // the second VF's probe fails
  auto rec = provisionPool(sysfs_, tmp_.root(), pool(2, VfDriverMode::kVfio));
  EXPECT_EQ(rec.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(rec.status().message(), "sriov-pools: pf pf0: injected failure");
  // 3 → 2 VFs, VF 0 bound, VF 1's probe fails; the undo puts 3 VFs back
  // (fresh ones, on the VF driver).
  EXPECT_EQ(sysfs_.takeWrites(), (Writes{"class/net/pf0/device/sriov_numvfs 0",
                                         "class/net/pf0/device/sriov_numvfs 2",
                                         "bus/pci/devices/0000:3b:02.0/driver_override vfio-pci",
                                         "bus/pci/devices/0000:3b:02.0/driver/unbind 0000:3b:02.0",
                                         "bus/pci/drivers_probe 0000:3b:02.0",
                                         "bus/pci/devices/0000:3b:02.1/driver_override vfio-pci",
                                         "bus/pci/devices/0000:3b:02.1/driver/unbind 0000:3b:02.1",
                                         "bus/pci/drivers_probe 0000:3b:02.1",
                                         "class/net/pf0/device/sriov_numvfs 0",
                                         "class/net/pf0/device/sriov_numvfs 3"}));
  EXPECT_EQ(sysfs_.driverOf(KernelSysfs::pci(0)), kVfDriver);
  EXPECT_TRUE(fs::exists(tmp_.root() + "/class/net/pf0/device/virtfn2"));
}

}  // namespace
}  // namespace sluice::sriov
