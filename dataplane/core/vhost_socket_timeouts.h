// How long DPDK's vhost library may wait on one vhost-user connection.
//
// The library serves every connection of every port on one thread and
// reads a message in two parts: the header when poll() says the socket is
// readable, then the payload the header announced with a blocking read().
// A peer that sends a header and withholds the payload would hold that
// thread, so every other pod's vhost-user connection and every unregister,
// for as long as it likes. sluiced's connect() and accept() (the
// executable's, which the library calls: sluiced/connect_nofollow.cc,
// vhost_accept.cc) give each vhost-user socket these timeouts: the read (or
// a reply's send to a peer that never reads) then fails, and the library
// drops that connection (a client-mode port reconnects).
#pragma once

#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>

namespace sluice {

// A legitimate front-end (QEMU, virtio_user) writes a message's header and
// payload with one sendmsg(), so the payload is there with the header; a
// second leaves room for a loaded node and bounds how long one stalled
// message holds every other pod's connection.
inline constexpr std::chrono::seconds kVhostUserSocketTimeout{1};

// Sets SO_RCVTIMEO and SO_SNDTIMEO on `fd`; errno as setsockopt left it.
inline bool applyVhostUserSocketTimeouts(int fd) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(kVhostUserSocketTimeout.count());
  return ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
         ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0;
}

}  // namespace sluice
