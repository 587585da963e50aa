// The host paths a network config names (device-info file, logFile, dataDir,
// socketDir) stay inside the directories the node config allows, through ".." and
// symlinks; the node config's caps on SR-IOV VF settings; and DEL's
// tolerance of what ADD refuses.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "cni-plugin/cni_error.h"
#include "cni-plugin/confined_path.h"
#include "cni-plugin/node_config.h"
#include "cni-plugin/pod_paths.h"
#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Leaves a unix socket file at `path` (what sluiced leaves in a pod's socket
// directory), so that a removal of sockets has something to remove.
void makeSocketFile(const fs::path& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.string().size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  close(fd);
}

TEST(ConfinedPathTest, NormalisesAndRefusesDotDot) {
  EXPECT_EQ(normaliseAbsolutePath("/var//log/./sluice/"), "/var/log/sluice");
  EXPECT_EQ(normaliseAbsolutePath("/"), "/");
  EXPECT_EQ(normaliseAbsolutePath("/var/log/../../etc/passwd"), std::nullopt);
  EXPECT_EQ(normaliseAbsolutePath("/var/log/sluice/.."), std::nullopt);
  EXPECT_EQ(normaliseAbsolutePath("var/log"), std::nullopt);
  EXPECT_EQ(normaliseAbsolutePath(std::string_view("/var/\0x", 7)), std::nullopt);
}

TEST(ConfinedPathTest, InsideTheRootOnlyByWholeComponents) {
  absl::StatusOr<ConfinedPath> p = confinePath("/var/log/sluice/./a//b.log", "/var/log/sluice/", false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->root, "/var/log/sluice");
  EXPECT_EQ(p->components, (std::vector<std::string>{"a", "b.log"}));
  EXPECT_EQ(p->str(), "/var/log/sluice/a/b.log");
  EXPECT_FALSE(confinePath("/var/log/sluice-other/x.log", "/var/log/sluice", false).ok());
  EXPECT_FALSE(confinePath("/var/log/sluice/../syslog", "/var/log/sluice", false).ok());
  EXPECT_FALSE(confinePath("/var/log/sluice", "/var/log/sluice", false).ok());
  EXPECT_TRUE(confinePath("/var/lib/cni", "/var/lib/cni", true).ok());
}

TEST(NodeConfigTest, KeysAreTypedAndUnknownOnesRefused) {
  absl::StatusOr<NodeConfig> node = parseNodeConfig(
      R"({"deviceInfoDir":"/run/devinfo/","logDir":"/var/log/x","allowVfTrust":true})", "test");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->device_info_dir, "/run/devinfo");
  EXPECT_EQ(node->log_dir, "/var/log/x");
  EXPECT_EQ(node->data_dir_root, "/var/lib/cni");
  EXPECT_TRUE(node->allow_vf_trust);
  EXPECT_FALSE(node->allow_vf_spoofchk_off);
  for (const char* bad : {R"({"logdir":"/var/log/x"})", R"({"logDir":"var/log"})", R"({"logDir":"/var/../etc"})",
                          R"({"allowVfTrust":"yes"})", "[]", "{"}) {
    absl::StatusOr<NodeConfig> r = parseNodeConfig(bad, "test");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(cniCodeOf(r.status()), ErrorCode::kInvalidConfig) << bad;
  }
}

TEST(NodeConfigTest, DefaultsAreTheConventionalDirectories) {
  // No file at the path given: the defaults.
  absl::StatusOr<NodeConfig> node = loadNodeConfig({{std::string(kNodeConfigEnv), "/nonexistent/cni.json"}});
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->device_info_dir, "/var/run/k8s.cni.cncf.io/devinfo/cni");
  EXPECT_EQ(node->log_dir, "/var/log/sluice");
  EXPECT_EQ(node->data_dir_root, "/var/lib/cni");
  EXPECT_EQ(node->socket_dir_root, "/var/run/sluice");
  EXPECT_FALSE(node->allow_vf_trust);
  EXPECT_FALSE(node->allow_vf_spoofchk_off);
}

