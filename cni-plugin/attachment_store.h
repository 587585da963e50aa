// Per-network attachment records: <dataDir>/<network>/<containerID>:<ifname>,
// one small JSON file per attachment this plugin added. sluiced's ports carry
// no network name, so these records are how GC tells this network's ports
// from another network's (the spec's primary key is network name, container
// id, ifname), and they remember what DEL must clean (device-info path,
// socket directory) when a DEL arrives without the runtime config.
// ':' cannot occur in a valid container id or ifname, so names are unique.
// A record marked pending-delete stands for an attachment whose teardown
// could not be finished (sluiced unreachable, or the IPAM release failed):
// its address is still held, and a later invocation finishes it (see
// attachment_teardown.h). Files are read and written inside the dataDir with
// O_NOFOLLOW (file_util.h). Used by the single thread of the sluice-cni process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cni-plugin/confined_path.h"
#include "cni-plugin/netconf.h"

namespace sluice::cni {

struct AttachmentRecord {
  std::string container_id;
  std::string ifname;
  std::string ip;                // the IPv4 given to sluiced (empty: none)
  std::string socket_subdir;     // per-pod directory (or, with socket_link, link) under socketDir
  std::string device_info_file;  // empty when the runtime gave none
  // SR-IOV kernel mode only (empty otherwise): the pod's netns and what the
  // VF's netdev was in the host, so DEL and GC can send it back.
  std::string netns;
  std::string vf_host_name;
  std::string vf_host_mac;
  uint32_t vf_host_mtu = 0;
  // DEL (or ADD's undo) could not confirm that the port is gone, or could not
  // release the address: a later invocation must finish the teardown.
  bool pending_delete = false;
  uint32_t delete_attempts = 0;  // teardowns tried since; fewest go first
  // perPodSockets: where <socketDir>/<socket_subdir> links to (the pod's
  // emptyDir on the host) and the socket's path as the pod sees it; empty
  // when the socket lives below socketDir itself.
  std::string socket_link = {};
  std::string pod_socket_path = {};
  std::string ipv6 = {};  // the IPv6 given to sluiced (empty: none)
};

class AttachmentStore {
 public:
  // `data_dir` has been confined to the node's directory for it.
  AttachmentStore(const ConfinedPath& data_dir, const std::string& network);

  absl::Status put(const AttachmentRecord& record);
  // nullopt when there is no record (or it is unreadable: DEL goes on).
  std::optional<AttachmentRecord> get(const std::string& container_id, const std::string& ifname) const;
  absl::Status remove(const std::string& container_id, const std::string& ifname);
  // Every record of this network.
  absl::StatusOr<std::vector<AttachmentRecord>> list() const;

 private:
  ConfinedPath pathOf(const std::string& container_id, const std::string& ifname) const;

  ConfinedPath network_dir_;  // <dataDir>/<network>
};

}  // namespace sluice::cni
