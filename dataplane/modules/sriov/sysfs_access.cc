// See sysfs_access.h.
#include "dataplane/modules/sriov/sysfs_access.h"

#include <absl/strings/str_cat.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace sluice::sriov {
namespace {

absl::Status errnoStatus(int err, const std::string& what) {
  std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
  if (err == EINVAL || err == ERANGE) return absl::InvalidArgumentError(msg);
  if (err == EBUSY) return absl::FailedPreconditionError(msg);
  return absl::InternalError(msg);
}

}  // namespace

absl::StatusOr<std::string> FileSysfs::read(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errnoStatus(errno, absl::StrCat("reading ", path));
  // Attributes are at most a page (PAGE_SIZE, the kernel's limit for show()).
  std::array<char, 4096> buf;
  const ssize_t n = ::read(fd, buf.data(), buf.size());
  const int err = errno;
  ::close(fd);
  if (n < 0) return errnoStatus(err, absl::StrCat("reading ", path));
  std::string out(buf.data(), static_cast<size_t>(n));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\0')) out.pop_back();
  return out;
}

absl::Status FileSysfs::write(const std::string& path, const std::string& value) {
  // O_TRUNC matters only on a fake tree of plain files; sysfs ignores it.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_TRUNC);
  if (fd < 0) return errnoStatus(errno, absl::StrCat("writing '", value, "' to ", path));
  const ssize_t n = ::write(fd, value.data(), value.size());
  const int err = errno;
  ::close(fd);
  if (n < 0) return errnoStatus(err, absl::StrCat("writing '", value, "' to ", path));
  if (static_cast<size_t>(n) != value.size())
    return absl::InternalError(absl::StrCat("writing '", value, "' to ", path, ": short write"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> FileSysfs::linkTarget(const std::string& path) {
  std::array<char, 4096> buf;
  const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
  if (n < 0) return errnoStatus(errno, absl::StrCat("reading link ", path));
  std::string target(buf.data(), static_cast<size_t>(n));
  const size_t slash = target.find_last_of('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

}  // namespace sluice::sriov