TEST(NodeConfigTest, SocketDirRootIsAKeyLikeTheOtherDirectories) {
  absl::StatusOr<NodeConfig> node = parseNodeConfig(R"({"socketDirRoot":"/run//sluice/"})", "test");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->socket_dir_root, "/run/sluice");
  for (const char* bad : {R"({"socketDirRoot":"run/sluice"})", R"({"socketDirRoot":"/run/../etc"})",
                          R"({"socketDirRoot":true})", R"({"socketDirroot":"/run/sluice"})"}) {
    absl::StatusOr<NodeConfig> r = parseNodeConfig(bad, "test");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(cniCodeOf(r.status()), ErrorCode::kInvalidConfig) << bad;
  }
}

TEST_F(CniTest, MalformedNodeConfigIsCode7NamingTheFile) {
  std::ofstream(node_config_) << R"({"logDirectory":"/tmp"})";
  RunResult r = run(env("ADD"), conf());
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_NE(r.msg().find(node_config_), std::string::npos) << r.msg();
  EXPECT_NE(r.msg().find("logDirectory"), std::string::npos) << r.msg();
  expectNothingLeft();
}

TEST_F(CniTest, DeviceInfoPathWithDotDotIsRefused) {
  json c = conf();
  c["runtimeConfig"]["CNIDeviceInfoFile"] = devinfo_dir_ + "/../victim.json";
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_NE(r.msg().find("runtimeConfig.CNIDeviceInfoFile"), std::string::npos) << r.msg();
  EXPECT_FALSE(fs::exists(dir_ / "victim.json"));
  expectNothingLeft();
}

TEST_F(CniTest, SymlinkBelowTheDeviceInfoDirIsNotFollowed) {
  // Something planted a symlink where the device-info file's directory goes.
  const fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  fs::create_directories(devinfo_dir_);
  fs::create_directory_symlink(outside, devinfo_dir_ + "/cni");
  RunResult r = run(env("ADD"), conf());
  EXPECT_EQ(r.code(), 5) << r.stdout_text;
  EXPECT_NE(r.msg().find("symlink"), std::string::npos) << r.msg();
  EXPECT_TRUE(fs::is_empty(outside)) << "wrote through the symlink";
  fs::remove(devinfo_dir_ + "/cni");
  expectNothingLeft();
}

TEST_F(CniTest, DelRemovesNothingThroughASymlinkedDirectory) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  // The device-info directory swapped for a symlink to a directory holding
  // a file of the same name.
  const fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  std::ofstream(outside / "net1-device.json") << "precious";
  fs::remove_all(devinfo_dir_ + "/cni");
  fs::create_directory_symlink(outside, devinfo_dir_ + "/cni");
  RunResult del = run(env("DEL"), conf());
  EXPECT_TRUE(fs::exists(outside / "net1-device.json")) << "unlinked through the symlink";
  // No file of ours can be behind a symlink: the DEL itself succeeds.
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  fs::remove(devinfo_dir_ + "/cni");
  expectNothingLeft();
}

TEST_F(CniTest, DelLeavesARefusedDeviceInfoPathAlone) {
  // DEL must succeed for a config ADD refused, and must not unlink for it.
  const fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "precious";
  json c = conf();
  c["runtimeConfig"]["CNIDeviceInfoFile"] = victim.string();
  RunResult del = run(env("DEL"), c);
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  EXPECT_TRUE(fs::exists(victim));
  EXPECT_NE(del.stderr_text.find("not touched"), std::string::npos) << del.stderr_text;
}

