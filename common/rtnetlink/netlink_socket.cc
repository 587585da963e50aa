// See netlink_socket.h.
#include "common/rtnetlink/netlink_socket.h"

#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

namespace sluice::rtnetlink {

RouteSocket RouteSocket::open(std::chrono::seconds reply_timeout) {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return RouteSocket(-1, errno);
  timeval tv{static_cast<time_t>(reply_timeout.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return RouteSocket(fd, 0);
}

RouteSocket::~RouteSocket() {
  if (fd_ >= 0) ::close(fd_);
}

int RouteSocket::send(std::span<const uint8_t> request) {
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd_, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
    return errno;
  return 0;
}

ssize_t RouteSocket::receive(std::span<uint8_t> into) {
  const ssize_t n = ::recv(fd_, into.data(), into.size(), 0);
  return n < 0 ? -errno : n;
}

}  // namespace sluice::rtnetlink
