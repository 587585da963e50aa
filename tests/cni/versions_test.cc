// Every spec version sluice-cni speaks (0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0),
// through the in-process dispatcher against the fake sluiced and Debian's
// host-local: ADD's result in exactly the form of the config's version, the
// IPAM delegate asked in that version and its answer converted, CHECK where
// the version has it (and refused with code 1 where it does not), DEL.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cni-plugin/pod_paths.h"
#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool before100(const std::string& version) { return version[0] == '0'; }

json readJson(const fs::path& path) {
  std::ifstream f(path);
  return json::parse(f, nullptr, false);
}

// host-local behind a script that keeps what it was given and what it
// answered, per CNI_COMMAND (the last call of each).
class VersionsTest : public CniTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    CniTest::SetUp();
    const std::string d = dir_.string();
    const std::string path = bin_dir_ + "/host-local-spy";
    std::ofstream(path) << "#!/bin/sh\n"
                        << "cat > " << d << "/ipam-$CNI_COMMAND.in\n"
                        << kSystemCniPath << "/host-local < " << d << "/ipam-$CNI_COMMAND.in > " << d
                        << "/ipam-$CNI_COMMAND.out\n"
                        << "rc=$?\n"
                        << "cat " << d << "/ipam-$CNI_COMMAND.out\n"
                        << "exit $rc\n";
    chmod(path.c_str(), 0755);
  }
  json conf() const {
    json c = CniTest::conf(GetParam());
    c["ipam"]["type"] = "host-local-spy";
    return c;
  }
  json withPrev(const json& prev) const {
    json c = conf();
    c["prevResult"] = prev;
    return c;
  }
  json ipamIn(const std::string& command) const { return readJson(dir_ / ("ipam-" + command + ".in")); }
  json ipamOut(const std::string& command) const { return readJson(dir_ / ("ipam-" + command + ".out")); }
};

TEST_P(VersionsTest, AddResultHasExactlyTheFormOfTheConfigsVersion) {
  const std::string version = GetParam();
  RunResult r = run(env("ADD"), conf());
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;
  ASSERT_EQ(fake_->ports().size(), 1u);
  const v1::Port port = fake_->ports()[0];

  json iface = {{"name", "net1"}, {"mac", port.mac()}, {"sandbox", "/var/run/netns/test-pod"}};
  if (version == "1.1.0") {
    iface["socketPath"] = socket_dir_ + "/" + socketSubdir(kContainerId) + "/net1.sock";
    iface["mtu"] = 1500;
  }
  json ip = {{"address", "10.244.1.2/24"}, {"gateway", "10.244.1.1"}, {"interface", 0}};
  if (before100(version)) ip["version"] = "4";
  EXPECT_EQ(r.out, json({{"cniVersion", version},
                         {"interfaces", {iface}},
                         {"ips", {ip}},
                         {"routes", {{{"dst", "10.244.0.0/16"}}}},
                         {"dns", json::object()}}));

  // host-local was asked in the config's version (1.1.0 it does not speak:
  // then in 1.0.0) and answered in that version's form, which ADD converted.
  const std::string asked = version == "1.1.0" ? "1.0.0" : version;
  EXPECT_EQ(ipamIn("ADD")["cniVersion"], asked);
  const json answer = ipamOut("ADD");
  EXPECT_EQ(answer["cniVersion"], asked);
  ASSERT_EQ(answer["ips"].size(), 1u) << answer;
  EXPECT_EQ(answer["ips"][0].contains("version"), before100(version)) << answer;
}

TEST_P(VersionsTest, AddAppendsToAPrevResultOfTheSameVersion) {
  const std::string version = GetParam();
  json earlier_ip = {{"address", "10.1.0.5/16"}, {"interface", 0}};
  if (before100(version)) earlier_ip["version"] = "4";
  const json prev = {{"cniVersion", version},
                     {"interfaces", {{{"name", "eth0"}, {"sandbox", "/var/run/netns/test-pod"}}}},
                     {"ips", {earlier_ip}},
                     {"dns", json::object()}};
  RunResult r = run(env("ADD"), withPrev(prev));
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;
  EXPECT_EQ(r.out["cniVersion"], version);
  ASSERT_EQ(r.out["interfaces"].size(), 2u) << r.out;
  EXPECT_EQ(r.out["interfaces"][0], prev["interfaces"][0]);
  ASSERT_EQ(r.out["ips"].size(), 2u) << r.out;
  EXPECT_EQ(r.out["ips"][0], earlier_ip);
  EXPECT_EQ(r.out["ips"][1]["interface"], 1);
  EXPECT_EQ(r.out["ips"][1].contains("version"), before100(version)) << r.out;
  ASSERT_EQ(run(env("DEL"), conf()).rc, 0);
  expectNothingLeft();
}