TEST_F(CniTest, RefusedLogFileOrDataDirFailsAddButNotDel) {
  const fs::path elsewhere = dir_ / "elsewhere";
  json bad_log = conf();
  bad_log["logFile"] = (elsewhere / "cni.log").string();
  json bad_data = conf();
  bad_data["dataDir"] = (fs::path("/") / "etc" / "sluice-records").string();
  RunResult add_log = run(env("ADD"), bad_log);
  EXPECT_EQ(add_log.code(), 7) << add_log.stdout_text;
  EXPECT_NE(add_log.msg().find("\"logFile\""), std::string::npos) << add_log.msg();
  RunResult add_data = run(env("ADD"), bad_data);
  EXPECT_EQ(add_data.code(), 7) << add_data.stdout_text;
  EXPECT_NE(add_data.msg().find("\"dataDir\""), std::string::npos) << add_data.msg();
  EXPECT_TRUE(fake_->calls().empty());
  expectNothingLeft();

  // DEL logs to stderr instead, and otherwise does its job.
  RunResult del_log = run(env("DEL"), bad_log);
  EXPECT_EQ(del_log.rc, 0) << del_log.stdout_text;
  EXPECT_NE(del_log.stderr_text.find("\"logFile\""), std::string::npos) << del_log.stderr_text;
  // With a dataDir ADD refuses, no attachment can exist: nothing to do.
  const size_t calls = fake_->calls().size();
  RunResult del_data = run(env("DEL"), bad_data);
  EXPECT_EQ(del_data.rc, 0) << del_data.stdout_text;
  EXPECT_EQ(fake_->calls().size(), calls);
  EXPECT_FALSE(fs::exists(elsewhere));
  EXPECT_FALSE(fs::exists("/etc/sluice-records"));
}

TEST_F(CniTest, SocketDirOutsideTheNodeRootIsRefusedBeforeAnythingIsMade) {
  // The node allows only the fixture's socket directory; the network config
  // names a sibling of it, and one that climbs out of it.
  writeNodeConfig({{"socketDirRoot", socket_dir_}});
  const fs::path elsewhere = dir_ / "elsewhere";
  for (const std::string& bad : {(elsewhere / "vhost").string(), socket_dir_ + "/../elsewhere"}) {
    json c = conf();
    c["socketDir"] = bad;
    RunResult r = run(env("ADD"), c);
    EXPECT_EQ(r.code(), 7) << bad << ": " << r.stdout_text;
    EXPECT_NE(r.msg().find("\"socketDir\""), std::string::npos) << r.msg();
    if (bad.find("..") == std::string::npos) {
      EXPECT_NE(r.msg().find("inside " + socket_dir_ + "/"), std::string::npos) << r.msg();
    }
    // Refused before IPAM, the record and sluiced, and no directory made.
    EXPECT_TRUE(fake_->calls().empty()) << bad;
    EXPECT_FALSE(fs::exists(elsewhere)) << bad << ": created a directory outside socketDirRoot";
    expectNothingLeft();
    // The other verbs refuse it alike (DEL aside, below).
    for (const char* verb : {"CHECK", "STATUS", "GC"}) {
      EXPECT_EQ(run(env(verb), c).code(), 7) << verb << " " << bad;
    }
    EXPECT_FALSE(fs::exists(elsewhere)) << bad;
  }
}

TEST_F(CniTest, SocketDirRootItselfIsNeverCreated) {
  // socketDir may be the root or below it, and ADD makes what is missing
  // below the root; the root (sluiced's runtime directory) it never makes.
  const fs::path root = dir_ / "run-sluice";
  writeNodeConfig({{"socketDirRoot", root.string()}});
  json c = conf();
  c["socketDir"] = (root / "vhost").string();
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 5) << r.stdout_text;
  EXPECT_NE(r.msg().find("socketDir"), std::string::npos) << r.msg();
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(fake_->addRequests().empty());
  expectNothingLeft();
}

