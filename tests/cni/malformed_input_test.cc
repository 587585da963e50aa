// Every malformed input and every failure of a collaborator during ADD must
// give the right CNI error code on stdout and leave nothing behind: no port
// in sluiced, no address held by IPAM, no record, no device-info file, no
// pod socket directory.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct BadInput {
  const char* name;
  std::function<void(Environment&, json&)> mutate;
  int code;
  const char* msg_contains;  // the message names the culprit
};

class MalformedInputTest : public CniTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(MalformedInputTest, GivesCodeAndLeavesNothing) {
  const BadInput& bad = GetParam();
  Environment e = env("ADD");
  json c = conf();
  bad.mutate(e, c);
  RunResult r = run(e, c);
  EXPECT_EQ(r.rc, 1);
  ASSERT_TRUE(r.out.is_object()) << "stdout: " << r.stdout_text;
  EXPECT_EQ(r.code(), bad.code) << r.msg();
  EXPECT_NE(r.msg().find(bad.msg_contains), std::string::npos) << r.msg();
  EXPECT_TRUE(r.out.contains("cniVersion"));
  expectNothingLeft();
}

const BadInput kBadInputs[] = {
    {"MissingCommand", [](Environment& e, json&) { e.erase("CNI_COMMAND"); }, 4, "CNI_COMMAND"},
    {"UnknownCommand", [](Environment& e, json&) { e["CNI_COMMAND"] = "ATTACH"; }, 4, "CNI_COMMAND"},
    {"MissingContainerId", [](Environment& e, json&) { e.erase("CNI_CONTAINERID"); }, 4, "CNI_CONTAINERID"},
    {"PathEscapingContainerId", [](Environment& e, json&) { e["CNI_CONTAINERID"] = "../../etc"; }, 4,
     "CNI_CONTAINERID"},
    {"ContainerIdWithSlash", [](Environment& e, json&) { e["CNI_CONTAINERID"] = "abc/../../x"; }, 4,
     "CNI_CONTAINERID"},
    {"OverlongContainerId", [](Environment& e, json&) { e["CNI_CONTAINERID"] = std::string(129, 'a'); }, 4,
     "CNI_CONTAINERID"},
    {"MissingNetns", [](Environment& e, json&) { e.erase("CNI_NETNS"); }, 4, "CNI_NETNS"},
    {"MissingIfname", [](Environment& e, json&) { e.erase("CNI_IFNAME"); }, 4, "CNI_IFNAME"},
    {"PathEscapingIfname", [](Environment& e, json&) { e["CNI_IFNAME"] = "../net1"; }, 4, "CNI_IFNAME"},
    {"DotDotIfname", [](Environment& e, json&) { e["CNI_IFNAME"] = ".."; }, 4, "CNI_IFNAME"},
    {"IfnameWithSpace", [](Environment& e, json&) { e["CNI_IFNAME"] = "net 1"; }, 4, "CNI_IFNAME"},
    {"OverlongIfname", [](Environment& e, json&) { e["CNI_IFNAME"] = "abcdefghijklmnop"; }, 4, "CNI_IFNAME"},
    // The kernel's isspace() counts the Latin-1 no-break space.
    {"IfnameWithNoBreakSpace", [](Environment& e, json&) { e["CNI_IFNAME"] = "net\xa0" "1"; }, 4, "CNI_IFNAME"},
    {"MalformedCniArgs", [](Environment& e, json&) { e["CNI_ARGS"] = "K8S_POD_NAME"; }, 4, "CNI_ARGS"},
    {"MissingCniPath", [](Environment& e, json&) { e.erase("CNI_PATH"); }, 4, "CNI_PATH"},
    {"UnsupportedVersion", [](Environment&, json& c) { c["cniVersion"] = "0.2.0"; }, 1, "0.2.0"},
    {"MissingVersion", [](Environment&, json& c) { c.erase("cniVersion"); }, 7, "cniVersion"},
    {"WrongType", [](Environment&, json& c) { c["type"] = "bridge"; }, 7, "type"},
    {"UnsafeNetworkName", [](Environment&, json& c) { c["name"] = "../x"; }, 7, "name"},
    {"UnknownInterfaceType", [](Environment&, json& c) { c["interfaceType"] = "tap"; }, 7, "interfaceType"},
    {"InterfaceTypeNotString", [](Environment&, json& c) { c["interfaceType"] = 1; }, 7, "interfaceType"},
    {"UnknownVhostMode", [](Environment&, json& c) { c["vhostMode"] = "both"; }, 7, "vhostMode"},
    {"MtuAsString", [](Environment&, json& c) { c["mtu"] = "1500"; }, 7, "mtu"},
    {"MtuTooSmall", [](Environment&, json& c) { c["mtu"] = 10; }, 7, "mtu"},
    {"MtuFractional", [](Environment&, json& c) { c["mtu"] = 1500.5; }, 7, "mtu"},
    {"VlanOutOfRange", [](Environment&, json& c) { c["vlan"] = 4095; }, 7, "vlan"},
    {"VlanOnVhostUser", [](Environment&, json& c) { c["vlan"] = 100; }, 7, "vlan"},
    {"NegativeTimeout", [](Environment&, json& c) { c["timeoutMs"] = -1; }, 7, "timeoutMs"},
    {"RelativeApiSocket", [](Environment&, json& c) { c["apiSocket"] = "sluice.sock"; }, 7, "apiSocket"},
    {"SocketDirTooLong", [](Environment&, json& c) { c["socketDir"] = "/" + std::string(90, 'd'); }, 7,
     "socketDir"},
    {"RelativeDeviceInfoPath",
     [](Environment&, json& c) { c["runtimeConfig"]["CNIDeviceInfoFile"] = "devinfo.json"; }, 7,
     "CNIDeviceInfoFile"},
    {"DeviceInfoOutsideNodeDir",
     [](Environment&, json& c) { c["runtimeConfig"]["CNIDeviceInfoFile"] = "/etc/cron.d/sluice"; }, 7,
     "runtimeConfig.CNIDeviceInfoFile"},
    {"LogFileOutsideNodeDir", [](Environment&, json& c) { c["logFile"] = "/etc/profile.d/sluice.sh"; }, 7, "logFile"},
    {"DataDirOutsideNodeDir", [](Environment&, json& c) { c["dataDir"] = "/etc/sluice-records"; }, 7, "dataDir"},
    {"SriovTrustOnWithoutNodeConsent",
     [](Environment&, json& c) {
       c["interfaceType"] = "sriov";
       c["deviceID"] = "0000:18:02.5";
       c["trust"] = "on";
     },
     7, "trust"},
    {"SriovSpoofchkOffWithoutNodeConsent",
     [](Environment&, json& c) {
       c["interfaceType"] = "sriov";
       c["deviceID"] = "0000:18:02.5";
       c["spoofchk"] = false;
     },
     7, "spoofchk"},
    {"MissingIpam", [](Environment&, json& c) { c.erase("ipam"); }, 7, "ipam"},
    {"IpamTypeIsAPath", [](Environment&, json& c) { c["ipam"]["type"] = "../../bin/sh"; }, 7, "ipam.type"},
    {"IpamPluginAbsent", [](Environment&, json& c) { c["ipam"]["type"] = "no-such-ipam"; }, 7, "no-such-ipam"},
    {"IpamNotAnObject", [](Environment&, json& c) { c["ipam"] = "host-local"; }, 7, "ipam"},
    {"PrevResultNotAnObject", [](Environment&, json& c) { c["prevResult"] = json::array(); }, 7, "prevResult"},
    {"PrevResultWithBadAddress",
     [](Environment&, json& c) { c["prevResult"] = {{"ips", {{{"address", "10.0.0.300/24"}}}}}; }, 6,
     "prevResult"},
    // host-local's own error (code 999 "invalid CIDR address") comes through.
    {"IpamRejectsItsConfig", [](Environment&, json& c) { c["ipam"]["ranges"][0][0]["subnet"] = "10.244.1.0/33"; },
     999, "invalid CIDR"},
};

