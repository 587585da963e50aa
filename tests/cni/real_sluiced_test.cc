// sluice-cni against the real sluiced (a child process on DPDK vdevs, via the
// integration harness), pinning the gRPC behaviours the plugin relies on:
// AddPort names the vhost-user socket <socket-dir>/<socket_subdir>/
// <ifname>.sock (and creates it in server mode only) and derives the MAC; DeletePort of an unknown attachment
// succeeds; ListPorts reports IP and MAC; Health is ready; an IP outside the
// pod CIDR is FAILED_PRECONDITION; and DEL succeeds while sluiced is down.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cni-plugin/dispatcher.h"
#include "cni-plugin/node_config.h"
#include "tests/integration/sluiced_process.h"

namespace sluice::cni {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json readJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

class RealSluicedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    test::SluicedOptions options;
    options.pod_cidr = "10.250.0.0/24";
    sluiced_ = test::SluicedProcess::start(options, &error);
    ASSERT_NE(sluiced_, nullptr) << error;
    dir_ = sluiced_->dir() + "/cni";
    fs::create_directories(dir_);
    // The node config allows this test's directories for the device-info
    // file and the records, sluiced's for the sockets (below it: no pod UID
    // here) and its API socket.
    std::ofstream(dir_ + "/node-cni.json") << json{{"deviceInfoDir", dir_},
                                                   {"dataDirRoot", dir_},
                                                   {"socketDirRoot", sluiced_->socketDir()},
                                                   {"allowSharedSocketDir", true},
                                                   {"apiSockets", {sluiced_->apiSocket()}}}
                                                  .dump();
  }
  void TearDown() override {
    sluiced_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  json conf(const std::string& version, const std::string& subnet = "10.250.0.0/24",
            const std::string& gateway = "10.250.0.1") const {
    return {{"cniVersion", version},
            {"name", "real"},
            {"type", "sluice-cni"},
            {"apiSocket", sluiced_->apiSocket()},
            {"socketDir", sluiced_->socketDir()},
            {"dataDir", dir_ + "/records"},
            {"ipam",
             {{"type", "host-local"},
              {"dataDir", dir_ + "/ipam"},
              {"ranges", {{{{"subnet", subnet}, {"gateway", gateway}}}}}}},
            {"runtimeConfig", {{"CNIDeviceInfoFile", dir_ + "/devinfo.json"}}}};
  }
  Environment env(const std::string& command, const std::string& cid = "c0ffee0123456789") const {
    return {{"CNI_COMMAND", command}, {"CNI_CONTAINERID", cid}, {"CNI_NETNS", "/var/run/netns/p"},
            {"CNI_IFNAME", "net1"}, {"CNI_PATH", "/usr/lib/cni"},
            {"CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0"}};
  }
  std::pair<int, json> run(const Environment& e, const json& c) {
    std::ostringstream out, err;
    const std::string in = c.dump();
    Environment with_node = e;
    with_node.emplace(std::string(kNodeConfigEnv), dir_ + "/node-cni.json");
    int rc = runPlugin({with_node, in, out, err});
    json parsed = out.str().empty() ? json() : json::parse(out.str(), nullptr, false);
    return {rc, parsed};
  }

  // The plugin's attachment records on disk.
  size_t recordFiles() const {
    size_t n = 0;
    if (fs::exists(dir_ + "/records"))
      for (const auto& e : fs::recursive_directory_iterator(dir_ + "/records")) n += e.is_regular_file() ? 1 : 0;
    return n;
  }

  std::unique_ptr<test::SluicedProcess> sluiced_;
  std::string dir_;
};