TEST_F(CniTest, DelWithARefusedSocketDirSucceedsAndTouchesNothingThere) {
  writeNodeConfig({{"socketDirRoot", socket_dir_}});
  // What a DEL with that socketDir would remove: the pod's directory, empty.
  const fs::path elsewhere = dir_ / "elsewhere";
  const fs::path victim = elsewhere / socketSubdir(kContainerId);
  fs::create_directories(victim);
  json c = conf();
  c["socketDir"] = elsewhere.string();
  RunResult del = run(env("DEL"), c);
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  EXPECT_TRUE(fs::exists(victim)) << "removed a directory outside socketDirRoot";
  EXPECT_NE(del.stderr_text.find("\"socketDir\""), std::string::npos) << del.stderr_text;

  // An attachment made with the allowed socketDir, deleted with the refused
  // one: the rest of the teardown still happens (port, address, record).
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  del = run(env("DEL"), c);
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  EXPECT_TRUE(fs::exists(victim));
  EXPECT_TRUE(fake_->ports().empty());
  EXPECT_TRUE(heldIps().empty());
  EXPECT_TRUE(records().empty());
  // Its pod directory stays behind: this DEL was told of another socketDir.
  fs::remove_all(fs::path(socket_dir_) / socketSubdir(kContainerId));
  expectNothingLeft();
}

TEST_F(CniTest, DelRemovesNoSocketThroughASymlinkedPodDirectory) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  // A pod that can write the socket directory swaps its own pod directory
  // for a symlink to a directory holding another program's socket.
  const fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  makeSocketFile(outside / "net1.sock");
  const fs::path pod_dir = fs::path(socket_dir_) / socketSubdir(kContainerId);
  fs::remove_all(pod_dir);
  fs::create_directory_symlink(outside, pod_dir);
  RunResult del = run(env("DEL"), conf());
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  EXPECT_TRUE(fs::exists(outside / "net1.sock")) << "unlinked a socket through the symlink";
  EXPECT_TRUE(fs::exists(outside));
  fs::remove(pod_dir);
  expectNothingLeft();
}

TEST_F(CniTest, DelRemovesThePodSocketAndItsDirectory) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  const fs::path pod_dir = fs::path(socket_dir_) / socketSubdir(kContainerId);
  ASSERT_TRUE(fs::is_directory(pod_dir));
  makeSocketFile(pod_dir / "net1.sock");
  EXPECT_EQ(run(env("DEL"), conf()).rc, 0);
  EXPECT_FALSE(fs::exists(pod_dir));
  expectNothingLeft();
}

// An interface name that sluiced escapes in the socket's file name (Multus
// names interfaces like net@1): DEL removes the file sluiced named.
TEST_F(CniTest, DelRemovesThePodSocketOfAnEscapedInterfaceName) {
  ASSERT_EQ(run(env("ADD", kContainerId, "net@1"), conf()).rc, 0);
  const fs::path pod_dir = fs::path(socket_dir_) / socketSubdir(kContainerId);
  ASSERT_TRUE(fs::is_directory(pod_dir));
  makeSocketFile(pod_dir / "net%401.sock");
  EXPECT_EQ(run(env("DEL", kContainerId, "net@1"), conf()).rc, 0);
  EXPECT_FALSE(fs::exists(pod_dir / "net%401.sock"));
  EXPECT_FALSE(fs::exists(pod_dir));
}

TEST_F(CniTest, NodeConfigCanAllowVfTrustAndSpoofchkOff) {
  writeNodeConfig({{"allowVfTrust", true}, {"allowVfSpoofchkOff", true}});
  json c = conf();
  c["interfaceType"] = "sriov";
  c["deviceID"] = "0000:18:02.5";
  c["trust"] = "on";
  c["spoofchk"] = "off";
  RunResult r = run(env("ADD"), c);
  // The fake sluiced has no SR-IOV: reaching it is what this test is after.
  ASSERT_EQ(fake_->addRequests().size(), 1u) << r.stdout_text;
  EXPECT_TRUE(fake_->addRequests()[0].vf_trust());
  EXPECT_FALSE(fake_->addRequests()[0].vf_spoof_check());
}

TEST_F(CniTest, NetworkConfigCannotNameTheNodeConfig) {
  // Only the environment moves the node config: a key in the network config
  // of that name is an unknown field, nothing more.
  json c = conf();
  c["SLUICE_CNI_NODE_CONFIG"] = "/nonexistent";
  c["logFile"] = (dir_ / "elsewhere.log").string();
  EXPECT_EQ(run(env("ADD"), c).code(), 7);
}

}  // namespace
}  // namespace sluice::cni::testing
