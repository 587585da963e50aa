// Reading and writing sysfs attribute files, and reading its links: what VF
// creation and driver binding need of the kernel. An interface so the same
// code runs on a fake sysfs tree (a directory laid out like /sys, where a
// test also plays the kernel's part: creating virtfn links when
// sriov_numvfs is written, moving driver links on bind) and records every
// write in order. FileSysfs is the real one (plain files: sysfs or a tree
// shaped like it). Control path only (sluiced's start and shutdown).
#pragma once

#include <absl/status/statusor.h>

#include <string>

namespace sluice::sriov {

class SysfsAccess {
 public:
  virtual ~SysfsAccess() = default;
  // The file's content without its trailing newline. NotFound if missing.
  virtual absl::StatusOr<std::string> read(const std::string& path) = 0;
  // One write(2) of `value` (sysfs takes an attribute in one write; a short
  // write is an error). The kernel's refusal (EBUSY, EINVAL...) is returned.
  virtual absl::Status write(const std::string& path, const std::string& value) = 0;
  // The basename of a symlink's target (virtfn<N> → the VF's PCI address,
  // driver → the driver's name). NotFound if there is no such link.
  virtual absl::StatusOr<std::string> linkTarget(const std::string& path) = 0;
};

class FileSysfs : public SysfsAccess {
 public:
  absl::StatusOr<std::string> read(const std::string& path) override;
  absl::Status write(const std::string& path, const std::string& value) override;
  absl::StatusOr<std::string> linkTarget(const std::string& path) override;
};

}  // namespace sluice::sriov
