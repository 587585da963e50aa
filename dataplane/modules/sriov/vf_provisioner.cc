// See vf_provisioner.h.
#include "dataplane/modules/sriov/vf_provisioner.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include "common/log.h"

namespace sluice::sriov {
namespace {

constexpr std::string_view kVfioDriver = "vfio-pci";

// How the kernel shows a driver_override that is not set.
bool noOverride(std::string_view v) { return v.empty() || v == "(null)"; }

struct Paths {
  std::string pf_device;  // <root>/class/net/<pf>/device
  std::string root;

  std::string numvfs() const { return pf_device + "/sriov_numvfs"; }
  std::string totalvfs() const { return pf_device + "/sriov_totalvfs"; }
  std::string virtfn(uint32_t i) const { return absl::StrCat(pf_device, "/virtfn", i); }
  std::string vf(const std::string& pci) const { return absl::StrCat(root, "/bus/pci/devices/", pci); }
  std::string probe() const { return root + "/bus/pci/drivers_probe"; }
};

Paths pathsOf(const std::string& root, const std::string& pf) {
  return {absl::StrCat(root, "/class/net/", pf, "/device"), root};
}

absl::StatusOr<uint32_t> readCount(SysfsAccess& sysfs, const std::string& path) {
  auto text = sysfs.read(path);
  if (!text.ok()) return text.status();
  uint32_t n = 0;
  if (!absl::SimpleAtoi(*text, &n)) return absl::InternalError(absl::StrCat(path, ": '", *text, "' is not a count"));
  return n;
}

// Points the VF at the driver `override` ("" clears) and re-probes it.
absl::Status rebind(SysfsAccess& sysfs, const Paths& p, const std::string& pci, const std::string& override) {
  const std::string dev = p.vf(pci);
  if (absl::Status s = sysfs.write(dev + "/driver_override", override.empty() ? "\n" : override); !s.ok()) return s;
  if (sysfs.linkTarget(dev + "/driver").ok())
    if (absl::Status s = sysfs.write(dev + "/driver/unbind", pci); !s.ok()) return s;
  return sysfs.write(p.probe(), pci);
}

absl::Status firstError(absl::Status a, absl::Status b) { return a.ok() ? b : a; }

}  // namespace

absl::StatusOr<ProvisionRecord> provisionPool(SysfsAccess& sysfs, const std::string& sysfs_root,
                                              const PoolConfig& pool) {
  const std::string root = pool.sysfs_root.empty() ? sysfs_root : pool.sysfs_root;
  const Paths p = pathsOf(root, pool.pf);
  ProvisionRecord rec{pool.pf, root, false, 0, {}};
  auto fail = [&](const absl::Status& s) {
    if (absl::Status u = undoProvision(sysfs, rec); !u.ok())
      logError("SR-IOV: pf ", pool.pf, ": undoing a failed VF set-up: ", u.message());
    return absl::Status(s.code(), absl::StrCat("sriov-pools: pf ", pool.pf, ": ", s.message()));
  };

  if (pool.vfs > 0) {
    auto total = readCount(sysfs, p.totalvfs());
    if (!total.ok())
      return absl::FailedPreconditionError(absl::StrCat("sriov-pools: pf ", pool.pf, " has no SR-IOV capability (",
                                                        total.status().message(), ")"));
    if (pool.vfs > *total)
      return absl::FailedPreconditionError(absl::StrCat("sriov-pools: pf ", pool.pf, ": vfs ", pool.vfs,
                                                        " exceeds its sriov_totalvfs ", *total));
    auto current = readCount(sysfs, p.numvfs());
    if (!current.ok()) return fail(current.status());
    if (*current != pool.vfs) {
      rec.previous_numvfs = *current;
      rec.created = true;  // from here an undo writes the old count back
      if (*current != 0)
        if (absl::Status s = sysfs.write(p.numvfs(), "0"); !s.ok()) return fail(s);
      if (absl::Status s = sysfs.write(p.numvfs(), absl::StrCat(pool.vfs)); !s.ok()) return fail(s);
      logInfo("SR-IOV: pf ", pool.pf, ": created ", pool.vfs, " VFs (sriov_numvfs was ", *current, ")");
    }
  }

  if (pool.mode != VfDriverMode::kUnchanged) {
    auto count = readCount(sysfs, p.numvfs());
    if (!count.ok()) return fail(count.status());
    for (uint32_t i = 0; i < *count; ++i) {
      auto pci = sysfs.linkTarget(p.virtfn(i));
      if (!pci.ok()) return fail(pci.status());
      auto driver = sysfs.linkTarget(p.vf(*pci) + "/driver");
      const std::string bound = driver.ok() ? *driver : std::string();
      const bool is_vfio = bound == kVfioDriver;
      const bool wanted = pool.mode == VfDriverMode::kVfio ? is_vfio : (!bound.empty() && !is_vfio);
      if (wanted) continue;
      auto previous = sysfs.read(p.vf(*pci) + "/driver_override");
      if (!previous.ok()) return fail(previous.status());
      rec.rebound.push_back({*pci, noOverride(*previous) ? std::string() : *previous});
      const std::string target = pool.mode == VfDriverMode::kVfio ? std::string(kVfioDriver) : std::string();
      if (absl::Status s = rebind(sysfs, p, *pci, target); !s.ok()) return fail(s);
      logInfo("SR-IOV: pf ", pool.pf, " vf ", i, " ", *pci, ": ", bound.empty() ? "unbound" : bound, " -> ",
              target.empty() ? "the kernel's VF driver" : target);
    }
  }
  return rec;
}

absl::Status undoProvision(SysfsAccess& sysfs, const ProvisionRecord& rec) {
  const Paths p = pathsOf(rec.sysfs_root, rec.pf);
  absl::Status first;
  if (rec.created) {
    // Removing the VFs removes their driver_override with them.
    first = sysfs.write(p.numvfs(), "0");
    if (rec.previous_numvfs != 0) first = firstError(first, sysfs.write(p.numvfs(), absl::StrCat(rec.previous_numvfs)));
    return first;
  }
  for (auto it = rec.rebound.rbegin(); it != rec.rebound.rend(); ++it)
    first = firstError(first, rebind(sysfs, p, it->pci, it->previous_override));
  return first;
}

}  // namespace sluice::sriov
