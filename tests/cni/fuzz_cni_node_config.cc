// libFuzzer target for the node config (/etc/sluice/cni.json): the node
// administrator's file, but the one that bounds what every network config
// may make the root-run plugin do, so a malformed one must be refused with a
// value, never crash, throw or hang, and an accepted one must hold only
// normalised absolute directories and a non-empty list of API sockets. Each
// accepted config is then applied to a network config the way the
// dispatcher and ADD apply it.
// Built only with SLUICE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cni-plugin/netconf.h"
#include "cni-plugin/node_config.h"
#include "cni-plugin/node_policy.h"

namespace {

void require(bool ok) {
  if (!ok) std::abort();  // an accepted node config broke its own contract
}

bool isNormalisedAbsolute(const std::string& path) {
  return !path.empty() && path[0] == '/' && path.find("//") == std::string::npos &&
         path.find("/./") == std::string::npos && path.find("/../") == std::string::npos &&
         (path.size() == 1 || path.back() != '/');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<sluice::cni::NodeConfig> node = sluice::cni::parseNodeConfig(text, "fuzz");
  if (!node.ok()) return 0;
  for (const std::string* dir : {&node->device_info_dir, &node->log_dir, &node->data_dir_root,
                                 &node->socket_dir_root, &node->kubelet_dir}) {
    require(isNormalisedAbsolute(*dir));
  }
  require(!node->api_sockets.empty());
  for (const std::string& socket : node->api_sockets) {
    require(isNormalisedAbsolute(socket) && socket.size() <= sluice::cni::kMaxSocketPathLen);
  }
  sluice::cni::NetConf conf;
  conf.cni_version = "1.1.0";
  conf.name = "fuzz";
  conf.log_file = "/var/log/sluice/fuzz.log";
  conf.source_validation = false;
  (void)sluice::cni::confineDataDir(conf, *node);
  (void)sluice::cni::confineSocketDir(conf, *node);
  (void)sluice::cni::confineLogFile(conf, *node);
  (void)sluice::cni::confineDeviceInfoFile("/var/run/k8s.cni.cncf.io/devinfo/cni/x.json", *node);
  (void)sluice::cni::checkVfCaps(conf, *node);
  require(sluice::cni::checkSourceValidation(conf, *node).ok() == node->allow_source_validation_off);
  require(sluice::cni::checkSharedSocketDir(*node, "fuzz").ok() == node->allow_shared_socket_dir);
  absl::StatusOr<std::string> api = sluice::cni::confineApiSocket(conf, *node);
  require(api.ok() && *api == node->api_sockets.front());
  conf.api_socket = "/var/run/sluice/sluice.sock";
  (void)sluice::cni::confineApiSocket(conf, *node);
  return 0;
}
