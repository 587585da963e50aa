// A fake sysfs tree in a temporary directory, shaped like the kernel's for an
// SR-IOV PF: class/net/<pf>/device/virtfn<N> → bus/pci/devices/<pci>, with
// net/<netdev>/ under a VF that has a kernel netdev. Removed on destruction.
// Test-only; single-threaded.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace sluice::sriov::testing {

class FakeSysfs {
 public:
  FakeSysfs() {
    char tmpl[] = "/tmp/sriov-sysfs.XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  ~FakeSysfs() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  const std::string& root() const { return root_; }

  // The PF's device directory, without VFs.
  void addPf(const std::string& pf) { std::filesystem::create_directories(pfDevice(pf)); }

  // virtfn<index> of `pf` leading to the PCI directory `pci`, with netdev
  // `netdev` (empty: none). The link is relative, as the kernel's are.
  void addVf(const std::string& pf, unsigned index, const std::string& pci, const std::string& netdev) {
    addPf(pf);
    std::filesystem::path dev = pciDir(pci);
    std::filesystem::create_directories(dev);
    if (!netdev.empty()) std::filesystem::create_directories(dev / "net" / netdev);
    std::filesystem::create_directory_symlink(std::filesystem::relative(dev, pfDevice(pf)),
                                              pfDevice(pf) / ("virtfn" + std::to_string(index)));
  }

  // The VF's netdev renamed or gone (moved to another namespace).
  void setNetdev(const std::string& pci, const std::string& netdev) {
    std::filesystem::remove_all(pciDir(pci) / "net");
    if (!netdev.empty()) std::filesystem::create_directories(pciDir(pci) / "net" / netdev);
  }

  std::filesystem::path pfDevice(const std::string& pf) const {
    return std::filesystem::path(root_) / "class" / "net" / pf / "device";
  }
  std::filesystem::path pciDir(const std::string& pci) const {
    return std::filesystem::path(root_) / "bus" / "pci" / "devices" / pci;
  }

 private:
  std::string root_;
};

}  // namespace sluice::sriov::testing
