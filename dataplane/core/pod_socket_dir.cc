#include "dataplane/core/pod_socket_dir.h"

#include <absl/strings/str_cat.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace sluice {
namespace {

// Closes `fd` keeping errno as it was.
void closeKeepingErrno(int fd) {
  const int saved = errno;
  ::close(fd);
  errno = saved;
}

}  // namespace

PodSocketDir::PodSocketDir(PodSocketDir&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      socket_dir_(std::move(other.socket_dir_)),
      subdir_(std::move(other.subdir_)),
      made_(other.made_) {}

PodSocketDir& PodSocketDir::operator=(PodSocketDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    socket_dir_ = std::move(other.socket_dir_);
    subdir_ = std::move(other.subdir_);
    made_ = other.made_;
  }
  return *this;
}

PodSocketDir::~PodSocketDir() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<PodSocketDir> PodSocketDir::open(const std::string& socket_dir, const std::string& subdir,
                                                bool pod_volume_link, Create create) {
  const std::string where = absl::StrCat(socket_dir, "/", subdir);
  // The socket dir itself is sluiced's own (its configuration), resolved as given.
  const int parent = ::open(socket_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return absl::InternalError(absl::StrCat("opening ", socket_dir, ": ", std::strerror(errno)));
  PodSocketDir dir;
  dir.socket_dir_ = socket_dir;
  dir.subdir_ = subdir;
  // mkdirat never follows a symlink at the name: one there is EEXIST.
  if (create == Create::kIfMissing) {
    if (::mkdirat(parent, subdir.c_str(), 0755) == 0) {
      dir.made_ = true;
    } else if (errno != EEXIST) {
      const int err = errno;
      ::close(parent);
      return absl::InternalError(absl::StrCat("creating ", where, ": ", std::strerror(err)));
    }
  }
  const int flags = O_PATH | O_DIRECTORY | O_CLOEXEC | (pod_volume_link ? 0 : O_NOFOLLOW);
  dir.fd_ = ::openat(parent, subdir.c_str(), flags);
  if (dir.fd_ < 0) {
    const int err = errno;
    closeKeepingErrno(parent);
    if (err == ENOENT) return absl::NotFoundError(absl::StrCat(where, " does not exist"));
    // O_NOFOLLOW|O_DIRECTORY on a symlink, or on anything but a directory.
    if (err == ENOTDIR || err == ELOOP) {
      return absl::FailedPreconditionError(
          absl::StrCat(where, " is not a directory (a symlink put in place of a pod's socket directory is never "
                              "followed)"));
    }
    return absl::InternalError(absl::StrCat("opening ", where, ": ", std::strerror(err)));
  }
  ::close(parent);
  return dir;
}

std::string PodSocketDir::pathOf(const std::string& file) const {
  return absl::StrCat("/proc/self/fd/", fd_, "/", file);
}

void PodSocketDir::removeSocket(const std::string& file) const {
  if (fd_ < 0) return;
  // The descriptor is O_PATH: fstatat and unlinkat take it as their directory.
  struct stat st {};
  if (::fstatat(fd_, file.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode)) return;
  ::unlinkat(fd_, file.c_str(), 0);
}

void PodSocketDir::closeAndRemoveIfEmpty() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  const int parent = ::open(socket_dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return;
  ::unlinkat(parent, subdir_.c_str(), AT_REMOVEDIR);  // fails unless an empty directory: kept then
  ::close(parent);
}

}  // namespace sluice
