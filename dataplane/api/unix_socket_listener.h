// The API's unix sockets, made and accepted on by sluiced itself rather
// than by gRPC, so that the kernel's word on who connected (SO_PEERCRED:
// the peer's pid, uid and gid at connect time) is known per connection.
// Each accepted connection is handed to the gRPC server
// (grpc::AddInsecureChannelFromFd), which names it "fd:<n>" as a call's
// peer; PeerCredentials maps that name back to the credentials, e.g. for
// the log of who captured a pod's traffic. One accept thread per socket;
// PeerCredentials is read from gRPC's threads.
#pragma once

#include <absl/status/statusor.h>
#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

namespace sluice {

struct PeerCredential {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

class PeerCredentials {
 public:
  // The connection on descriptor `fd` (a new one replaces whatever an
  // earlier connection on the same number left).
  void remember(int fd, const PeerCredential& credential);
  // The credentials of a call's peer, by gRPC's name for it ("fd:<n>").
  std::optional<PeerCredential> of(std::string_view grpc_peer) const;
  // "pid 123 uid 0 gid 0 (fd:12)", or the peer's name alone when unknown.
  std::string describe(std::string_view grpc_peer) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<int, PeerCredential> by_fd_;
};

class UnixSocketListener {
 public:
  // Binds and listens on `path` (an existing file there must have been
  // removed) with the socket born `mode`, given to group `gid` when set,
  // checks it is exactly that, then accepts into `server` (already started)
  // on its own thread, remembering each peer in `peers`. Internal, with the
  // reason, when any of it fails.
  static absl::StatusOr<std::unique_ptr<UnixSocketListener>> start(const std::string& path, mode_t mode,
                                                                   std::optional<gid_t> gid, grpc::Server& server,
                                                                   PeerCredentials& peers);
  // Stops accepting and joins the thread; connections already handed over
  // stay the server's.
  ~UnixSocketListener();
  UnixSocketListener(const UnixSocketListener&) = delete;
  UnixSocketListener& operator=(const UnixSocketListener&) = delete;

 private:
  UnixSocketListener(int fd, grpc::Server& server, PeerCredentials& peers)
      : fd_(fd), server_(server), peers_(peers) {}
  void acceptLoop();

  const int fd_;
  grpc::Server& server_;
  PeerCredentials& peers_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace sluice
