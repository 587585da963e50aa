// Small filesystem helpers shared by the files sluice-cni writes (device-info,
// attachment records, its log): atomic replace, tolerant removal, appending,
// all inside a ConfinedPath. Each directory below the trusted root is opened
// with O_NOFOLLOW and the file is created, renamed or unlinked relative to
// its parent's descriptor, so a symlink anywhere below the root (a planted
// one, or one swapped in between check and use) is refused, never followed.
// Used by the single thread of the sluice-cni process.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni-plugin/confined_path.h"

namespace sluice::cni {

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  int release();

 private:
  int fd_ = -1;  // -1 when empty
};

// Writes `content` to a temporary file beside `path`, fsyncs it and renames
// it over `path`, so readers see the old file or the new one, never half.
// Creates missing directories below the root (mode 0755).
absl::Status writeFileAtomic(const ConfinedPath& path, std::string_view content, unsigned mode);

// Removes the file at `path` (a symlink there is removed, not followed). A
// file that is already gone, or whose directory is, is success; so is a path
// whose directories include a symlink or a non-directory: no file of ours
// can be there, since none is ever created through one.
absl::Status removeFileIfExists(const ConfinedPath& path);

// Removes the socket at `path`; anything else there (a file, a symlink, a
// directory) is left alone, and a path that cannot hold one of ours is
// success, as for removeFileIfExists.
absl::Status removeSocketIfExists(const ConfinedPath& path);

// Removes the directory `dir` (not the root) if it is empty; one that is
// gone, not empty, or not a directory (a symlink included) is left alone.
absl::Status removeDirIfEmpty(const ConfinedPath& dir);

// mkdir -p of the components below dir's root, mode 0755; the root must
// already exist (nothing outside it is created). True when dir's last
// component was created by this call.
absl::StatusOr<bool> makeDirsBelowRoot(const ConfinedPath& dir);

// Whether `dir` is a directory reached without a symlink below its root:
// OK, NotFound when it (or a directory on the way) does not exist,
// FailedPrecondition when a symlink or a non-directory stands in the way.
absl::Status checkDirectory(const ConfinedPath& dir);

// Makes `link` a symlink to `target` (directories below the root are made as
// for makeDirsBelowRoot). True when this call made it; false when `link`
// already is a symlink to exactly `target`; FailedPrecondition when anything
// else is there.
absl::StatusOr<bool> makeSymlink(const ConfinedPath& link, const std::string& target);

// Removes the symlink at `link` if it points to `target` (any target when
// `target` is empty); anything else there, or nothing, is left alone and is
// success, as is a path that cannot hold one of ours.
absl::Status removeSymlinkTo(const ConfinedPath& link, std::string_view target);

// Sets the group (the owner stays) and the mode of the file or directory at
// `path`, never through a symlink: the object is opened O_PATH|O_NOFOLLOW and
// changed through that descriptor, so one swapped in meanwhile is not
// followed either. `want_socket`: the object must be a socket, else a
// directory (FailedPrecondition otherwise).
absl::Status setGroupAndMode(const ConfinedPath& path, unsigned gid, unsigned mode, bool want_socket);

// Opens `path` for appending, creating it (and directories below the root).
absl::StatusOr<UniqueFd> openForAppend(const ConfinedPath& path, unsigned mode);

// The whole file; a status with code kNotFound when it does not exist.
absl::StatusOr<std::string> readFile(const ConfinedPath& path);

// Names of the regular files in a directory (symlinks and directories are
// left out); empty when the directory does not exist.
absl::StatusOr<std::vector<std::string>> listRegularFiles(const ConfinedPath& dir);

// mkdir -p; returns true when the last component was created by this call.
absl::StatusOr<bool> makeDirs(const std::string& path, unsigned mode);

}  // namespace sluice::cni
