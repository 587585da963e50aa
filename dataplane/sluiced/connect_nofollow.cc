// sluiced's connect(2): a unix socket's path is never followed through a
// symlink in its last component, and a vhost-user socket's reads and writes
// are bounded (vhost_socket_timeouts.h).
//
// sluiced connects to unix sockets by path in one place: DPDK's vhost-user
// client (a port in client mode) connects to <socket-dir>/<pod dir>/<ifname>.sock
// (given as /proc/self/fd/<pod dir's descriptor>/<ifname>.sock), at AddPort
// and then from DPDK's own reconnect thread every second. With
// per-pod sockets that directory is the pod's emptyDir, where the pod may put
// a symlink in place of its socket; connect(2) would follow it to any socket
// on the node, and sluiced, as root, would hand that peer the vhost-user
// handshake with its memory's file descriptors. DPDK takes only a path and
// has no hook around its connect, so this definition in the executable stands
// in for libc's (the dynamic linker finds the executable's symbols first, for
// DPDK's libraries too). The directories on the way are not walked again:
// a pod's socket directory is given to DPDK as /proc/self/fd/<n>, a
// descriptor sluiced opened without following a symlink
// (dataplane/core/pod_socket_dir.h); only the last component is the pod's.
//
// For a unix address with a path: the last component is opened without
// following it (O_PATH | O_NOFOLLOW); a symlink fails with ELOOP; anything
// else is connected to through /proc/self/fd/N, which names the very inode
// just opened, so nothing swapped in meanwhile is reached. A port's socket
// (the library connects with the path it was registered with) gets the
// vhost-user timeouts first; a socket that cannot have them is not
// connected. Other addresses go to the system call unchanged.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include "dataplane/core/vhost_port_backend.h"
#include "dataplane/core/vhost_socket_timeouts.h"

namespace {

int rawConnect(int fd, const sockaddr* addr, socklen_t len) {
  return static_cast<int>(::syscall(SYS_connect, fd, addr, len));
}

// Closes `fd` keeping errno as it was.
void closeKeepingErrno(int fd) {
  const int saved = errno;
  ::close(fd);
  errno = saved;
}

}  // namespace

extern "C" int connect(int fd, const sockaddr* addr, socklen_t len) {
  constexpr socklen_t kPathOffset = offsetof(sockaddr_un, sun_path);
  if (addr == nullptr || len <= kPathOffset || addr->sa_family != AF_UNIX) return rawConnect(fd, addr, len);
  const auto* un = reinterpret_cast<const sockaddr_un*>(addr);
  const size_t room = std::min<size_t>(len - kPathOffset, sizeof un->sun_path);
  if (un->sun_path[0] == '\0') return rawConnect(fd, addr, len);  // abstract: no file
  const std::string path(un->sun_path, ::strnlen(un->sun_path, room));
  const int pinned = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (pinned < 0) return -1;  // ENOENT, EACCES…: what connect would have said
  struct stat st {};
  if (::fstat(pinned, &st) != 0) {
    closeKeepingErrno(pinned);
    return -1;
  }
  if (S_ISLNK(st.st_mode)) {
    ::close(pinned);
    errno = ELOOP;
    return -1;
  }
  if (sluice::VhostPortBackend::isVhostUserSocket(path) && !sluice::applyVhostUserSocketTimeouts(fd)) {
    closeKeepingErrno(pinned);
    return -1;
  }
  sockaddr_un via{};
  via.sun_family = AF_UNIX;
  std::snprintf(via.sun_path, sizeof via.sun_path, "/proc/self/fd/%d", pinned);
  const int rc = rawConnect(fd, reinterpret_cast<const sockaddr*>(&via), sizeof via);
  closeKeepingErrno(pinned);
  return rc;
}
