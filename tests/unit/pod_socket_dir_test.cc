// sluiced in a socket dir that pods hostPath-mount: a pod's directory swapped
// for a symlink (to another pod's directory, or anywhere) is never followed
// when a port is added, garbage-collected at restore or removed, so no socket
// elsewhere is unlinked, bound or connected to; the CNI plugin's per-pod link
// at the attachment's own link name is followed, and the backend is given
// the socket through the directory's descriptor. Without EAL (a recording
// backend, a fake PMD).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "common/socket_name.h"
#include "dataplane/core/checkpoint.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/pod_socket_dir.h"
#include "tests/support/fake_control.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

// Binds a unix socket at `path` and leaves its file there (a socket some
// other program listens on, as far as unlink is concerned).
void makeSocketFile(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << path << ": " << std::strerror(errno);
  ::close(fd);
}

bool isSocket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

class PodSocketDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "/pod-socket-dir-" + std::to_string(::getpid());
    dir_ = root_ + "/vhost";
    victim_ = root_ + "/victim";
    fs::create_directories(dir_);
    fs::create_directories(victim_);
    makeSocketFile(victim_ + "/net1.sock");
    config_.socket_dir = dir_;
    config_.pod_cidr = *Ipv4Cidr::parse("10.244.1.0/24");
    config_.gateway = *Ipv4Address::parse("10.244.1.1");
    config_.max_ports = 4;
    control_ = std::make_unique<DataplaneControl>(config_, backend_, std::vector<PmdContext*>{&pmd_.context},
                                                  2'600'000'000);
    control_->start();
    pmd_.start();
  }
  void TearDown() override {
    control_->removeAllPorts();
    pmd_.stop();
    fs::remove_all(root_);
  }

  static RawPortRequest request(const std::string& subdir, VhostMode mode = VhostMode::kServer) {
    RawPortRequest r;
    r.container_id = "aaaa";
    r.ifname = "net1";
    r.ip = "10.244.1.10";
    r.vhost_mode = mode;
    r.socket_subdir = subdir;
    return r;
  }

  std::string root_, dir_, victim_;
  SluicedConfig config_;
  test::FakePortBackend backend_;
  test::AckingPmd pmd_;
  std::unique_ptr<DataplaneControl> control_;
};

TEST_F(PodSocketDirTest, APodDirectorySwappedForASymlinkIsRefusedAndItsTargetUntouched) {
  for (VhostMode mode : {VhostMode::kServer, VhostMode::kClient}) {
    fs::create_directory_symlink(victim_, dir_ + "/pod-aaaa");
    auto added = control_->addPort(request("pod-aaaa", mode));
    EXPECT_EQ(added.status().code(), absl::StatusCode::kFailedPrecondition) << added.status();
    EXPECT_NE(added.status().message().find(dir_ + "/pod-aaaa is not a directory"), std::string::npos)
        << added.status();
    EXPECT_TRUE(isSocket(victim_ + "/net1.sock")) << "sluiced unlinked a socket through the symlink";
    EXPECT_TRUE(backend_.created.empty()) << "the backend was given a path through the symlink";
    EXPECT_TRUE(control_->listPorts().empty());
    EXPECT_TRUE(fs::is_symlink(dir_ + "/pod-aaaa"));
    fs::remove(dir_ + "/pod-aaaa");
  }
}

// The backend binds (server) or connects (client) through the directory's
// descriptor: a swap after AddPort changes nothing, and the removal unlinks
// the socket in the directory it made, not at the name.
TEST_F(PodSocketDirTest, TheSocketIsReachedThroughTheDirectoryHeldOpenEvenAfterASwap) {
  auto added = control_->addPort(request("pod-aaaa"));
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->port.socket_path, dir_ + "/pod-aaaa/net1.sock") << "what the API shows is the real path";
  ASSERT_EQ(backend_.created.size(), 1u);
  const std::string given = backend_.created[0].socket_path;
  EXPECT_EQ(given.rfind("/proc/self/fd/", 0), 0u) << given;
  // What DPDK's bind would do at that path.
  makeSocketFile(given);
  ASSERT_TRUE(isSocket(dir_ + "/pod-aaaa/net1.sock"));
  // A root pod swaps the directory for a symlink to another pod's.
  fs::rename(dir_ + "/pod-aaaa", root_ + "/moved");
  fs::create_directory_symlink(victim_, dir_ + "/pod-aaaa");
  EXPECT_TRUE(isSocket(given)) << "the descriptor still names the directory sluiced made";
  ASSERT_TRUE(*control_->deletePort({"aaaa", "net1"}));
  EXPECT_TRUE(isSocket(victim_ + "/net1.sock")) << "sluiced unlinked the socket the symlink points at";
  EXPECT_FALSE(fs::exists(root_ + "/moved/net1.sock")) << "its own socket is gone";
  EXPECT_TRUE(fs::is_symlink(dir_ + "/pod-aaaa")) << "a symlink is not a directory to remove";
}

