// Unit tests of sluice-cni's pieces that need neither sluiced nor IPAM:
// netconf typing and defaults, CNI_ARGS, the pod directory derivation,
// result validation, error JSON and the delegate process runner.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cni-plugin/cni_env.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/cni_result.h"
#include "cni-plugin/netconf.h"
#include "cni-plugin/pod_paths.h"
#include "cni-plugin/process_runner.h"

namespace sluice::cni {
namespace {

using nlohmann::json;

TEST(NetConf, DefaultsApplyWhenFieldsAreAbsent) {
  absl::StatusOr<NetConf> c = parseNetConf(R"({"cniVersion":"1.1.0","name":"n","type":"sluice-cni"})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->interface_type, InterfaceType::kVhostUser);
  // sluiced connects to the pod's socket (and reconnects after a restart).
  EXPECT_EQ(c->vhost_mode, VhostMode::kClient);
  EXPECT_EQ(c->api_socket, "") << "the node config's first apiSockets entry";
  EXPECT_TRUE(c->per_pod_sockets);
  EXPECT_TRUE(c->source_validation);
  EXPECT_EQ(c->socket_dir, "/var/run/sluice/vhost");
  EXPECT_EQ(c->timeout_ms, 5000u);
  EXPECT_FALSE(c->mtu.has_value());
  EXPECT_EQ(c->vlan, 0);
  EXPECT_FALSE(c->ipam.has_value());
}

TEST(NetConf, TypedFieldsAndRuntimeConfigAreRead) {
  absl::StatusOr<NetConf> c = parseNetConf(R"({
    "cniVersion":"1.0.0","name":"n","type":"sluice-cni","interfaceType":"sriov","vhostMode":"client",
    "mtu":9000,"vlan":4094,"timeoutMs":250,"ipam":{"type":"host-local"},
    "runtimeConfig":{"CNIDeviceInfoFile":"/run/x.json","deviceID":"0000:01:00.2"},
    "args":{"cni":{}}, "capabilities":{"CNIDeviceInfoFile":true}, "multusExtra":1})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->interface_type, InterfaceType::kSriov);
  EXPECT_EQ(c->vhost_mode, VhostMode::kClient);
  EXPECT_EQ(c->mtu, 9000u);
  EXPECT_EQ(c->vlan, 4094);
  EXPECT_EQ(c->timeout_ms, 250u);
  EXPECT_EQ(c->ipam->type, "host-local");
  EXPECT_EQ(c->device_info_file, "/run/x.json");
  EXPECT_EQ(c->device_id, "0000:01:00.2");
  // Known-but-unused keys are not reported; foreign ones are.
  EXPECT_EQ(c->unknown_fields, std::vector<std::string>{"multusExtra"});
}

TEST(NetConf, VhostModeServerIsStillAccepted) {
  absl::StatusOr<NetConf> c =
      parseNetConf(R"({"cniVersion":"1.1.0","name":"n","type":"sluice-cni","vhostMode":"server"})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->vhost_mode, VhostMode::kServer);
  EXPECT_EQ(vhostModeName(c->vhost_mode), "server");
}

TEST(NetConf, NullOrEmptyVhostModeMeansTheDefaultClient) {
  for (const char* value : {"null", "\"\""}) {
    absl::StatusOr<NetConf> c = parseNetConf(
        std::string(R"({"cniVersion":"1.1.0","name":"n","type":"sluice-cni","vhostMode":)") + value + "}");
    ASSERT_TRUE(c.ok()) << value << ": " << c.status();
    EXPECT_EQ(c->vhost_mode, VhostMode::kClient) << value;
  }
}

TEST(NetConf, TopLevelDeviceIdWinsOverRuntimeConfig) {
  absl::StatusOr<NetConf> c = parseNetConf(
      R"({"cniVersion":"1.1.0","name":"n","type":"sluice-cni","deviceID":"A","runtimeConfig":{"deviceID":"B"}})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->device_id, "A");
}

TEST(NetConf, ValidAttachmentsAcceptBothKeys) {
  for (const char* key : {"cni.dev/valid-attachments", "cni.dev/attachments"}) {
    json doc = {{"cniVersion", "1.1.0"}, {"name", "n"}, {"type", "sluice-cni"},
                {key, {{{"containerID", "c1"}, {"ifname", "net1"}}}}};
    absl::StatusOr<NetConf> c = parseNetConf(doc.dump());
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE(c->valid_attachments.has_value());
    EXPECT_EQ(*c->valid_attachments, (std::vector<AttachmentId>{{"c1", "net1"}}));
  }
  json bad = {{"cniVersion", "1.1.0"}, {"name", "n"}, {"type", "sluice-cni"},
              {"cni.dev/valid-attachments", {{{"containerID", 5}}}}};
  EXPECT_EQ(cniCodeOf(parseNetConf(bad.dump()).status()), ErrorCode::kInvalidConfig);
}

TEST(NetConf, HugeInputIsRefusedUndecoded) {
  std::string big = R"({"cniVersion":"1.1.0","pad":")" + std::string(2 << 20, 'x') + "\"}";
  EXPECT_EQ(cniCodeOf(parseNetConf(big).status()), ErrorCode::kDecodeFailure);
}

TEST(NetConf, PeekVersionFallsBackToLatest) {
  EXPECT_EQ(peekCniVersion(R"({"cniVersion":"1.0.0","type":5})"), "1.0.0");
  EXPECT_EQ(peekCniVersion(R"({"cniVersion":"0.3.1","type":5})"), "0.3.1");
  EXPECT_EQ(peekCniVersion(R"({"cniVersion":"0.2.0"})"), "1.1.0");
  EXPECT_EQ(peekCniVersion("garbage"), "1.1.0");
}

TEST(NetConf, EverySpecVersionFrom030IsAcceptedAndNoOther) {
  for (const char* version : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    absl::StatusOr<NetConf> c = parseNetConf(
        std::string(R"({"cniVersion":")") + version + R"(","name":"n","type":"sluice-cni"})");
    ASSERT_TRUE(c.ok()) << version << ": " << c.status();
    EXPECT_EQ(c->cni_version, version);
  }
  for (const char* version : {"0.1.0", "0.2.0", "0.3", "1.2.0", "", "v1.0.0"}) {
    absl::StatusOr<NetConf> c = parseNetConf(
        std::string(R"({"cniVersion":")") + version + R"(","name":"n","type":"sluice-cni"})");
    ASSERT_FALSE(c.ok()) << version;
    EXPECT_EQ(cniCodeOf(c.status()), ErrorCode::kIncompatibleVersion) << version;
    EXPECT_NE(c.status().message().find("supports 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0"), std::string::npos)
        << c.status().message();
  }
}

TEST(CniEnvTest, ArgsAreParsedInOrder) {
  Environment e = {{"CNI_COMMAND", "DEL"}, {"CNI_CONTAINERID", "c"}, {"CNI_IFNAME", "eth0"},
                   {"CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAME=web-0;EMPTY="}};
  absl::StatusOr<CniEnv> env = parseEnv(e);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->arg("K8S_POD_NAME"), "web-0");
  EXPECT_EQ(env->arg("EMPTY"), "");
  EXPECT_FALSE(env->arg("K8S_POD_NAMESPACE").has_value());
  EXPECT_TRUE(env->netns.empty());  // DEL needs no netns
}

TEST(PodPaths, SubdirIsSafeShortAndDistinct) {
  const std::string a = socketSubdir("3f6940ab5ab43bc522569d15b23f8c1bbde1d7678b080398506924fc01d72755");
  const std::string b = socketSubdir("3f6940ab5ab43bc522569d15b23f8c1bbde1d7678b080398506924fc01d72756");
  EXPECT_EQ(a.substr(0, 13), "3f6940ab5ab4-");
  EXPECT_NE(a, b);
  EXPECT_LE(a.size(), 21u);
  for (const char* id : {"a.b.c", "x..y", "a"}) {
    const std::string s = socketSubdir(id);
    EXPECT_EQ(s.find('/'), std::string::npos);
    EXPECT_EQ(s.find('.'), std::string::npos) << s;
  }
}

TEST(PodPaths, IsUnderRejectsSiblingsAndEscapes) {
  EXPECT_TRUE(isUnder("/run/sluice/vhost/p/net1.sock", "/run/sluice/vhost"));
  EXPECT_TRUE(isUnder("/run/sluice/vhost/p/net1.sock", "/run/sluice/vhost/"));
  EXPECT_FALSE(isUnder("/run/sluice/vhostile/p.sock", "/run/sluice/vhost"));
  EXPECT_FALSE(isUnder("/run/sluice/vhost/../etc/x", "/run/sluice/vhost"));
  EXPECT_FALSE(isUnder("/run/sluice/vhost", "/run/sluice/vhost"));
}

TEST(ResultTest, ValidResultParsesAndFindsInterfaceAddress) {
  json doc = json::parse(R"({"cniVersion":"1.1.0",
    "interfaces":[{"name":"eth0","sandbox":"/ns/a"},{"name":"net1","sandbox":"/ns/a","mac":"02:00:00:00:00:01"}],
    "ips":[{"address":"fd00::1/64","interface":1},{"address":"10.0.0.5/24","gateway":"10.0.0.1","interface":1}],
    "routes":[{"dst":"0.0.0.0/0","gw":"10.0.0.1","table":100}],"dns":{}})");
  absl::StatusOr<Result> r = parseResult(doc, "test");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->findInterface("net1", "/ns/a"), 1u);
  EXPECT_FALSE(r->findInterface("net1", "/ns/other").has_value());
  std::optional<Ipv4Assignment> ip = r->ipv4ForInterface(1);
  ASSERT_TRUE(ip.has_value());
  EXPECT_EQ(ip->address.toString(), "10.0.0.5");
  EXPECT_EQ(ip->prefix_len, 24);
  EXPECT_EQ(ip->gateway->toString(), "10.0.0.1");
  // Unknown route fields pass through.
  EXPECT_EQ(r->toJson("1.1.0")["routes"][0]["table"], 100);
}

// A result as a 0.4.0 plugin writes it (0.3.0 and 0.3.1 look the same),
// with an IPv6 address beside the IPv4 one and interface fields that 0.4.0
// does not have (as a newer plugin's prevResult may carry them).
constexpr const char* k040Result = R"({"cniVersion":"0.4.0",
    "interfaces":[{"name":"net1","mac":"02:00:00:00:00:01","sandbox":"/ns/a","mtu":1450,"socketPath":"/s"}],
    "ips":[{"version":"4","address":"10.0.0.5/24","gateway":"10.0.0.1","interface":0},
           {"version":"6","address":"fd00::5/64","interface":0}],
    "routes":[{"dst":"0.0.0.0/0","gw":"10.0.0.1"}],"dns":{"nameservers":["10.0.0.53"]}})";

