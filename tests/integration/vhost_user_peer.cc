#include "tests/integration/vhost_user_peer.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

namespace sluice::test {

namespace {

std::optional<sockaddr_un> unixAddress(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return std::nullopt;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

int remainingMs(std::chrono::steady_clock::time_point until) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// A vhost-user message header (the protocol's: three little-endian u32).
struct Header {
  uint32_t request, flags, size;
};

}  // namespace

std::optional<VhostUserPeer> VhostUserPeer::connectTo(const std::string& path) {
  const auto addr = unixAddress(path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!addr || fd < 0) return std::nullopt;
  VhostUserPeer peer(fd);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0) return std::nullopt;
  return peer;
}

std::optional<VhostUserPeer> VhostUserPeer::listenAt(const std::string& path) {
  const auto addr = unixAddress(path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!addr || fd < 0) return std::nullopt;
  VhostUserPeer peer(fd);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0 || ::listen(fd, 8) != 0)
    return std::nullopt;
  return peer;
}

std::optional<VhostUserPeer> VhostUserPeer::accept(std::chrono::milliseconds limit) const {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(limit.count())) != 1) return std::nullopt;
  const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return std::nullopt;
  return VhostUserPeer(fd);
}

VhostUserPeer& VhostUserPeer::operator=(VhostUserPeer&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

VhostUserPeer::~VhostUserPeer() {
  if (fd_ >= 0) ::close(fd_);
}

bool VhostUserPeer::sendBytes(const void* data, size_t size) const {
  return ::send(fd_, data, size, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

bool VhostUserPeer::sendHeader(uint32_t request, uint32_t flags, uint32_t size) const {
  const Header h{request, flags, size};
  return sendBytes(&h, sizeof h);
}

bool VhostUserPeer::readExactly(void* data, size_t size, std::chrono::steady_clock::time_point until) const {
  auto* at = static_cast<char*>(data);
  while (size > 0) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, remainingMs(until)) != 1) return false;
    const ssize_t n = ::recv(fd_, at, size, MSG_DONTWAIT);
    if (n <= 0) return false;
    at += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::optional<uint64_t> VhostUserPeer::getFeatures(std::chrono::milliseconds limit) const {
  if (!sendHeader(kVhostUserGetFeatures, kVhostUserVersion, 0)) return std::nullopt;
  const auto until = std::chrono::steady_clock::now() + limit;
  Header reply{};
  uint64_t features = 0;
  if (!readExactly(&reply, sizeof reply, until) || reply.request != kVhostUserGetFeatures ||
      (reply.flags & kVhostUserReplyFlag) == 0 || reply.size != sizeof features ||
      !readExactly(&features, sizeof features, until))
    return std::nullopt;
  return features;
}

bool VhostUserPeer::closedWithin(std::chrono::milliseconds limit) const {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, remainingMs(until)) != 1) return false;
    char buf[256];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
}

std::optional<long> threadSyscall(int pid, const std::string& name) {
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string thread_name;
    if (!std::getline(comm, thread_name) || thread_name != name) continue;
    std::ifstream syscall(task.path() / "syscall");
    long number = -1;
    if (syscall >> number) return number;  // "running" (not in one) fails to parse
  }
  return std::nullopt;
}

}  // namespace sluice::test
