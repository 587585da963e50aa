// See attachment_teardown.h.
#include "cni-plugin/attachment_teardown.h"

#include <algorithm>

#include "cni-plugin/cni_error.h"
#include "cni-plugin/device_info.h"
#include "cni-plugin/node_policy.h"
#include "cni-plugin/sriov_netdev.h"
#include "cni-plugin/text.h"

namespace sluice::cni {

TeardownResult teardownAttachment(CommandContext& c, AttachmentRecord record, std::string_view netns) {
  TeardownResult out;
  auto note = [&out, &c](const absl::Status& s) {
    if (s.ok()) return;
    c.log.error(std::string(s.message()));
    if (out.error.ok()) out.error = s;
  };
  auto keepPending = [&] {
    record.delete_attempts = record.pending_delete ? record.delete_attempts + 1 : 0;
    record.pending_delete = true;
    note(withPrefix(c.store.put(record), "attachment record"));
    return out;
  };
  const std::string who = cat(record.container_id, "/", record.ifname);

  // 1. The device-info file ADD wrote; the record's copy of the path is
  // held to the node's directory like the network config's.
  absl::StatusOr<std::optional<ConfinedPath>> info = confineDeviceInfoFile(record.device_info_file, c.node);
  if (!info.ok()) {
    c.log.warn(cat(info.status().message(), "; not touched"));
  } else if (*info) {
    note(withPrefix(removeDeviceInfo(**info), "device-info"));
  }

  // 1b. SR-IOV kernel mode: the VF's netdev home before sluiced resets the VF.
  if (!record.vf_host_name.empty()) {
    HostNetdev original{record.vf_host_name, MacAddress::parse(record.vf_host_mac).value_or(MacAddress{}),
                        record.vf_host_mtu};
    absl::Status s = returnToHost(netns.empty() ? record.netns : std::string(netns), record.ifname, original, c.log);
    if (!s.ok()) {
      note(cniError(ErrorCode::kInternal, cat("VF netdev ", record.ifname, ": ", sv(s.message()))));
      return keepPending();
    }
  }

  // 2. The port. An id sluiced refuses as invalid can hold no port.
  absl::StatusOr<bool> deleted = c.dataplane.deletePort(toAttachment(record.container_id, record.ifname));
  bool port_gone = true;
  if (deleted.ok()) {
    c.log.info(cat(who, *deleted ? ": port deleted" : ": sluiced had no port for this attachment"));
  } else if (deleted.status().code() == absl::StatusCode::kInvalidArgument) {
    c.log.info(cat(who, ": sluiced refuses this attachment id, so it holds no port by it (",
                   deleted.status().message(), ")"));
  } else if (isUnreachable(deleted.status())) {
    c.log.warn(cat(who, ": ", deleted.status().message(), "; delete pending, address kept until sluiced answers"));
    out.unreachable = true;
    port_gone = false;
  } else {
    note(deleted.status());
    port_gone = false;
  }

  // 3. The socket and the pod's socket directory (sluiced's socket is
  // closed, or the pod that used it is going away); with perPodSockets the
  // link to the pod's emptyDir instead (each call leaves the other's kind
  // of entry alone).
  removePodSocket(c, record.socket_subdir, record.ifname);
  removePodSocketLink(c, record.socket_subdir, record.socket_link);
  if (!port_gone) return keepPending();

  // 4. The address, now that no port can route it.
  if (c.ipam != nullptr) {
    if (absl::Status s = c.ipam->del(c.stdin_data, std::make_pair(record.container_id, record.ifname)); !s.ok()) {
      note(s);
      return keepPending();
    }
  }

  // 5. The record, last.
  if (absl::Status s = c.store.remove(record.container_id, record.ifname); !s.ok()) {
    note(s);
    return out;
  }
  out.finished = true;
  return out;
}

void retryPendingDeletes(CommandContext& c, const AttachmentId& skip) {
  absl::StatusOr<std::vector<AttachmentRecord>> records = c.store.list();
  if (!records.ok()) {
    c.log.warn(cat("pending deletes: ", records.status().message()));
    return;
  }
  std::vector<AttachmentRecord> pending;
  for (AttachmentRecord& r : *records) {
    if (r.pending_delete && AttachmentId{r.container_id, r.ifname} != skip) pending.push_back(std::move(r));
  }
  // Fewest attempts first, so one that keeps failing does not starve the rest.
  std::sort(pending.begin(), pending.end(), [](const AttachmentRecord& a, const AttachmentRecord& b) {
    return a.delete_attempts < b.delete_attempts;
  });
  if (pending.size() > kMaxPendingDeletesPerRun) pending.resize(kMaxPendingDeletesPerRun);
  for (const AttachmentRecord& r : pending) {
    c.log.info(cat("finishing the pending delete of ", r.container_id, "/", r.ifname));
    if (teardownAttachment(c, r, "").unreachable) return;
  }
}

}  // namespace sluice::cni