TEST(ResultTest, ResultsConvertBetweenVersionsAsTheSpecSays) {
  absl::StatusOr<Result> r = parseResult(json::parse(k040Result), "test");
  ASSERT_TRUE(r.ok()) << r.status();
  // Read in: the address family is dropped (1.0.0 has none).
  EXPECT_EQ(r->ips, json::parse(R"([{"address":"10.0.0.5/24","gateway":"10.0.0.1","interface":0},
                                    {"address":"fd00::5/64","interface":0}])"));
  ASSERT_TRUE(r->ipv4ForInterface(0).has_value());
  EXPECT_EQ(r->ipv4ForInterface(0)->address.toString(), "10.0.0.5");

  const json routes = json::parse(R"([{"dst":"0.0.0.0/0","gw":"10.0.0.1"}])");
  const json dns = json::parse(R"({"nameservers":["10.0.0.53"]})");
  const json ips_04x = json::parse(R"([{"version":"4","address":"10.0.0.5/24","gateway":"10.0.0.1","interface":0},
                                       {"version":"6","address":"fd00::5/64","interface":0}])");
  for (const char* version : {"0.3.0", "0.3.1", "0.4.0"}) {
    EXPECT_EQ(r->toJson(version),
              json({{"cniVersion", version},
                    {"interfaces", json::parse(R"([{"name":"net1","mac":"02:00:00:00:00:01","sandbox":"/ns/a"}])")},
                    {"ips", ips_04x},
                    {"routes", routes},
                    {"dns", dns}}))
        << version;
  }
  EXPECT_EQ(r->toJson("1.0.0"),
            json({{"cniVersion", "1.0.0"},
                  {"interfaces", json::parse(R"([{"name":"net1","mac":"02:00:00:00:00:01","sandbox":"/ns/a"}])")},
                  {"ips", r->ips},
                  {"routes", routes},
                  {"dns", dns}}));
  EXPECT_EQ(r->toJson("1.1.0"),
            json({{"cniVersion", "1.1.0"},
                  {"interfaces", json::parse(R"([{"name":"net1","mac":"02:00:00:00:00:01","sandbox":"/ns/a",
                                                  "mtu":1450,"socketPath":"/s"}])")},
                  {"ips", r->ips},
                  {"routes", routes},
                  {"dns", dns}}));
  // And back: a 0.4.0 result read again is the same result.
  absl::StatusOr<Result> again = parseResult(r->toJson("0.4.0"), "test");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->ips, r->ips);
}

