// See cni_fixture.h.
#include "tests/cni/cni_fixture.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "cni-plugin/dispatcher.h"
#include "cni-plugin/node_config.h"
#include "common/net_address.h"

namespace sluice::cni::testing {

namespace fs = std::filesystem;

void CniTest::SetUp() {
  std::string tmpl = (fs::temp_directory_path() / "sluice-cni-test.XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  dir_ = tmpl;
  api_socket_ = (dir_ / "sluice.sock").string();
  socket_dir_ = (dir_ / "vhost").string();
  data_dir_ = (dir_ / "records").string();
  ipam_dir_ = (dir_ / "host-local").string();
  bin_dir_ = (dir_ / "bin").string();
  devinfo_dir_ = (dir_ / "devinfo").string();
  devinfo_path_ = devinfo_dir_ + "/cni/net1-device.json";
  log_dir_ = (dir_ / "log").string();
  node_config_ = (dir_ / "node-cni.json").string();
  fs::create_directories(socket_dir_);
  fs::create_directories(bin_dir_);
  writeNodeConfig();
  fake_ = std::make_unique<FakeDataplane>(socket_dir_);
  server_ = std::make_unique<FakeServer>(*fake_, api_socket_);
}

void CniTest::TearDown() {
  server_.reset();
  fake_.reset();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

Environment CniTest::env(const std::string& command, const std::string& container_id,
                         const std::string& ifname) const {
  return {
      {"CNI_COMMAND", command},
      {"CNI_CONTAINERID", container_id},
      {"CNI_NETNS", "/var/run/netns/test-pod"},
      {"CNI_IFNAME", ifname},
      {"CNI_PATH", bin_dir_ + ":" + kSystemCniPath},
      {"CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=pod-a;K8S_POD_INFRA_CONTAINER_ID=" +
                       container_id},
      {"PATH", "/usr/bin:/bin"},
  };
}

nlohmann::json CniTest::conf(const std::string& version) const {
  return {
      {"cniVersion", version},
      {"name", "sluice-test"},
      {"type", "sluice-cni"},
      {"interfaceType", "vhost-user"},
      {"vhostMode", "server"},
      {"apiSocket", api_socket_},
      {"socketDir", socket_dir_},
      {"dataDir", data_dir_},
      {"mtu", 1500},
      {"timeoutMs", 2000},
      {"ipam",
       {{"type", "host-local"},
        {"dataDir", ipam_dir_},
        {"ranges", {{{{"subnet", "10.244.1.0/24"}, {"gateway", "10.244.1.1"}}}}},
        {"routes", {{{"dst", "10.244.0.0/16"}}}}}},
      {"runtimeConfig", {{"CNIDeviceInfoFile", devinfo_path_}}},
  };
}

void CniTest::writeNodeConfig(const nlohmann::json& extra) {
  // Most tests run without K8S_POD_UID, so their sockets go below the
  // shared socketDir: allowed here, refused by the plugin's own defaults.
  nlohmann::json node = {{"deviceInfoDir", devinfo_dir_},
                         {"logDir", log_dir_},
                         {"dataDirRoot", dir_.string()},
                         {"socketDirRoot", dir_.string()},
                         {"apiSockets", {api_socket_}},
                         {"allowSharedSocketDir", true}};
  node.update(extra);
  std::ofstream(node_config_) << node.dump();
}

RunResult CniTest::run(const Environment& e, const std::string& stdin_data) {
  Environment with_node = e;
  with_node.emplace(std::string(kNodeConfigEnv), node_config_);
  std::ostringstream out, err;
  RunResult r;
  r.rc = runPlugin({with_node, stdin_data, out, err});
  r.stdout_text = out.str();
  r.stderr_text = err.str();
  if (!r.stdout_text.empty()) r.out = nlohmann::json::parse(r.stdout_text, nullptr, false);
  return r;
}

void CniTest::writeIpamScript(const std::string& name, const std::string& body) {
  const std::string path = bin_dir_ + "/" + name;
  std::ofstream f(path);
  f << "#!/bin/sh\n"
    << "echo \"$CNI_COMMAND $CNI_CONTAINERID $CNI_IFNAME\" >> " << ipamLog() << "\n"
    << "cat > /dev/null\n"
    << body << "\n";
  f.close();
  chmod(path.c_str(), 0755);
}

std::string CniTest::ipamLog() const { return (dir_ / "fake-ipam.log").string(); }

std::vector<std::string> CniTest::ipamCommands() const {
  std::vector<std::string> out;
  std::ifstream log(ipamLog());
  std::string line;
  while (std::getline(log, line)) out.push_back(line.substr(0, line.find(' ')));
  return out;
}

std::vector<std::string> CniTest::heldIps() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(ipam_dir_) / "sluice-test", ec)) {
    const std::string name = entry.path().filename().string();
    if (Ipv4Address::parse(name) || Ipv6Address::parse(name)) out.push_back(name);
  }
  return out;
}

std::vector<std::string> CniTest::records() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(data_dir_) / "sluice-test", ec)) {
    out.push_back(entry.path().filename().string());
  }
  return out;
}

nlohmann::json CniTest::record(const std::string& container_id, const std::string& ifname) const {
  std::ifstream f(fs::path(data_dir_) / "sluice-test" / (container_id + ":" + ifname));
  if (!f) return nullptr;
  return nlohmann::json::parse(f, nullptr, false);
}

void CniTest::expectNothingLeft() {
  EXPECT_TRUE(fake_->ports().empty()) << "sluiced still has " << fake_->ports().size() << " port(s)";
  EXPECT_TRUE(heldIps().empty()) << "host-local still holds " << heldIps().size() << " address(es)";
  EXPECT_TRUE(records().empty()) << "attachment record left behind";
  EXPECT_FALSE(fs::exists(devinfo_path_)) << "device-info file left behind";
  std::error_code ec;
  EXPECT_TRUE(fs::is_empty(socket_dir_, ec)) << "pod socket directory left behind";
}

}  // namespace sluice::cni::testing
