// Finds the virtual functions of an SR-IOV physical function in sysfs:
// <sysfs>/class/net/<pf>/device/virtfn<N> are symlinks to the VFs' PCI device
// directories; the link target's basename is the VF's PCI address and
// <vf dir>/net/<name> names its kernel netdev when a kernel driver owns it.
// The sysfs root is a parameter so tests build a fake tree in a temp dir.
// Control path only (sluiced's start and each VF allocation).
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <absl/strings/string_view.h>
#include <vector>

#include "common/device_names.h"

namespace sluice::sriov {

struct VfInfo {
  std::string pf;           // the PF's netdev name
  uint32_t index = 0;       // N of virtfn<N>: the VF number the PF's netlink calls take
  std::string pci_address;  // "0000:3b:02.1"
  std::string netdev;       // host netdev name; empty when the VF has none (vfio-pci)
  std::string sysfs_root;   // where it was found (to re-read the netdev name)
};


// Every VF of `pf`, ordered by index. NotFound when <sysfs>/class/net/<pf>
// does not exist; FailedPrecondition when it has no virtfn entries (SR-IOV
// not enabled: sriov_numvfs is 0) or an entry does not lead to a PCI device.
absl::StatusOr<std::vector<VfInfo>> discoverVfs(const std::string& sysfs_root, const std::string& pf);

// The VF's current host netdev name (it changes when the VF is renamed or
// moved to another namespace, where sysfs no longer shows it): empty if none.
std::string currentNetdev(const VfInfo& vf);

}  // namespace sluice::sriov