TEST_P(VersionsTest, CheckWorksFrom040AndIsRefusedBefore) {
  const std::string version = GetParam();
  RunResult add = run(env("ADD"), conf());
  ASSERT_EQ(add.rc, 0) << add.stdout_text;
  RunResult check = run(env("CHECK"), withPrev(add.out));
  if (version == "0.3.0" || version == "0.3.1") {
    EXPECT_EQ(check.rc, 1);
    EXPECT_EQ(check.out, json({{"cniVersion", version},
                               {"code", 1},
                               {"msg", "CHECK needs cniVersion 0.4.0 or later, config says " + version}}));
    // Refused before anything was asked or changed.
    EXPECT_FALSE(fs::exists(dir_ / "ipam-CHECK.in"));
    EXPECT_EQ(fake_->ports().size(), 1u);
    EXPECT_EQ(heldIps(), std::vector<std::string>{"10.244.1.2"});
  } else {
    EXPECT_EQ(check.rc, 0) << check.stdout_text << check.stderr_text;
    EXPECT_TRUE(check.stdout_text.empty());
    EXPECT_EQ(ipamIn("CHECK")["prevResult"], add.out);
    // prevResult in this version's form is read, not just accepted: the
    // address it names is compared with the port's.
    json moved = add.out;
    moved["ips"][0]["address"] = "10.244.1.9/24";
    RunResult wrong = run(env("CHECK"), withPrev(moved));
    EXPECT_EQ(wrong.code(), 101) << wrong.stdout_text;
    EXPECT_EQ(wrong.msg(), "port IPv4 is \"10.244.1.2\", prevResult says \"10.244.1.9\"");
  }
  ASSERT_EQ(run(env("DEL"), conf()).rc, 0);
  expectNothingLeft();
}

TEST_P(VersionsTest, DelLeavesNothingAndRepeats) {
  RunResult add = run(env("ADD"), conf());
  ASSERT_EQ(add.rc, 0) << add.stdout_text;
  ASSERT_EQ(fake_->ports().size(), 1u);
  // libcni passes the cached result to DEL (0.4.0 on); earlier runtimes do not.
  RunResult del = run(env("DEL"), withPrev(add.out));
  EXPECT_EQ(del.rc, 0) << del.stdout_text << del.stderr_text;
  EXPECT_TRUE(del.stdout_text.empty());
  EXPECT_EQ(ipamIn("DEL")["cniVersion"], GetParam() == "1.1.0" ? "1.0.0" : GetParam());
  expectNothingLeft();
  RunResult again = run(env("DEL"), conf());
  EXPECT_EQ(again.rc, 0) << again.stdout_text;
  expectNothingLeft();
}

INSTANTIATE_TEST_SUITE_P(SpecVersions, VersionsTest, ::testing::Values("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = "v" + param_info.param;
                           for (char& ch : name) ch = ch == '.' ? '_' : ch;
                           return name;
                         });

// A delegate answers in the version it speaks, not always the one asked:
// whatever form its result has, ours has the config's.
TEST_F(CniTest, DelegateResultOfAnotherVersionIsConvertedToTheConfigs) {
  writeIpamScript("ipam040", R"(case "$CNI_COMMAND" in
  ADD) echo '{"cniVersion":"0.4.0","ips":[{"version":"4","address":"10.244.1.40/24","gateway":"10.244.1.1"},{"version":"6","address":"fd00::40/64"}]}' ;;
esac
exit 0)");
  writeIpamScript("ipam100", R"(case "$CNI_COMMAND" in
  ADD) echo '{"cniVersion":"1.0.0","ips":[{"address":"10.244.1.41/24"},{"address":"fd00::41/64"}]}' ;;
esac
exit 0)");
  json c = conf("1.0.0");
  c["ipam"] = {{"type", "ipam040"}};
  RunResult to100 = run(env("ADD", "pod-a"), c);
  ASSERT_EQ(to100.rc, 0) << to100.stdout_text;
  EXPECT_EQ(to100.out["ips"], json::parse(R"([{"address":"10.244.1.40/24","gateway":"10.244.1.1","interface":0},
                                               {"address":"fd00::40/64","interface":0}])"));
  c = conf("0.3.1");
  c["ipam"] = {{"type", "ipam100"}};
  RunResult to031 = run(env("ADD", "pod-b"), c);
  ASSERT_EQ(to031.rc, 0) << to031.stdout_text;
  EXPECT_EQ(to031.out["ips"], json::parse(R"([{"version":"4","address":"10.244.1.41/24","interface":0},
                                               {"version":"6","address":"fd00::41/64","interface":0}])"));
}

TEST_F(CniTest, DelegateResultWithAWrongAddressFamilyFailsAddAndIsReleased) {
  writeIpamScript("ipambad", R"(case "$CNI_COMMAND" in
  ADD) echo '{"cniVersion":"0.4.0","ips":[{"version":"6","address":"10.244.1.40/24"}]}' ;;
esac
exit 0)");
  json c = conf("0.4.0");
  c["ipam"] = {{"type", "ipambad"}};
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, json({{"cniVersion", "0.4.0"},
                         {"code", 6},
                         {"msg", "ipam ipambad ADD: invalid result: \"ips\" entry for 10.244.1.40/24 must have "
                                 "\"version\": \"4\""}}));
  // It printed a result we reject, so it may have allocated: released.
  EXPECT_EQ(ipamCommands(), (std::vector<std::string>{"ADD", "DEL"}));
  expectNothingLeft();
}

}  // namespace
}  // namespace sluice::cni::testing
