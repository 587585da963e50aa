// See file_util.h.
#include "cni-plugin/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "cni-plugin/cni_error.h"
#include "cni-plugin/text.h"

namespace sluice::cni {
namespace {

absl::Status ioError(std::string_view what, const std::string& path, int err) {
  absl::Status s = cniError(ErrorCode::kIoFailure, cat(what, " ", path, ": ", std::strerror(err)));
  return err == ENOENT ? withStatusCode(s, absl::StatusCode::kNotFound) : s;
}

// What openDir may create.
enum class Create {
  kNothing,
  kBelowRoot,  // the components below the root (the root must exist)
  kRootToo,    // the root (mkdir -p) and the components below it
};

// The directory `dir` (root, then each component with O_NOFOLLOW), created
// as `create` allows. The root itself is the node's trusted choice and may
// pass through symlinks; nothing below it may. `made_last`, when given, is
// set to whether this call created dir's last component.
absl::StatusOr<UniqueFd> openDir(const ConfinedPath& dir, Create create, bool* made_last = nullptr) {
  if (made_last != nullptr) *made_last = false;
  if (create == Create::kRootToo) {
    if (absl::StatusOr<bool> made = makeDirs(dir.root, 0755); !made.ok()) return made.status();
  }
  UniqueFd fd(open(dir.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ioError("open", dir.root, errno);
  std::string walked = dir.root;
  for (const std::string& name : dir.components) {
    walked = cat(walked, "/", name);
    if (create != Create::kNothing) {
      const bool made = mkdirat(fd.get(), name.c_str(), 0755) == 0;
      if (!made && errno != EEXIST) return ioError("mkdir", walked, errno);
      if (made_last != nullptr) *made_last = made;
    }
    UniqueFd next(openat(fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      // ELOOP: a symlink; ENOTDIR: a file. Either way not a directory of ours.
      const int err = errno;
      if (err == ELOOP || err == ENOTDIR) {
        return withStatusCode(ioError("open (a symlink or not a directory)", walked, err),
                              absl::StatusCode::kFailedPrecondition);
      }
      return ioError("open", walked, err);
    }
    fd = std::move(next);
  }
  return fd;
}

// A failure to reach a path that means no file of ours can be there: it is
// gone, or a symlink or non-directory stands in for one of its directories
// (none is ever created through one).
bool nothingOfOurs(const absl::Status& s) {
  return s.code() == absl::StatusCode::kNotFound || s.code() == absl::StatusCode::kFailedPrecondition;
}

// The parent directory of a file path and the file's own name.
absl::StatusOr<std::pair<UniqueFd, std::string>> openParent(const ConfinedPath& path, bool create) {
  if (path.components.empty()) {
    return cniError(ErrorCode::kIoFailure, cat(path.root, " is a directory, not a file"));
  }
  ConfinedPath parent = path;
  std::string name = std::move(parent.components.back());
  parent.components.pop_back();
  absl::StatusOr<UniqueFd> dir = openDir(parent, create ? Create::kRootToo : Create::kNothing);
  if (!dir.ok()) return dir.status();
  return std::make_pair(std::move(*dir), std::move(name));
}

absl::Status writeAll(int fd, std::string_view content, const std::string& path) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t w = write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ioError("write", path, errno);
    }
    done += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

absl::StatusOr<bool> makeDirsBelowRoot(const ConfinedPath& dir) {
  bool made = false;
  absl::StatusOr<UniqueFd> fd = openDir(dir, Create::kBelowRoot, &made);
  if (!fd.ok()) return fd.status();
  return made;
}

absl::StatusOr<bool> makeDirs(const std::string& path, unsigned mode) {
  if (path.empty()) return false;
  bool created = false;
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string prefix = path.substr(0, pos);
    if (mkdir(prefix.c_str(), static_cast<mode_t>(mode)) == 0) {
      created = pos == path.size();
      continue;
    }
    if (errno != EEXIST) return ioError("mkdir", prefix, errno);
    created = false;
  }
  return created;
}

absl::Status writeFileAtomic(const ConfinedPath& path, std::string_view content, unsigned mode) {
  absl::StatusOr<std::pair<UniqueFd, std::string>> parent = openParent(path, true);
  if (!parent.ok()) return parent.status();
  const int dir = parent->first.get();
  const std::string& name = parent->second;
  // A name unique to this process and call, so two writers of the same path
  // never share a temporary file (".tmp." also marks it as one for
  // AttachmentStore's directory scans). O_EXCL|O_NOFOLLOW: never an
  // existing file, never through a symlink.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = cat(name, ".tmp.", getpid(), ".", counter.fetch_add(1));
  UniqueFd fd(openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     static_cast<mode_t>(mode)));
  if (fd.get() < 0) return ioError("create", cat(path.str(), ".tmp"), errno);
  auto discard = [&](absl::Status s) {
    unlinkat(dir, tmp.c_str(), 0);
    return s;
  };
  // The umask may have narrowed the mode.
  if (fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) return discard(ioError("chmod", path.str(), errno));
  if (absl::Status s = writeAll(fd.get(), content, path.str()); !s.ok()) return discard(s);
  if (fsync(fd.get()) != 0) return discard(ioError("fsync", path.str(), errno));
  fd = UniqueFd();
  // rename replaces whatever is at `name` (a symlink included) without following it.
  if (renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) return discard(ioError("rename to", path.str(), errno));
  return absl::OkStatus();
}

absl::Status removeFileIfExists(const ConfinedPath& path) {
  absl::StatusOr<std::pair<UniqueFd, std::string>> parent = openParent(path, false);
  if (!parent.ok()) return nothingOfOurs(parent.status()) ? absl::OkStatus() : parent.status();
  if (unlinkat(parent->first.get(), parent->second.c_str(), 0) == 0 || errno == ENOENT) return absl::OkStatus();
  return ioError("remove", path.str(), errno);
}

absl::Status removeSocketIfExists(const ConfinedPath& path) {
  absl::StatusOr<std::pair<UniqueFd, std::string>> parent = openParent(path, false);
  if (!parent.ok()) return nothingOfOurs(parent.status()) ? absl::OkStatus() : parent.status();
  struct stat st {};
  if (fstatat(parent->first.get(), parent->second.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? absl::OkStatus() : ioError("stat", path.str(), errno);
  }
  if (!S_ISSOCK(st.st_mode)) return absl::OkStatus();
  if (unlinkat(parent->first.get(), parent->second.c_str(), 0) == 0 || errno == ENOENT) return absl::OkStatus();
  return ioError("remove", path.str(), errno);
}

absl::Status removeDirIfEmpty(const ConfinedPath& dir) {
  absl::StatusOr<std::pair<UniqueFd, std::string>> parent = openParent(dir, false);
  if (!parent.ok()) return nothingOfOurs(parent.status()) ? absl::OkStatus() : parent.status();
  if (unlinkat(parent->first.get(), parent->second.c_str(), AT_REMOVEDIR) == 0) return absl::OkStatus();
  // ENOTDIR: a file or a symlink stands there, not a directory of ours.
  const int err = errno;
  if (err == ENOENT || err == ENOTEMPTY || err == EEXIST || err == ENOTDIR) return absl::OkStatus();
  return ioError("remove", dir.str(), err);
}

absl::Status checkDirectory(const ConfinedPath& dir) {
  absl::StatusOr<UniqueFd> fd = openDir(dir, Create::kNothing);
  return fd.ok() ? absl::OkStatus() : fd.status();
}

absl::StatusOr<bool> makeSymlink(const ConfinedPath& link, const std::string& target) {
  if (link.components.empty()) return cniError(ErrorCode::kIoFailure, cat(link.root, " is the root, not a link"));
  ConfinedPath parent = link;
  const std::string name = std::move(parent.components.back());
  parent.components.pop_back();
  absl::StatusOr<UniqueFd> dir = openDir(parent, Create::kBelowRoot);
  if (!dir.ok()) return dir.status();
  if (symlinkat(target.c_str(), dir->get(), name.c_str()) == 0) return true;
  if (errno != EEXIST) return ioError("symlink", link.str(), errno);
  // Already there: ours (a repeated ADD) only if it is the same link.
  char buf[4096];
  const ssize_t n = readlinkat(dir->get(), name.c_str(), buf, sizeof buf);
  if (n >= 0 && static_cast<size_t>(n) < sizeof buf && std::string_view(buf, static_cast<size_t>(n)) == target) {
    return false;
  }
  return withStatusCode(cniError(ErrorCode::kIoFailure, cat(link.str(), " exists and is not a link to ", target)),
                        absl::StatusCode::kFailedPrecondition);
}

absl::Status removeSymlinkTo(const ConfinedPath& link, std::string_view target) {
  absl::StatusOr<std::pair<UniqueFd, std::string>> parent = openParent(link, false);
  if (!parent.ok()) return nothingOfOurs(parent.status()) ? absl::OkStatus() : parent.status();
  char buf[4096];
  const ssize_t n = readlinkat(parent->first.get(), parent->second.c_str(), buf, sizeof buf);
  // EINVAL: not a symlink; ENOENT: nothing there. Neither is ours to remove.
  if (n < 0) return errno == EINVAL || errno == ENOENT ? absl::OkStatus() : ioError("readlink", link.str(), errno);
  if (!target.empty() && std::string_view(buf, static_cast<size_t>(n)) != target) return absl::OkStatus();
  if (unlinkat(parent->first.get(), parent->second.c_str(), 0) == 0 || errno == ENOENT) return absl::OkStatus();
  return ioError("remove", link.str(), errno);
}

absl::Status setGroupAndMode(const ConfinedPath& path, unsigned gid, unsigned mode, bool want_socket) {
  absl::StatusOr<std::pair<UniqueFd, std::string>> parent = openParent(path, false);
  if (!parent.ok()) return parent.status();
  UniqueFd fd(openat(parent->first.get(), parent->second.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return ioError("open", path.str(), errno);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ioError("stat", path.str(), errno);
  if (want_socket ? !S_ISSOCK(st.st_mode) : !S_ISDIR(st.st_mode)) {
    return withStatusCode(
        cniError(ErrorCode::kIoFailure, cat(path.str(), " is not a ", want_socket ? "socket" : "directory")),
        absl::StatusCode::kFailedPrecondition);
  }
  if (fchownat(fd.get(), "", static_cast<uid_t>(-1), static_cast<gid_t>(gid), AT_EMPTY_PATH) != 0) {
    return ioError("chown", path.str(), errno);
  }
  // An O_PATH descriptor takes no fchmod; its /proc/self/fd entry names the
  // very inode it holds (no path is resolved again), so chmod through it
  // cannot be redirected.
  if (chmod(cat("/proc/self/fd/", fd.get()).c_str(), static_cast<mode_t>(mode)) != 0) {
    return ioError("chmod", path.str(), errno);
  }
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> openForAppend(const ConfinedPath& path, unsigned mode) {
  absl::StatusOr<std::pair<UniqueFd, std::string>> parent = openParent(path, true);
  if (!parent.ok()) return parent.status();
  UniqueFd fd(openat(parent->first.get(), parent->second.c_str(),
                     O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode)));
  if (fd.get() < 0) return ioError("open", path.str(), errno);
  return fd;
}

absl::StatusOr<std::string> readFile(const ConfinedPath& path) {
  absl::StatusOr<std::pair<UniqueFd, std::string>> parent = openParent(path, false);
  if (!parent.ok()) return parent.status();
  UniqueFd fd(openat(parent->first.get(), parent->second.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return ioError("open", path.str(), errno);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ioError("read", path.str(), errno);
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> listRegularFiles(const ConfinedPath& dir) {
  absl::StatusOr<UniqueFd> fd = openDir(dir, Create::kNothing);
  if (!fd.ok()) {
    if (fd.status().code() == absl::StatusCode::kNotFound) return std::vector<std::string>();
    return fd.status();
  }
  DIR* d = fdopendir(fd->get());
  if (d == nullptr) return ioError("list", dir.str(), errno);
  fd->release();  // closedir closes it
  std::vector<std::string> out;
  while (dirent* entry = readdir(d)) {
    struct stat st {};
    if (fstatat(dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
      out.emplace_back(entry->d_name);
    }
  }
  closedir(d);
  return out;
}

}  // namespace sluice::cni