INSTANTIATE_TEST_SUITE_P(Add, MalformedInputTest, ::testing::ValuesIn(kBadInputs),
                         [](const ::testing::TestParamInfo<BadInput>& p) { return p.param.name; });

TEST_F(CniTest, UndecodableConfigIsCode6) {
  for (const std::string text : {"{", "not json", "[1,2]", "\"string\"", ""}) {
    RunResult r = run(env("ADD"), text);
    EXPECT_EQ(r.code(), 6) << "input: " << text << " → " << r.stdout_text;
  }
  expectNothingLeft();
}

TEST_F(CniTest, InvalidIpamResultIsReleasedAndCode6) {
  for (const std::string output : {"this is not json", R"({"cniVersion":"1.0.0","ips":[{"address":"banana"}]})",
                                   R"({"cniVersion":"1.0.0","ips":[]})",
                                   R"({"cniVersion":"1.0.0","ips":[{"address":"10.244.1.5/24"}],"routes":[{}]})"}) {
    fs::remove(ipamLog());
    writeIpamScript("fake-ipam", "[ \"$CNI_COMMAND\" = ADD ] && echo '" + output + "'\nexit 0");
    json c = conf();
    c["ipam"] = {{"type", "fake-ipam"}};
    RunResult r = run(env("ADD"), c);
    EXPECT_EQ(r.code(), 6) << output << " → " << r.stdout_text;
    EXPECT_EQ(ipamCommands(), (std::vector<std::string>{"ADD", "DEL"})) << "the address must be released";
  }
  expectNothingLeft();
}

