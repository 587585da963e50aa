// sluiced's connect() (dataplane/sluiced/connect_nofollow.cc), which this
// program links in place of libc's: a unix socket's path is not followed
// through a symlink; a plain path and an abstract address connect as with
// libc's.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace sluice {
namespace {

// A unix stream socket's descriptor, closed when it goes.
class Socket {
 public:
  Socket() : fd_(::socket(AF_UNIX, SOCK_STREAM, 0)) {}
  ~Socket() { ::close(fd_); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// `name` as a unix address; a leading '\0' makes it abstract, and the
// length then counts only the name's bytes, as Linux expects.
socklen_t unixAddress(const std::string& name, sockaddr_un& addr) {
  addr = {};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + (name[0] == '\0' ? 0 : 1));
}

void listenOn(const Socket& s, const std::string& name) {
  sockaddr_un addr;
  const socklen_t len = unixAddress(name, addr);
  ASSERT_EQ(::bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
  ASSERT_EQ(::listen(s.fd(), 4), 0) << std::strerror(errno);
}

int connectTo(const Socket& s, const std::string& name) {
  sockaddr_un addr;
  const socklen_t len = unixAddress(name, addr);
  return ::connect(s.fd(), reinterpret_cast<sockaddr*>(&addr), len);
}

class ConnectNofollowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "connect_nofollow_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

TEST_F(ConnectNofollowTest, PlainSocketPathConnects) {
  Socket listener, client;
  const std::string path = dir_ / "pod.sock";
  listenOn(listener, path);
  EXPECT_EQ(connectTo(client, path), 0) << std::strerror(errno);
}

TEST_F(ConnectNofollowTest, SymlinkToSocketIsRefusedWithEloop) {
  Socket listener, client;
  const std::string target = dir_ / "elsewhere.sock";
  const std::string link = dir_ / "pod.sock";
  listenOn(listener, target);
  std::filesystem::create_symlink(target, link);
  errno = 0;
  EXPECT_EQ(connectTo(client, link), -1);
  EXPECT_EQ(errno, ELOOP);
}

TEST_F(ConnectNofollowTest, AbstractAddressPassesThrough) {
  Socket listener, client;
  const std::string name = std::string(1, '\0') + "sluice_connect_nofollow_test_" + std::to_string(::getpid());
  listenOn(listener, name);
  EXPECT_EQ(connectTo(client, name), 0) << std::strerror(errno);
}

}  // namespace
}  // namespace sluice
