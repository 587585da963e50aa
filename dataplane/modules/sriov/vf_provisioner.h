// Creating a pool's VFs and binding their driver from the pool's config
// (`vfs`, `mode`), the way an operator does it by hand:
//   1. <pf device>/sriov_numvfs := N. The kernel refuses to change a
//      non-zero count to another non-zero count (EBUSY), so a different
//      count already set is first written 0. N above sriov_totalvfs is
//      refused before anything is written.
//   2. For each VF whose driver is not the wanted one:
//      <vf>/driver_override := "vfio-pci" (vfio mode) or "\n" (kernel mode:
//      clears an override, so the kernel's own VF driver matches again);
//      <vf>/driver/unbind := <pci> (if bound); bus/pci/drivers_probe := <pci>.
// Everything goes through SysfsAccess, so tests run on a fake tree and see
// each write in order. What was changed is returned, to undo at shutdown:
// VFs sluiced created are removed again (sriov_numvfs := 0, then the count
// there was before, if any); VFs it only rebound get their previous
// driver_override back and are re-probed. Control path only (start and
// shutdown, on the main thread).
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dataplane/config/sriov_pool_config.h"
#include "dataplane/modules/sriov/sysfs_access.h"

namespace sluice::sriov {

struct ProvisionRecord {
  std::string pf;
  std::string sysfs_root;
  bool created = false;           // sluiced wrote sriov_numvfs
  uint32_t previous_numvfs = 0;   // the count before (meaningful when created)
  struct Rebind {
    std::string pci;                // the VF's PCI address
    std::string previous_override;  // driver_override before ("" for none)
  };
  std::vector<Rebind> rebound;      // in the order they were rebound
  bool changedAnything() const { return created || !rebound.empty(); }
};

// Creates and binds `pool`'s VFs as configured (nothing for vfs 0 and mode
// unchanged). All or nothing: on error what was written is undone and the
// error names the PF and the file. FailedPrecondition when vfs exceeds
// sriov_totalvfs or the PF has no SR-IOV capability (no sriov_totalvfs).
absl::StatusOr<ProvisionRecord> provisionPool(SysfsAccess& sysfs, const std::string& sysfs_root,
                                              const PoolConfig& pool);

// Undoes `record` (reverse order). Tries every step; returns the first error.
absl::Status undoProvision(SysfsAccess& sysfs, const ProvisionRecord& record);

}  // namespace sluice::sriov
