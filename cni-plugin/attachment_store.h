// Per-network attachment records: <dataDir>/<network>/<containerID>:<ifname>,
// one small JSON file per attachment this plugin added. sluiced's ports carry
// no network name, so these records are how GC tells this network's ports
// from another network's (the spec's primary key is network name, container
// id, ifname), and they remember what DEL must clean (device-info path,
// socket directory) when a DEL arrives without the runtime config.
// ':' cannot occur in a valid container id or ifname, so names are unique.
// Used by the single thread of the sluice-cni process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni-plugin/netconf.h"

namespace sluice::cni {

struct AttachmentRecord {
  std::string container_id;
  std::string ifname;
  std::string ip;                // the IPv4 given to sluiced
  std::string socket_subdir;     // per-pod directory under socketDir
  std::string device_info_file;  // empty when the runtime gave none
  // SR-IOV kernel mode only (empty otherwise): the pod's netns and what the
  // VF's netdev was in the host, so DEL and GC can send it back.
  std::string netns;
  std::string vf_host_name;
  std::string vf_host_mac;
  uint32_t vf_host_mtu = 0;
};

class AttachmentStore {
 public:
  AttachmentStore(std::string data_dir, std::string network);

  absl::Status put(const AttachmentRecord& record);
  // nullopt when there is no record (or it is unreadable: DEL goes on).
  std::optional<AttachmentRecord> get(const std::string& container_id, const std::string& ifname) const;
  absl::Status remove(const std::string& container_id, const std::string& ifname);
  // Every record of this network.
  absl::StatusOr<std::vector<AttachmentRecord>> list() const;
  // Every attachment any network under data_dir has a record for.
  absl::StatusOr<std::vector<AttachmentId>> claimedByAnyNetwork() const;

 private:
  std::string pathOf(const std::string& container_id, const std::string& ifname) const;

  std::string data_dir_;     // root shared by all networks
  std::string network_dir_;  // data_dir_/<network>
};

}  // namespace sluice::cni
