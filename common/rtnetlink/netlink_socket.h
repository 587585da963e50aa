// A NETLINK_ROUTE socket to the kernel (the transport under
// netlink_message.h). It acts in the network namespace of the thread that
// opened it, wherever that thread goes afterwards. Errors are errno values:
// each user maps them to its own statuses.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <span>

namespace sluice::rtnetlink {

class RouteSocket {
 public:
  // A receive waits at most reply_timeout, so that a wedged kernel path
  // fails the caller instead of hanging it.
  static RouteSocket open(std::chrono::seconds reply_timeout);
  RouteSocket(RouteSocket&& o) noexcept : fd_(o.fd_), open_errno_(o.open_errno_) { o.fd_ = -1; }
  RouteSocket& operator=(RouteSocket&&) = delete;
  RouteSocket(const RouteSocket&) = delete;
  RouteSocket& operator=(const RouteSocket&) = delete;
  ~RouteSocket();

  bool isOpen() const { return fd_ >= 0; }
  // Why open failed (errno of socket()).
  int openErrno() const { return open_errno_; }
  // 0, or the errno of sending `request` to the kernel.
  int send(std::span<const uint8_t> request);
  // The length of the datagram read into `into`, or -errno.
  ssize_t receive(std::span<uint8_t> into);

 private:
  RouteSocket(int fd, int open_errno) : fd_(fd), open_errno_(open_errno) {}
  int fd_ = -1;
  int open_errno_ = 0;
};

}  // namespace sluice::rtnetlink
