// Test fixture for running the whole sluice-cni dispatcher in-process: a
// temporary directory holding the fake sluiced's API socket, the vhost socket
// directory, the attachment records, host-local's data directory, a bin
// directory for fake IPAM scripts, the device-info path, the log directory
// and the node config that allows those directories; helpers to build
// the CNI environment and config, run a verb and check nothing was left.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cni-plugin/cni_env.h"
#include "tests/cni/fake_dataplane.h"

namespace sluice::cni::testing {

// Where Debian's containernetworking-plugins puts host-local.
inline constexpr const char* kSystemCniPath = "/usr/lib/cni";
inline constexpr const char* kContainerId = "3f6940ab5ab43bc522569d15b23f8c1bbde1d7678b080398506924fc01d72755";

struct RunResult {
  int rc = -1;
  nlohmann::json out;   // stdout parsed (null when empty)
  std::string stdout_text;
  std::string stderr_text;
  int code() const { return out.is_object() && out.contains("code") ? out["code"].get<int>() : 0; }
  std::string msg() const { return out.is_object() && out.contains("msg") ? out["msg"].get<std::string>() : ""; }
};

class CniTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // CNI_* variables for `command` on attachment (container_id, ifname).
  Environment env(const std::string& command, const std::string& container_id = kContainerId,
                  const std::string& ifname = "net1") const;
  // A valid config using host-local IPAM in 10.244.1.0/24.
  nlohmann::json conf(const std::string& version = "1.1.0") const;
  // Runs the plugin in-process; the fixture's node config is added to `e`
  // unless `e` names one itself.
  RunResult run(const Environment& e, const std::string& stdin_data);
  RunResult run(const Environment& e, const nlohmann::json& config) { return run(e, config.dump()); }

  // Writes an executable script <bin>/<name> that logs "$CNI_COMMAND
  // $CNI_CONTAINERID $CNI_IFNAME" to ipamLog() and then runs `body`.
  void writeIpamScript(const std::string& name, const std::string& body);
  std::string ipamLog() const;
  // The CNI_COMMAND of each fake IPAM invocation so far, in order.
  std::vector<std::string> ipamCommands() const;

  // IPs (IPv4 and IPv6) host-local currently holds for network "sluice-test".
  std::vector<std::string> heldIps() const;
  // Attachment records of network "sluice-test".
  std::vector<std::string> records() const;
  // The record of an attachment of network "sluice-test" (null when none).
  nlohmann::json record(const std::string& container_id, const std::string& ifname = "net1") const;
  // Writes the node config the plugin reads (the fixture's directories plus `extra` keys).
  void writeNodeConfig(const nlohmann::json& extra = nlohmann::json::object());
  // Asserts no port, no held IP, no record, no device-info file, no pod socket dir.
  void expectNothingLeft();

  std::filesystem::path dir_;
  std::string api_socket_, socket_dir_, data_dir_, ipam_dir_, bin_dir_, devinfo_path_;
  std::string devinfo_dir_;  // the node config's deviceInfoDir
  std::string log_dir_;      // the node config's logDir
  std::string node_config_;  // the node config file
  std::unique_ptr<FakeDataplane> fake_;
  std::unique_ptr<FakeServer> server_;
};

}  // namespace sluice::cni::testing
