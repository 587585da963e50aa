// The API socket is born mode 0600: watched with inotify from before the
// server starts, the socket appears once and its mode is never changed
// afterwards (a chmod after listen() would show as IN_ATTRIB: a moment in
// which the socket had the umask's wider mode). Each call's caller is the
// kernel's word (SO_PEERCRED). No EAL.
#include "dataplane/api/api_server.h"

#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <string>
#include <vector>

#include "sluice/v1/dataplane.grpc.pb.h"

namespace sluice {
namespace {

struct FileEvent {
  uint32_t mask;
  std::string name;
};

// Every event queued on `fd` (non-blocking) so far.
std::vector<FileEvent> drainEvents(int fd) {
  std::vector<FileEvent> out;
  alignas(inotify_event) char buf[16 * (sizeof(inotify_event) + NAME_MAX + 1)];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
    for (char* p = buf; p < buf + n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(p);
      out.push_back({e->mask, e->len > 0 ? std::string(e->name) : std::string()});
      p += sizeof(inotify_event) + e->len;
    }
  }
  return out;
}

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/api-server-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // A permissive umask makes a socket created without care world-writable.
    saved_umask_ = ::umask(0);
  }
  void TearDown() override {
    ::umask(saved_umask_);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
  mode_t saved_umask_ = 0;
  sluice::v1::Dataplane::Service service_;
  PeerCredentials peers_;
};

TEST_F(ApiServerTest, TheSocketIsBornOwnerOnly) {
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_GE(::inotify_add_watch(fd, dir_.c_str(), IN_CREATE | IN_MOVED_TO | IN_ATTRIB), 0);
  const std::string path = dir_ + "/api.sock";
  auto server = startApiServer(path, {&service_}, peers_);
  ASSERT_TRUE(server.ok()) << server.status();

  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  int appeared = 0, mode_changes = 0;
  for (const FileEvent& e : drainEvents(fd)) {
    if (e.name != "api.sock") continue;
    if (e.mask & (IN_CREATE | IN_MOVED_TO)) ++appeared;
    if (e.mask & IN_ATTRIB) ++mode_changes;
  }
  ::close(fd);
  EXPECT_EQ(appeared, 1);
  EXPECT_EQ(mode_changes, 0) << "the socket's mode was changed after it appeared";
  // The process's umask is what it was.
  EXPECT_EQ(::umask(0), 0u);
  (*server)->shutdown(std::chrono::system_clock::now());
}

TEST_F(ApiServerTest, APathItCannotServeIsAnError) {
  auto server = startApiServer(dir_ + "/missing/api.sock", {&service_}, peers_);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(server.status().message(),
            "cannot serve the API on " + dir_ + "/missing/api.sock: No such file or directory");
}

// Answers Health with what the API knows of its caller.
class CallerEcho : public sluice::v1::Dataplane::Service {
 public:
  explicit CallerEcho(const PeerCredentials& peers) : peers_(peers) {}
  grpc::Status Health(grpc::ServerContext* ctx, const v1::HealthRequest*, v1::HealthResponse* out) override {
    out->set_version(peers_.describe(ctx->peer()));
    return grpc::Status::OK;
  }

 private:
  const PeerCredentials& peers_;
};

TEST_F(ApiServerTest, EachCallsCallerIsKnownFromTheKernel) {
  CallerEcho echo(peers_);
  const std::string path = dir_ + "/api.sock";
  auto server = startApiServer(path, {&echo}, peers_);
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = v1::Dataplane::NewStub(grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials()));
  for (int call = 0; call < 2; ++call) {
    grpc::ClientContext ctx;
    v1::HealthResponse health;
    ASSERT_TRUE(stub->Health(&ctx, {}, &health).ok());
    const std::string expected = "pid " + std::to_string(::getpid()) + " uid " + std::to_string(::getuid()) +
                                 " gid " + std::to_string(::getgid()) + " (fd:";
    EXPECT_EQ(health.version().substr(0, expected.size()), expected) << health.version();
  }
  EXPECT_EQ(peers_.describe("unix:/elsewhere"), "unix:/elsewhere");
  EXPECT_FALSE(peers_.of("fd:x").has_value());
  (*server)->shutdown(std::chrono::system_clock::now());
}

}  // namespace
}  // namespace sluice