TEST_F(CniTest, IpamResultWithoutAnyAddressIsReleasedAndCode6) {
  writeIpamScript("fake-ipam", "[ \"$CNI_COMMAND\" = ADD ] && echo '{\"cniVersion\":\"1.0.0\",\"ips\":[]}'\nexit 0");
  json c = conf();
  c["ipam"] = {{"type", "fake-ipam"}};
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 6) << r.stdout_text;
  EXPECT_EQ(r.msg(), "ipam fake-ipam ADD: result has no IPs (sluiced needs an IPv4 or an IPv6 address, or both)");
  EXPECT_EQ(ipamCommands(), (std::vector<std::string>{"ADD", "DEL"})) << "the address must be released";
  EXPECT_TRUE(fake_->calls().empty()) << "sluiced must not be asked without an address";
  expectNothingLeft();
}

TEST_F(CniTest, IpamErrorCodeIsPassedThrough) {
  writeIpamScript("fake-ipam",
                  "if [ \"$CNI_COMMAND\" = ADD ]; then echo '{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"pool "
                  "busy\"}'; exit 1; fi\nexit 0");
  json c = conf();
  c["ipam"] = {{"type", "fake-ipam"}};
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 11);
  EXPECT_NE(r.msg().find("pool busy"), std::string::npos);
  EXPECT_EQ(ipamCommands(), std::vector<std::string>{"ADD"}) << "a refusing delegate allocated nothing";
  expectNothingLeft();
}

TEST_F(CniTest, IpamKilledAtDeadlineIsReleasedAndTryAgainLater) {
  writeIpamScript("fake-ipam", "[ \"$CNI_COMMAND\" = ADD ] && exec sleep 1000\nexit 0");
  json c = conf();
  c["ipam"] = {{"type", "fake-ipam"}};
  c["timeoutMs"] = 300;
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 11) << r.stdout_text;
  EXPECT_EQ(ipamCommands(), (std::vector<std::string>{"ADD", "DEL"}))
      << "a killed delegate may have allocated: release";
  EXPECT_TRUE(fake_->calls().empty());
  expectNothingLeft();
}

TEST_F(CniTest, IpamRefusalDoesNotReleaseAnEarlierAllocation) {
  // A runtime must not ADD the same attachment twice, but if it does,
  // host-local refuses the duplicate, and that refusal must not free the
  // address the first ADD still uses.
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  RunResult again = run(env("ADD"), conf());
  EXPECT_EQ(again.code(), 999) << again.stdout_text;
  EXPECT_NE(again.msg().find("duplicate"), std::string::npos);
  EXPECT_EQ(heldIps(), std::vector<std::string>{"10.244.1.2"});
  EXPECT_EQ(fake_->ports().size(), 1u);
  EXPECT_EQ(records().size(), 1u);
  ASSERT_EQ(run(env("DEL"), conf()).rc, 0);
  expectNothingLeft();
}

TEST_F(CniTest, AbsentSluicedIsTryAgainLater) {
  server_->stop();
  fs::remove(api_socket_);
  RunResult r = run(env("ADD"), conf());
  EXPECT_EQ(r.code(), 11) << r.stdout_text;
  expectNothingLeft();
}

TEST_F(CniTest, DeadSocketIsTryAgainLater) {
  server_->stop();
  // A socket file nobody listens on, as a crashed sluiced leaves behind.
  fs::remove(api_socket_);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", api_socket_.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  close(fd);
  RunResult r = run(env("ADD"), conf());
  EXPECT_EQ(r.code(), 11) << r.stdout_text;
  expectNothingLeft();
}

