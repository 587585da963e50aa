// One configured SR-IOV pool (sluiced's `sriov-pools` key): a physical
// function whose VFs sluiced hands out, and the sysfs tree to discover them
// in. Plain data; parsed once at start on the main thread.
#pragma once

#include <string>

namespace sluice::sriov {

struct PoolConfig {
  std::string pf;          // the PF's netdev name
  std::string sysfs_root;  // empty: the global `sysfs-root` (default /sys)
};

}  // namespace sluice::sriov
