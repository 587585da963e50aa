// A raw vhost-user front-end for tests that play a misbehaving pod: a unix
// socket (connected to sluiced's listening one, or accepted from sluiced's
// connection) on which the test writes vhost-user messages byte by byte,
// withholds what it likes, and reads the replies with a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace sluice::test {

// vhost-user request codes (the vhost-user protocol specification's).
inline constexpr uint32_t kVhostUserGetFeatures = 1;
inline constexpr uint32_t kVhostUserSetFeatures = 2;
// A message header's flags: protocol version 1; a reply also has bit 2.
inline constexpr uint32_t kVhostUserVersion = 0x1;
inline constexpr uint32_t kVhostUserReplyFlag = 0x4;

class VhostUserPeer {
 public:
  // Connects to the socket at `path` (sluiced's port in server mode).
  static std::optional<VhostUserPeer> connectTo(const std::string& path);
  // A listening socket at `path` (the pod's, sluiced's port in client mode).
  static std::optional<VhostUserPeer> listenAt(const std::string& path);
  // Waits up to `limit` for a connection on this listening socket.
  std::optional<VhostUserPeer> accept(std::chrono::milliseconds limit) const;

  VhostUserPeer(VhostUserPeer&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  VhostUserPeer& operator=(VhostUserPeer&& other) noexcept;
  VhostUserPeer(const VhostUserPeer&) = delete;
  VhostUserPeer& operator=(const VhostUserPeer&) = delete;
  ~VhostUserPeer();

  // A message's header alone: {request, flags, size}; the size announces a
  // payload this does not send.
  bool sendHeader(uint32_t request, uint32_t flags, uint32_t size) const;
  bool sendBytes(const void* data, size_t size) const;
  // Sends GET_FEATURES and waits up to `limit` for its reply: the features,
  // or nullopt if none came (or the connection closed).
  std::optional<uint64_t> getFeatures(std::chrono::milliseconds limit) const;
  // Whether the other side closed the connection within `limit` (what is
  // read meanwhile is discarded).
  bool closedWithin(std::chrono::milliseconds limit) const;

 private:
  explicit VhostUserPeer(int fd) : fd_(fd) {}
  // Reads exactly `size` bytes before `until`; false on timeout or close.
  bool readExactly(void* data, size_t size, std::chrono::steady_clock::time_point until) const;
  int fd_ = -1;
};

// The syscall number the thread named `name` of process `pid` is in (its
// /proc/<pid>/task/<tid>/syscall), or nullopt if no such thread is in one.
std::optional<long> threadSyscall(int pid, const std::string& name);

}  // namespace sluice::test
