#include "dataplane/api/unix_socket_listener.h"

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <grpcpp/server_posix.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/log.h"

namespace sluice {

void PeerCredentials::remember(int fd, const PeerCredential& credential) {
  std::lock_guard lock(mu_);
  by_fd_[fd] = credential;
}

std::optional<PeerCredential> PeerCredentials::of(std::string_view grpc_peer) const {
  constexpr std::string_view kPrefix = "fd:";
  int fd = -1;
  if (grpc_peer.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  const std::string_view number = grpc_peer.substr(kPrefix.size());
  if (!absl::SimpleAtoi(absl::string_view(number.data(), number.size()), &fd)) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return std::nullopt;
  return it->second;
}

std::string PeerCredentials::describe(std::string_view grpc_peer) const {
  const std::optional<PeerCredential> c = of(grpc_peer);
  if (!c) return std::string(grpc_peer);
  return absl::StrCat("pid ", c->pid, " uid ", c->uid, " gid ", c->gid, " (", std::string(grpc_peer), ")");
}

absl::StatusOr<std::unique_ptr<UnixSocketListener>> UnixSocketListener::start(const std::string& path, mode_t mode,
                                                                               std::optional<gid_t> gid,
                                                                               grpc::Server& server,
                                                                               PeerCredentials& peers) {
  auto failed = [&](const std::string& what) {
    return absl::InternalError(absl::StrCat("cannot serve the API on ", path, ": ", what));
  };
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return failed("path too long for a unix socket");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failed(std::strerror(errno));
  // bind() makes the socket 0777 & ~umask. The umask is the process's:
  // while it is narrowed, a file any other thread makes is at most this
  // wide too. At start nothing else makes files the pods need (their
  // sockets come with AddPort, served only after the main socket serves),
  // and narrower is never less safe.
  const mode_t saved = ::umask(0777 & ~mode);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int bind_errno = errno;
  ::umask(saved);
  if (bound != 0 || ::listen(fd, SOMAXCONN) != 0) {
    const std::string why = std::strerror(bound != 0 ? bind_errno : errno);
    ::close(fd);
    return failed(why);
  }
  // Until this chown the socket is root's group's: narrower than asked.
  if (gid && ::chown(path.c_str(), static_cast<uid_t>(-1), *gid) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return failed(absl::StrCat("cannot give it to group ", *gid, ": ", why));
  }
  // Refuse to run with an API others could reach (e.g. a path whose
  // directory's default ACL widens the mode).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) || (st.st_mode & 07777) != mode ||
      (gid && st.st_gid != *gid)) {
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode));
    ::close(fd);
    return failed(absl::StrCat("not a socket of mode ", octal, gid ? absl::StrCat(" and group ", *gid) : ""));
  }
  std::unique_ptr<UnixSocketListener> listener(new UnixSocketListener(fd, server, peers));
  listener->thread_ = std::thread([l = listener.get()] { l->acceptLoop(); });
  return listener;
}

void UnixSocketListener::acceptLoop() {
  while (!stopping_.load(std::memory_order_acquire)) {
    // Non-blocking, as gRPC's own accepted sockets are: its pollers must
    // never block on one connection.
    const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (conn < 0) {
      if (stopping_.load(std::memory_order_acquire)) break;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: the pending connection waits in the backlog
        // until a port or call gives one back.
        logWarning("API socket: cannot accept a connection: ", std::strerror(errno));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      continue;  // EINTR, ECONNABORTED, ...: the next one
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
      peers_.remember(conn, PeerCredential{cred.pid, cred.uid, cred.gid});
    grpc::AddInsecureChannelFromFd(&server_, conn);  // the server owns it from here
  }
}

UnixSocketListener::~UnixSocketListener() {
  stopping_.store(true, std::memory_order_release);
  // Wakes the accept() in progress (EINVAL on a listening socket shut down).
  ::shutdown(fd_, SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  ::close(fd_);
}

}  // namespace sluice