// A restored server port whose pod is gone: its socket and directory are
// removed, but not through a symlink put at the directory's name.
TEST_F(PodSocketDirTest, RestoreGarbageCollectionDoesNotFollowASwappedDirectory) {
  fs::create_directory_symlink(victim_, dir_ + "/pod-aaaa");
  CheckpointState state;
  CheckpointPort port;
  port.port_no = 0;
  port.request = request("pod-aaaa");
  port.socket_path = dir_ + "/pod-aaaa/net1.sock";
  port.netns = root_ + "/no-such-netns";
  state.ports.push_back(port);
  const RestoreSummary summary = control_->restore(state);
  EXPECT_EQ(summary.garbage_collected, 1u);
  EXPECT_TRUE(isSocket(victim_ + "/net1.sock")) << "sluiced unlinked a socket through the symlink";
  EXPECT_TRUE(fs::is_directory(victim_));
}

// The CNI plugin's per-pod link (at the name common/socket_name.h gives this
// attachment) is the one symlink followed: to the pod's own volume.
TEST_F(PodSocketDirTest, ThePluginsPerPodLinkIsFollowed) {
  const std::string volume = root_ + "/volume";
  fs::create_directories(volume);
  const std::string link = podSocketLinkName("aaaa", "net1");
  fs::create_directory_symlink(volume, dir_ + "/" + link);
  auto added = control_->addPort(request(link));
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->port.socket_path, dir_ + "/" + link + "/net1.sock");
  ASSERT_EQ(backend_.created.size(), 1u);
  makeSocketFile(backend_.created[0].socket_path);
  EXPECT_TRUE(isSocket(volume + "/net1.sock"));
  ASSERT_TRUE(*control_->deletePort({"aaaa", "net1"}));
  EXPECT_FALSE(fs::exists(volume + "/net1.sock")) << "server mode: its socket is unlinked";
  EXPECT_TRUE(fs::is_symlink(dir_ + "/" + link)) << "the link is the plugin's to remove";
  // Another attachment's link name is not this port's: refused.
  fs::create_directory_symlink(volume, dir_ + "/" + podSocketLinkName("bbbb", "net1"));
  EXPECT_EQ(control_->addPort(request(podSocketLinkName("bbbb", "net1"))).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PodSocketDirUnitTest, OnlyASocketIsRemovedAndAMissingDirectoryIsNotMadeUnlessAsked) {
  const std::string root = ::testing::TempDir() + "/pod-socket-dir-unit-" + std::to_string(::getpid());
  fs::create_directories(root);
  absl::StatusOr<PodSocketDir> none = PodSocketDir::open(root, "pod", false, PodSocketDir::Create::kNever);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(root + "/pod"));
  absl::StatusOr<PodSocketDir> dir = PodSocketDir::open(root, "pod", false, PodSocketDir::Create::kIfMissing);
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_TRUE(dir->made());
  struct stat st {};
  ASSERT_EQ(::stat((root + "/pod").c_str(), &st), 0);
  std::FILE* f = std::fopen((root + "/pod/net1.sock").c_str(), "w");  // a file at a socket's name
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  dir->removeSocket("net1.sock");
  EXPECT_TRUE(fs::exists(root + "/pod/net1.sock")) << "not a socket: not sluiced's";
  fs::remove(root + "/pod/net1.sock");
  makeSocketFile(root + "/pod/net1.sock");
  dir->removeSocket("net1.sock");
  EXPECT_FALSE(fs::exists(root + "/pod/net1.sock"));
  dir->closeAndRemoveIfEmpty();
  EXPECT_FALSE(fs::exists(root + "/pod"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace sluice
