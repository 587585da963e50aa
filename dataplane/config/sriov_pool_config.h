// One configured SR-IOV pool (sluiced's `sriov-pools` key): a physical
// function whose VFs sluiced hands out, the sysfs tree to discover them in,
// and, when asked, how many VFs sluiced creates and which driver it binds
// them to. Plain data; parsed once at start on the main thread.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::sriov {

// The driver a pool's VFs are bound to (the chart's `mode`).
enum class VfDriverMode {
  kUnchanged,  // no `mode`: whatever the node's own set-up bound
  kVfio,       // vfio-pci, for DPDK pods (the device plugin hands out /dev/vfio/<group>)
  kKernel,     // the kernel's VF driver (a netdev per VF)
};

struct PoolConfig {
  std::string pf;          // the PF's netdev name
  std::string sysfs_root;  // empty: the global `sysfs-root` (default /sys)
  uint32_t vfs = 0;        // VFs sluiced creates (sriov_numvfs); 0: the count is left as it is
  VfDriverMode mode = VfDriverMode::kUnchanged;
};

}  // namespace sluice::sriov
