// A port's socket directory below sluiced's socket dir, <socket-dir>/<subdir>,
// held open by a descriptor for as long as the port lives, and the socket in
// it reached only through that descriptor. Where pods hostPath-mount the
// socket dir, a root pod can put a symlink in place of any pod's directory;
// sluiced, as root, would then make, unlink, bind or connect to a socket
// wherever the link points (another pod's directory, a container runtime's
// socket). So the directory is made with mkdirat() and opened with openat()
// relative to the socket dir, O_NOFOLLOW|O_DIRECTORY, and every later step
// goes through the descriptor: unlinkat() for a stale socket, and for DPDK,
// which takes only a path, "/proc/self/fd/<n>/<file>", which the kernel
// resolves to the very directory held open, whatever is at its name since.
// The one symlink followed is the CNI plugin's per-pod link at the port's
// own link name (common/socket_name.h), in a socket dir no pod mounts then.
// Used by the control thread when it adds, restores and removes ports.
#pragma once

#include <absl/status/statusor.h>

#include <string>

namespace sluice {

class PodSocketDir {
 public:
  enum class Create { kIfMissing, kNever };
  PodSocketDir() = default;
  PodSocketDir(PodSocketDir&& other) noexcept;
  PodSocketDir& operator=(PodSocketDir&& other) noexcept;
  PodSocketDir(const PodSocketDir&) = delete;
  PodSocketDir& operator=(const PodSocketDir&) = delete;
  ~PodSocketDir();

  // Opens <socket_dir>/<subdir> (subdir: one path component, as port_request
  // validates it), making it with mode 0755 first under kIfMissing. A
  // symlink there is followed only when `pod_volume_link`; any other
  // symlink, or anything but a directory, is FailedPrecondition; NotFound
  // when it is missing under kNever; InternalError for other failures.
  static absl::StatusOr<PodSocketDir> open(const std::string& socket_dir, const std::string& subdir,
                                           bool pod_volume_link, Create create);

  bool isOpen() const { return fd_ >= 0; }
  // Whether open() made the directory (it is then this port's to remove).
  bool made() const { return made_; }
  // "/proc/self/fd/<n>/<file>": the path DPDK binds, connects to and unlinks
  // `file` by, inside this very directory.
  std::string pathOf(const std::string& file) const;
  // Unlinks `file` if it is a socket (what a sluiced that died left behind
  // in server mode); anything else, a symlink included, stays.
  void removeSocket(const std::string& file) const;
  // Closes the descriptor, then removes <socket_dir>/<subdir> if it is an
  // empty directory (never through a symlink: unlinkat does not follow one).
  void closeAndRemoveIfEmpty();

 private:
  int fd_ = -1;
  std::string socket_dir_;  // sluiced's --socket-dir, to remove the directory by name
  std::string subdir_;
  bool made_ = false;
};

}  // namespace sluice
