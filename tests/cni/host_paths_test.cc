// The host paths a network config names (device-info file, logFile, dataDir)
// stay inside the directories the node config allows, through ".." and
// symlinks; the node config's caps on SR-IOV VF settings; and DEL's
// tolerance of what ADD refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cni-plugin/cni_error.h"
#include "cni-plugin/confined_path.h"
#include "cni-plugin/node_config.h"
#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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
  EXPECT_FALSE(node->allow_vf_trust);
  EXPECT_FALSE(node->allow_vf_spoofchk_off);
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