TEST_F(RealSluicedTest, AddCheckStatusDelAgainstSluicedInServerMode) {
  for (const std::string version : {"1.0.0", "1.1.0"}) {
    json server = conf(version);
    server["vhostMode"] = "server";
    auto [rc, result] = run(env("ADD"), server);
    ASSERT_EQ(rc, 0) << result.dump();
    const v1::ListPortsResponse ports = sluiced_->ports();
    ASSERT_EQ(ports.ports_size(), 1);
    const v1::Port& port = ports.ports(0);
    EXPECT_EQ(result["ips"][0]["address"], port.ip() + "/24");
    EXPECT_EQ(port.pod_name(), "web-0");
    EXPECT_EQ(result["interfaces"][0]["mac"], port.mac());
    // sluiced (vhost server) created the socket where the plugin said.
    struct stat st {};
    ASSERT_EQ(stat(port.socket_path().c_str(), &st), 0) << port.socket_path();
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(fs::path(port.socket_path()).parent_path().parent_path(), fs::path(sluiced_->socketDir()));
    if (version == "1.1.0") {
      EXPECT_EQ(result["interfaces"][0]["socketPath"], port.socket_path());
    }

    EXPECT_EQ(port.vhost_mode(), v1::VHOST_MODE_SERVER);
    EXPECT_EQ(readJson(dir_ + "/devinfo.json")["vhost-user"],
              json({{"mode", "client"}, {"path", port.socket_path()}}));

    json check = server;
    check["prevResult"] = result;
    EXPECT_EQ(run(env("CHECK"), check).first, 0);
    if (version == "1.1.0") {
      EXPECT_EQ(run({{"CNI_COMMAND", "STATUS"}}, server).first, 0);
    }

    EXPECT_EQ(run(env("DEL"), server).first, 0);
    EXPECT_EQ(sluiced_->ports().ports_size(), 0);
    EXPECT_FALSE(fs::exists(port.socket_path()));
    EXPECT_EQ(run(env("DEL"), server).first, 0) << "repeated DEL";
  }
}

TEST_F(RealSluicedTest, AddCheckDelInTheDefaultClientMode) {
  // No vhostMode: sluiced's port is a vhost-user client, so no socket exists
  // until the pod's application (told by the device-info that it serves)
  // creates it in the pod directory ADD made.
  auto [rc, result] = run(env("ADD"), conf("1.1.0"));
  ASSERT_EQ(rc, 0) << result.dump();
  const v1::ListPortsResponse ports = sluiced_->ports();
  ASSERT_EQ(ports.ports_size(), 1);
  const v1::Port& port = ports.ports(0);
  EXPECT_EQ(port.vhost_mode(), v1::VHOST_MODE_CLIENT);
  EXPECT_EQ(result["interfaces"][0]["socketPath"], port.socket_path());
  EXPECT_EQ(fs::path(port.socket_path()).parent_path().parent_path(), fs::path(sluiced_->socketDir()));
  EXPECT_TRUE(fs::is_directory(fs::path(port.socket_path()).parent_path()));
  EXPECT_FALSE(fs::exists(port.socket_path())) << "sluiced, the client, made the pod's socket";
  EXPECT_EQ(readJson(dir_ + "/devinfo.json"),
            json({{"type", "vhost-user"},
                  {"version", "1.1.0"},
                  {"ips", {port.ip()}},
                  {"vhost-user", {{"mode", "server"}, {"path", port.socket_path()}}}}));

  json check = conf("1.1.0");
  check["prevResult"] = result;
  EXPECT_EQ(run(env("CHECK"), check).first, 0);
  EXPECT_EQ(run(env("DEL"), conf("1.1.0")).first, 0);
  EXPECT_EQ(sluiced_->ports().ports_size(), 0);
  EXPECT_FALSE(fs::exists(fs::path(port.socket_path()).parent_path()));
  EXPECT_FALSE(fs::exists(dir_ + "/devinfo.json"));
}

TEST_F(RealSluicedTest, AddressOutsidePodCidrIsInvalidConfigAndUndone) {
  auto [rc, result] = run(env("ADD"), conf("1.1.0", "10.99.0.0/24", "10.99.0.1"));
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(result["code"], 7) << result.dump();
  EXPECT_EQ(sluiced_->ports().ports_size(), 0);
  EXPECT_FALSE(fs::exists(dir_ + "/devinfo.json"));
}

