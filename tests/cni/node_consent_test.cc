// What a network config may ask only with the node's consent: source
// validation off, a sluiced API socket the node does not list, and sockets
// below the shared socketDir (perPodSockets false, or a runtime without
// K8S_POD_UID); the node config keys that give it, their defaults, and who
// may write a pod's directory in the shared socketDir.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <string>
#include <vector>

#include "cni-plugin/cni_error.h"
#include "cni-plugin/netconf.h"
#include "cni-plugin/node_config.h"
#include "cni-plugin/pod_paths.h"
#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace node_consent_test {

namespace fs = std::filesystem;
using nlohmann::json;

// Leaves a unix socket file at `path` (its directory made first).
void makeSocketFile(const fs::path& path) {
  fs::create_directories(path.parent_path());
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.string().size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  close(fd);
}

TEST(NodeConsentConfigTest, DefaultsAllowNothingAndTheConventionalApiSocket) {
  const NodeConfig defaults;
  EXPECT_FALSE(defaults.allow_source_validation_off);
  EXPECT_FALSE(defaults.allow_shared_socket_dir);
  EXPECT_EQ(defaults.api_sockets, std::vector<std::string>{"/var/run/sluice/sluice.sock"});
  absl::StatusOr<NodeConfig> empty = parseNodeConfig("{}", "test");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_FALSE(empty->allow_source_validation_off);
  EXPECT_FALSE(empty->allow_shared_socket_dir);
  EXPECT_EQ(empty->api_sockets, defaults.api_sockets);
}

TEST(NodeConsentConfigTest, KeysAreTyped) {
  absl::StatusOr<NodeConfig> node = parseNodeConfig(
      R"({"allowSourceValidationOff":true,"allowSharedSocketDir":true,"apiSockets":["/run//a/api.sock","/b.sock"]})",
      "test");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_TRUE(node->allow_source_validation_off);
  EXPECT_TRUE(node->allow_shared_socket_dir);
  EXPECT_EQ(node->api_sockets, (std::vector<std::string>{"/run/a/api.sock", "/b.sock"}));
  for (const std::string& bad : std::vector<std::string>{
           R"({"allowSourceValidationOff":"yes"})", R"({"allowSharedSocketDir":1})", R"({"apiSockets":[]})",
        R"({"apiSockets":"/a.sock"})", R"({"apiSockets":["a.sock"]})", R"({"apiSockets":["/x/../a.sock"]})",
        R"({"apiSockets":["/"]})", R"({"apiSockets":["/a.sock","/a.sock"]})", R"({"apiSockets":[3]})",
        R"({"apiSockets":["/)" + std::string(107, 'a') + R"("]})", R"({"apiSocket":["/a.sock"]})"}) {
    absl::StatusOr<NodeConfig> r = parseNodeConfig(bad, "test");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(cniCodeOf(r.status()), ErrorCode::kInvalidConfig) << bad;
  }
}

TEST_F(CniTest, SourceValidationOffNeedsTheNodesConsent) {
  json off = conf();
  off["sourceValidation"] = false;
  RunResult r = run(env("ADD"), off);
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_NE(r.msg().find("sourceValidation"), std::string::npos) << r.msg();
  EXPECT_NE(r.msg().find("allowSourceValidationOff"), std::string::npos) << r.msg();
  EXPECT_TRUE(fake_->addRequests().empty()) << "sluiced was asked for an unchecked port";
  expectNothingLeft();
  // DEL of what ADD refused succeeds.
  EXPECT_EQ(run(env("DEL"), off).rc, 0);

  writeNodeConfig({{"allowSourceValidationOff", true}});
  r = run(env("ADD"), off);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  ASSERT_TRUE(fake_->addRequests()[0].has_source_validation());
  EXPECT_FALSE(fake_->addRequests()[0].source_validation());
}

// A network config that points the plugin at another "sluiced" (a socket in
// some pod's volume) is refused before anything is sent there.
TEST_F(CniTest, AnApiSocketTheNodeDoesNotListIsRefused) {
  const std::string elsewhere = (dir_ / "impostor.sock").string();
  FakeDataplane impostor(socket_dir_);
  FakeServer impostor_server(impostor, elsewhere);
  json c = conf();
  c["apiSocket"] = elsewhere;
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_NE(r.msg().find("\"apiSocket\" " + elsewhere), std::string::npos) << r.msg();
  EXPECT_NE(r.msg().find("apiSockets: " + api_socket_), std::string::npos) << r.msg();
  EXPECT_TRUE(impostor.addRequests().empty());
  EXPECT_EQ(run(env("CHECK"), c).code(), 7);
  EXPECT_TRUE(impostor.ports().empty());
  expectNothingLeft();

  // Listed by the node: used.
  writeNodeConfig({{"apiSockets", {api_socket_, elsewhere}}});
  ASSERT_EQ(run(env("ADD"), c).rc, 0);
  EXPECT_EQ(impostor.addRequests().size(), 1u);
  EXPECT_TRUE(fake_->addRequests().empty());
}

