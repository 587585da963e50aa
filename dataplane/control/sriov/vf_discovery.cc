// See vf_discovery.h.
#include "dataplane/control/sriov/vf_discovery.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace sluice::sriov {
namespace fs = std::filesystem;
namespace {

bool isHex(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

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

bool isPciAddress(absl::string_view t) {
  // 0000:3b:02.1 is 12 characters.
  if (t.size() != 12 || t[4] != ':' || t[7] != ':' || t[10] != '.') return false;
  if (!isHex(t.substr(0, 4)) || !isHex(t.substr(5, 2)) || !isHex(t.substr(8, 2))) return false;
  int device = std::stoi(std::string(t.substr(8, 2)), nullptr, 16);
  return device < 0x20 && t[11] >= '0' && t[11] <= '7';
}

bool isNetdevName(absl::string_view name) {
  if (name.empty() || name.size() > 15 || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == ':' || c == '\0' || std::isspace(static_cast<unsigned char>(c)) != 0;
  });
}

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