TEST(ResultTest, AnAddressFamilyThatIsWrongIsRejected) {
  for (const char* family : {R"("6")", R"("5")", R"(4)", R"("")", R"(null)"}) {
    json doc = json::parse(k040Result);
    doc["ips"][0]["version"] = json::parse(family);
    absl::StatusOr<Result> r = parseResult(doc, "prevResult");
    ASSERT_FALSE(r.ok()) << family;
    EXPECT_EQ(cniCodeOf(r.status()), ErrorCode::kDecodeFailure);
    EXPECT_NE(r.status().message().find(R"(entry for 10.0.0.5/24 must have "version": "4")"), std::string::npos)
        << r.status().message();
  }
  json doc = json::parse(k040Result);
  doc["ips"][1]["version"] = "4";
  EXPECT_EQ(cniCodeOf(parseResult(doc, "prevResult").status()), ErrorCode::kDecodeFailure);
}

TEST(ResultTest, MalformedResultsAreRejected) {
  for (const char* text : {
           R"([])",
           R"({"ips":{}})",
           R"({"ips":[{"address":"10.0.0.5"}]})",
           R"({"ips":[{"address":"10.0.0.5/33"}]})",
           R"({"ips":[{"address":"10.0.0.5/24","gateway":"nope"}]})",
           R"({"ips":[{"address":"10.0.0.5/24","interface":0}]})",
           R"({"interfaces":[{"mac":"x"}]})",
           R"({"routes":[{"dst":"default"}]})",
           R"({"dns":[]})",
       }) {
    absl::StatusOr<Result> r = parseResult(json::parse(text), "t");
    EXPECT_FALSE(r.ok()) << text;
    EXPECT_EQ(cniCodeOf(r.status()), ErrorCode::kDecodeFailure) << text;
  }
}

