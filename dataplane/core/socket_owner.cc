#include "dataplane/core/socket_owner.h"

#include <absl/strings/str_cat.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sluice {
namespace {

absl::Status sysError(const char* what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::Status setSocketGroupAndMode(const std::string& path, uint32_t gid, unsigned mode) {
  // O_PATH | O_NOFOLLOW: a symlink is opened as itself, never resolved.
  const int fd = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return sysError("opening", path);
  absl::Status result = absl::OkStatus();
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    result = sysError("stat of", path);
  } else if (!S_ISSOCK(st.st_mode)) {
    result = absl::FailedPreconditionError(absl::StrCat(path, " is not a socket (replaced after sluiced made it)"));
  } else if (::fchownat(fd, "", static_cast<uid_t>(-1), static_cast<gid_t>(gid), AT_EMPTY_PATH) != 0) {
    result = sysError("chown of", path);
  } else if (::chmod(absl::StrCat("/proc/self/fd/", fd).c_str(), static_cast<mode_t>(mode)) != 0) {
    // An O_PATH descriptor takes no fchmod; its /proc/self/fd entry is the
    // very inode it holds, so the chmod cannot land elsewhere.
    result = sysError("chmod of", path);
  }
  ::close(fd);
  return result;
}

}  // namespace sluice
