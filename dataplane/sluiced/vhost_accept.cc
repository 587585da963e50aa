// sluiced's accept(2): a connection accepted on a vhost-user port's
// listening socket (a port in server mode) gets the vhost-user timeouts
// (vhost_socket_timeouts.h) before DPDK's vhost library reads from it.
//
// The library accepts with accept(fd, NULL, NULL) on its event thread and
// offers no hook before it reads; this definition in the executable stands
// in for libc's as connect() does (connect_nofollow.cc). The listening
// socket's own address tells whether it is a port's: only those
// connections are changed; every other accept (the metrics endpoint's)
// is libc's accept4 with no flags, as accept is.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "dataplane/core/vhost_port_backend.h"
#include "dataplane/core/vhost_socket_timeouts.h"

namespace {

// The filesystem path `listener` is bound to; empty for any other address.
std::string boundPath(int listener) {
  sockaddr_un local{};
  socklen_t len = sizeof local;
  constexpr socklen_t kPathOffset = offsetof(sockaddr_un, sun_path);
  if (::getsockname(listener, reinterpret_cast<sockaddr*>(&local), &len) != 0 || local.sun_family != AF_UNIX ||
      len <= kPathOffset || local.sun_path[0] == '\0')
    return {};
  const size_t room = std::min<size_t>(len - kPathOffset, sizeof local.sun_path);
  return std::string(local.sun_path, ::strnlen(local.sun_path, room));
}

}  // namespace

extern "C" int accept(int listener, sockaddr* addr, socklen_t* len) {
  const int fd = ::accept4(listener, addr, len, 0);
  if (fd < 0) return fd;
  const std::string path = boundPath(listener);
  if (path.empty() || !sluice::VhostPortBackend::isVhostUserSocket(path)) return fd;
  if (!sluice::applyVhostUserSocketTimeouts(fd)) {
    // Unbounded, the connection could hold the library's thread: refused
    // (the library logs the failed accept and keeps listening).
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}