TEST_F(CniTest, BusySluicedHitsDeadlineAndIsTryAgainLater) {
  fake_->hold();
  json c = conf();
  c["timeoutMs"] = 300;
  RunResult r = run(env("ADD"), c);
  fake_->release();
  EXPECT_EQ(r.code(), 11) << r.stdout_text;
  // The plugin asked sluiced to drop whatever the timed-out AddPort made.
  std::vector<std::string> calls = fake_->calls();
  EXPECT_EQ(calls, (std::vector<std::string>{"AddPort", "DeletePort"}));
  // That DeletePort timed out too: the port's fate is unknown, so the
  // address stays held with a pending-delete record ...
  EXPECT_EQ(heldIps(), std::vector<std::string>{"10.244.1.2"});
  EXPECT_EQ(record(kContainerId)["pendingDelete"], true);
  EXPECT_FALSE(fs::exists(devinfo_path_));
  // ... until the next invocation that reaches sluiced finishes the delete.
  Environment status = {{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", bin_dir_ + ":" + kSystemCniPath}};
  EXPECT_EQ(run(status, conf()).rc, 0);
  expectNothingLeft();
}

struct Refusal {
  const char* name;
  grpc::StatusCode grpc_code;
  int cni_code;
};

class SluicedRefusalTest : public CniTest, public ::testing::WithParamInterface<Refusal> {};

TEST_P(SluicedRefusalTest, MapsToCniCodeAndLeavesNothing) {
  fake_->failMethod("AddPort", GetParam().grpc_code);
  RunResult r = run(env("ADD"), conf());
  EXPECT_EQ(r.code(), GetParam().cni_code) << r.stdout_text;
  EXPECT_NE(r.msg().find("sluiced AddPort"), std::string::npos);
  expectNothingLeft();
}

INSTANTIATE_TEST_SUITE_P(
    Add, SluicedRefusalTest,
    ::testing::Values(Refusal{"InvalidArgument", grpc::StatusCode::INVALID_ARGUMENT, 7},
                      Refusal{"FailedPrecondition", grpc::StatusCode::FAILED_PRECONDITION, 7},
                      Refusal{"AlreadyExists", grpc::StatusCode::ALREADY_EXISTS, 100},
                      Refusal{"ResourceExhausted", grpc::StatusCode::RESOURCE_EXHAUSTED, 11},
                      Refusal{"Unavailable", grpc::StatusCode::UNAVAILABLE, 11},
                      Refusal{"Internal", grpc::StatusCode::INTERNAL, 999}),
    [](const ::testing::TestParamInfo<Refusal>& p) { return p.param.name; });

TEST_F(CniTest, SriovIsRefusedClearlyWhileSluicedLacksIt) {
  json c = conf();
  c["interfaceType"] = "sriov";
  c["deviceID"] = "0000:18:02.5";
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_NE(r.msg().find("sriov"), std::string::npos);
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  EXPECT_EQ(fake_->addRequests()[0].type(), v1::PORT_TYPE_SRIOV_VF);
  expectNothingLeft();
}

TEST_F(CniTest, SocketDirMismatchIsCaughtAndUndone) {
  fake_->setSocketDirOverride("/var/run/elsewhere");
  RunResult r = run(env("ADD"), conf());
  EXPECT_EQ(r.code(), 7) << r.stdout_text;
  EXPECT_NE(r.msg().find("socketDir"), std::string::npos);
  expectNothingLeft();
}

TEST_F(CniTest, DeviceInfoWriteFailureUndoesPortAndAddress) {
  // A regular file where the device-info directory should be.
  const std::string blocker = devinfo_dir_ + "/blocker";
  fs::create_directories(devinfo_dir_);
  std::ofstream(blocker) << "x";
  json c = conf();
  c["runtimeConfig"]["CNIDeviceInfoFile"] = blocker + "/net1.json";
  RunResult r = run(env("ADD"), c);
  EXPECT_EQ(r.code(), 5) << r.stdout_text;
  EXPECT_NE(r.msg().find("device-info"), std::string::npos);
  expectNothingLeft();
}

TEST_F(CniTest, DelOfARefusedIfnameSucceedsWithoutSideEffects) {
  // ADD refuses such a name, so nothing can exist by it: DEL succeeds (a
  // failing DEL fails on every retry and leaks the sandbox) and touches
  // nothing, however the name was meant to reach outside.
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  for (const std::string bad : {"../../x", "net:1", "net 1", "abcdefghijklmnop", ".."}) {
    Environment e = env("DEL");
    e["CNI_IFNAME"] = bad;
    RunResult r = run(e, conf());
    EXPECT_EQ(r.rc, 0) << bad << ": " << r.stdout_text;
    EXPECT_NE(r.stderr_text.find("nothing to delete"), std::string::npos) << r.stderr_text;
  }
  EXPECT_TRUE(fake_->calls() == std::vector<std::string>{"AddPort"}) << "sluiced must not be asked";
  EXPECT_EQ(fake_->ports().size(), 1u);
  EXPECT_EQ(heldIps().size(), 1u);
  EXPECT_EQ(run(env("DEL"), std::string("{oops")).code(), 6);
  ASSERT_EQ(run(env("DEL"), conf()).rc, 0);
  expectNothingLeft();
}

}  // namespace
}  // namespace sluice::cni::testing