TEST_F(RealSluicedTest, GcRemovesStaleAttachmentKeepsValid) {
  ASSERT_EQ(run(env("ADD", "keep"), conf("1.1.0")).first, 0);
  ASSERT_EQ(run(env("ADD", "stale"), conf("1.1.0")).first, 0);
  json gc = conf("1.1.0");
  gc["cni.dev/valid-attachments"] = {{{"containerID", "keep"}, {"ifname", "net1"}}};
  EXPECT_EQ(run({{"CNI_COMMAND", "GC"}, {"CNI_PATH", "/usr/lib/cni"}}, gc).first, 0);
  const v1::ListPortsResponse ports = sluiced_->ports();
  ASSERT_EQ(ports.ports_size(), 1);
  EXPECT_EQ(ports.ports(0).attachment().container_id(), "keep");
}

TEST_F(RealSluicedTest, DelWhileSluicedIsDownSucceeds) {
  ASSERT_EQ(run(env("ADD"), conf("1.1.0")).first, 0);
  sluiced_->stop();
  EXPECT_EQ(run(env("DEL"), conf("1.1.0")).first, 0);
  auto [rc, result] = run({{"CNI_COMMAND", "STATUS"}}, conf("1.1.0"));
  EXPECT_EQ(result["code"], 50);
}

// What the runtime sees while sluiced is down (an upgrade, a crash): DEL
// succeeds at once (kubelet must be able to delete the pod), the port is gone
// once sluiced is back (the pod's netns went with the pod, so the restored
// port is collected at start), and the address is released by the next
// invocation that reaches sluiced.
TEST_F(RealSluicedTest, DelWhileSluicedIsDownLeavesNoPortOnceItReturns) {
  // Stands in for the pod's netns file: sluiced only ever stat()s it.
  const std::string netns = dir_ + "/netns-web-0";
  std::ofstream(netns).put('\n');
  Environment add = env("ADD");
  add["CNI_NETNS"] = netns;
  auto [rc, result] = run(add, conf("1.1.0"));
  ASSERT_EQ(rc, 0) << result.dump();
  ASSERT_EQ(sluiced_->ports().ports_size(), 1);
  const std::string address = result["ips"][0]["address"];
  const std::string ip = address.substr(0, address.find('/'));
  const fs::path ipam_file = fs::path(dir_) / "ipam" / "real" / ip;
  ASSERT_TRUE(fs::exists(ipam_file));

  sluiced_->stop();
  Environment del = env("DEL");
  del["CNI_NETNS"] = netns;
  EXPECT_EQ(run(del, conf("1.1.0")).first, 0);
  EXPECT_TRUE(fs::exists(ipam_file)) << "released before sluiced confirmed the port gone";
  fs::remove(netns);  // the runtime removes the pod's netns after DEL

  std::string error;
  ASSERT_TRUE(sluiced_->restart(&error)) << error;
  EXPECT_EQ(sluiced_->ports().ports_size(), 0) << sluiced_->log();
  // The next call of this network that reaches sluiced finishes the DEL
  // (it needs CNI_PATH to run the IPAM plugin's release).
  EXPECT_EQ(run({{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", "/usr/lib/cni"}}, conf("1.1.0")).first, 0);
  EXPECT_FALSE(fs::exists(ipam_file));
  EXPECT_EQ(recordFiles(), 0u);
}

// ADD while sluiced is down fails with the spec's "try again later" and
// leaves nothing: no address held, no record, no device-info file.
TEST_F(RealSluicedTest, AddWhileSluicedIsDownFailsAndLeavesNothing) {
  sluiced_->stop();
  auto [rc, result] = run(env("ADD"), conf("1.1.0"));
  EXPECT_NE(rc, 0);
  EXPECT_EQ(result["code"], 11) << result.dump();
  std::vector<std::string> held;
  if (fs::exists(dir_ + "/ipam/real"))
    for (const auto& e : fs::directory_iterator(dir_ + "/ipam/real"))
      if (e.path().filename().string().rfind("10.250.", 0) == 0) held.push_back(e.path().filename());
  EXPECT_TRUE(held.empty()) << held[0];
  EXPECT_FALSE(fs::exists(dir_ + "/devinfo.json"));
  EXPECT_EQ(recordFiles(), 0u);
}

}  // namespace
}  // namespace sluice::cni