TEST_F(CniTest, WithoutApiSocketTheNodesFirstIsUsedAndANamedOneIsComparedNormalised) {
  json c = conf();
  c.erase("apiSocket");
  ASSERT_EQ(run(env("ADD"), c).rc, 0);
  EXPECT_EQ(fake_->addRequests().size(), 1u);
  json dotted = conf();
  dotted["apiSocket"] = (dir_ / "." / "sluice.sock").string();
  ASSERT_EQ(run(env("ADD", kContainerId, "net2"), dotted).rc, 0);
  EXPECT_EQ(fake_->addRequests().size(), 2u);
}

// DEL must succeed for what ADD refuses, and a port made before the node
// listed its sockets is still on the node's own sluiced: DEL goes there.
TEST_F(CniTest, DelOfARefusedApiSocketDeletesAtTheNodesSluiced) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  json c = conf();
  c["apiSocket"] = (dir_ / "impostor.sock").string();
  RunResult r = run(env("DEL"), c);
  EXPECT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_NE(r.stderr_text.find("apiSockets"), std::string::npos) << r.stderr_text;
  expectNothingLeft();
}

// The plugin's own defaults: per-pod sockets, and no shared socketDir.
class SharedSocketDirTest : public CniTest {
 protected:
  void SetUp() override {
    CniTest::SetUp();
    writeNodeConfig({{"allowSharedSocketDir", false}});
  }
  Environment podEnv(const std::string& command) const {
    Environment e = env(command);
    e["CNI_ARGS"] = "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=dpdk;K8S_POD_UID="
                    "0f3c8e2a-5b1d-4c7e-9a2f-6d8b1e4c3a70";
    return e;
  }
};

TEST_F(SharedSocketDirTest, WithoutAPodUidTheSharedDirectoryIsRefused) {
  json c = conf();  // perPodSockets unset: on by default
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_NE(r.msg().find("K8S_POD_UID"), std::string::npos) << r.msg();
  EXPECT_NE(r.msg().find("allowSharedSocketDir"), std::string::npos) << r.msg();
  EXPECT_TRUE(fake_->addRequests().empty());
  expectNothingLeft();
  EXPECT_EQ(run(env("DEL"), c).rc, 0);
}

TEST_F(SharedSocketDirTest, PerPodSocketsFalseIsRefusedEvenWithAPodUid) {
  json c = conf();
  c["perPodSockets"] = false;
  RunResult r = run(podEnv("ADD"), c);
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_NE(r.msg().find("\"perPodSockets\" is false"), std::string::npos) << r.msg();
  EXPECT_NE(r.msg().find("allowSharedSocketDir"), std::string::npos) << r.msg();
  EXPECT_TRUE(fake_->addRequests().empty());
  expectNothingLeft();
}

TEST_F(SharedSocketDirTest, SriovHasNoSocketDirectoryAndIsNotAffected) {
  json c = conf();
  c["interfaceType"] = "sriov";
  c["deviceID"] = "0000:18:02.5";
  c.erase("vhostMode");
  run(env("ADD"), c);
  // The fake sluiced has no SR-IOV: reaching it is what this test is after.
  EXPECT_EQ(fake_->addRequests().size(), 1u);
}

// In the shared socketDir (where the node allows it) a pod's directory is
// written by nobody but root, except by the network's socketGroup where its
// application must make the socket itself (client mode).
TEST_F(CniTest, APodDirectoryInTheSharedSocketDirIsRootsUnlessItsGroupMustWriteIt) {
  struct Case {
    const char* mode;
    std::optional<uint32_t> group;
    uint32_t want_gid;
    unsigned want_mode;
  };
  for (const Case& k : {Case{"server", std::nullopt, 0, 0700}, Case{"client", std::nullopt, 0, 0700},
                        Case{"server", 3456, 3456, 0750}, Case{"client", 3456, 3456, 02770}}) {
    json c = conf();
    c["vhostMode"] = k.mode;
    const fs::path pod_dir = fs::path(socket_dir_) / socketSubdir(kContainerId);
    if (k.group) {
      c["socketGroup"] = *k.group;
      // Server mode: the socket sluiced makes (the fake does not) before the
      // plugin gives it the group.
      if (std::string(k.mode) == "server") makeSocketFile(pod_dir / "net1.sock");
    }
    RunResult add = run(env("ADD"), c);
    ASSERT_EQ(add.rc, 0) << k.mode << ": " << add.stdout_text;
    struct stat st {};
    ASSERT_EQ(lstat(pod_dir.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_gid, k.want_gid) << k.mode;
    EXPECT_EQ(st.st_mode & 07777, k.want_mode) << k.mode << " group " << k.group.value_or(0);
    ASSERT_EQ(run(env("DEL"), c).rc, 0);
    expectNothingLeft();
  }
}

}  // namespace node_consent_test
}  // namespace sluice::cni::testing