TEST(ErrorJson, CarriesCodeMessageDetailsAndVersion) {
  absl::Status s = withPrefix(cniError(ErrorCode::kTryAgainLater, "busy", "stderr text"), "sluiced");
  json j = errorJson(s, "1.0.0");
  EXPECT_EQ(j, json({{"cniVersion", "1.0.0"}, {"code", 11}, {"msg", "sluiced: busy"}, {"details", "stderr text"}}));
  EXPECT_EQ(cniCodeOf(absl::InternalError("x")), ErrorCode::kInternal);
}

class ProcessRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sluice-proc.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string script(const std::string& body) {
    std::string path = dir_ + "/s.sh";
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  std::string dir_;
};

TEST_F(ProcessRunnerTest, PassesEnvAndStdinAndCapturesBothStreams) {
  std::string path = script("echo \"cmd=$CNI_COMMAND\"; cat; echo oops >&2; exit 3");
  std::string input(200000, 'i');  // larger than a pipe buffer
  absl::StatusOr<ProcessOutput> out =
      runProcess(path, {{"CNI_COMMAND", "ADD"}}, input, std::chrono::milliseconds(20000));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->exit_code, 3);
  EXPECT_EQ(out->out, "cmd=ADD\n" + input);
  EXPECT_EQ(out->err, "oops\n");
}

TEST_F(ProcessRunnerTest, ChildThatIgnoresStdinDoesNotHurt) {
  std::string path = script("exec 0<&-; echo done");
  absl::StatusOr<ProcessOutput> out = runProcess(path, {}, std::string(1 << 20, 'x'), std::chrono::milliseconds(20000));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->out, "done\n");
}

TEST_F(ProcessRunnerTest, NeverEndingChildIsKilledAtDeadline) {
  std::string path = script("exec sleep 1000");
  absl::StatusOr<ProcessOutput> out = runProcess(path, {}, "", std::chrono::milliseconds(100));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(ProcessRunnerTest, MissingExecutableIsAnError) {
  EXPECT_FALSE(runProcess(dir_ + "/absent", {}, "", std::chrono::milliseconds(1000)).ok());
}

}  // namespace
}  // namespace sluice::cni
