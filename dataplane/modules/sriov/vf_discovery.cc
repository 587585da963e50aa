// See vf_discovery.h.
#include "dataplane/modules/sriov/vf_discovery.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace sluice::sriov {
namespace fs = std::filesystem;
namespace {

// The first entry of <dir>/net: a PCI function has at most one netdev.
std::string netdevIn(const fs::path& device_dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(device_dir / "net", ec))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names.empty() ? std::string() : names.front();
}

}  // namespace

absl::StatusOr<std::vector<VfInfo>> discoverVfs(const std::string& sysfs_root, const std::string& pf) {
  if (!isNetdevName(pf)) return absl::InvalidArgumentError(absl::StrCat("pf: '", pf, "' is not a netdev name"));
  const fs::path pf_dir = fs::path(sysfs_root) / "class" / "net" / pf;
  std::error_code ec;
  if (!fs::exists(pf_dir, ec))
    return absl::NotFoundError(absl::StrCat("pf ", pf, ": ", pf_dir.string(), " does not exist"));
  std::vector<VfInfo> vfs;
  for (const fs::directory_entry& e : fs::directory_iterator(pf_dir / "device", ec)) {
    const std::string name = e.path().filename().string();
    uint32_t index = 0;
    if (name.rfind("virtfn", 0) != 0 || !absl::SimpleAtoi(name.substr(6), &index)) continue;
    // The link target's basename is the PCI address (sysfs links are
    // relative, e.g. ../0000:3b:02.1); canonical() also proves it exists.
    fs::path target = fs::canonical(e.path(), ec);
    if (ec)
      return absl::FailedPreconditionError(
          absl::StrCat("pf ", pf, ": ", e.path().string(), " does not lead to a device: ", ec.message()));
    std::string pci = target.filename().string();
    if (!isPciAddress(pci))
      return absl::FailedPreconditionError(
          absl::StrCat("pf ", pf, ": ", name, " leads to '", pci, "', not a PCI address"));
    vfs.push_back({pf, index, pci, netdevIn(target), sysfs_root});
  }
  if (ec)
    return absl::FailedPreconditionError(
        absl::StrCat("pf ", pf, ": reading ", (pf_dir / "device").string(), ": ", ec.message()));
  if (vfs.empty())
    return absl::FailedPreconditionError(
        absl::StrCat("pf ", pf, " has no VFs (", (pf_dir / "device").string(),
                     "/virtfn* missing: is sriov_numvfs 0?)"));
  std::sort(vfs.begin(), vfs.end(), [](const VfInfo& a, const VfInfo& b) { return a.index < b.index; });
  return vfs;
}

std::string currentNetdev(const VfInfo& vf) {
  return netdevIn(fs::path(vf.sysfs_root) / "class" / "net" / vf.pf / "device" / absl::StrCat("virtfn", vf.index));
}

}  // namespace sluice::sriov
