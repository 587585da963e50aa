// DEL: idempotent and tolerant. Repeated DELs, a missing or empty CNI_NETNS,
// an attachment sluiced never heard of, a missing record: all succeed.
//
// Order (the reverse of ADD), and why:
//   1. device-info file: the pod-facing pointer to the socket goes first, so
//      nothing advertises a socket that is being torn down.
//   1b. SR-IOV kernel mode: the VF's netdev back to the host namespace under
//      its own name, MAC and MTU, before sluiced resets the VF and may hand
//      it to another pod. A netns that is gone is fine (the kernel returns
//      a physical VF itself); a netdev that cannot be moved back stops the
//      DEL here with an error, so the runtime retries while the VF stays
//      allocated (better than a VF in the pool whose netdev is elsewhere).
//   2. sluiced DeletePort: closes the socket and stops routing the IP.
//      Unknown attachment = success. sluiced unreachable = logged, not an
//      error: kubelet must be able to delete the pod, and sluiced itself
//      removes attachments whose netns is gone when it comes back (the
//      record is kept, so a later GC retries the delete too).
//   3. the socket file and the per-pod socket directory.
//   4. IPAM release, only after the port is gone: releasing first would let
//      the next pod be given an address sluiced still routes to the old
//      port (the reference plugins' bridge/ptp teardown-order bugs).
//   5. the record, last, so a DEL that fails half-way leaves what a retry
//      or a GC needs to finish the job.
// A step that fails for another reason does not stop the later ones; the
// first such error is returned so the runtime retries DEL.
#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/commands.h"
#include "cni-plugin/device_info.h"
#include "cni-plugin/pod_paths.h"
#include "cni-plugin/sriov_netdev.h"

namespace sluice::cni {

absl::Status runDel(CommandContext& c) {
  const CniEnv& env = c.env;
  const std::optional<AttachmentRecord> record = c.store.get(env.container_id, env.ifname);
  absl::Status first_error;
  auto note = [&first_error, &c](const absl::Status& s) {
    if (s.ok()) return;
    c.log.error(std::string(s.message()));
    if (first_error.ok()) first_error = s;
  };

  // 1. The runtime's path (it passes the same runtimeConfig as at ADD) and
  // the one ADD recorded, should they differ or the runtime omit it.
  if (!c.conf.device_info_file.empty()) note(withPrefix(removeDeviceInfo(c.conf.device_info_file), "device-info"));
  if (record && !record->device_info_file.empty() && record->device_info_file != c.conf.device_info_file) {
    note(withPrefix(removeDeviceInfo(record->device_info_file), "device-info"));
  }

  // 1b.
  if (record && !record->vf_host_name.empty()) {
    HostNetdev original{record->vf_host_name, MacAddress::parse(record->vf_host_mac).value_or(MacAddress{}),
                        record->vf_host_mtu};
    absl::Status s = returnToHost(env.netns.empty() ? record->netns : env.netns, env.ifname, original, c.log);
    if (!s.ok()) {
      note(cniError(ErrorCode::kInternal, cat("VF netdev ", env.ifname, ": ", sv(s.message()))));
      return first_error;
    }
  }

  // 2.
  bool keep_record = false;
  absl::StatusOr<bool> deleted = c.dataplane.deletePort(toAttachment(env.container_id, env.ifname));
  if (!deleted.ok() && isUnreachable(deleted.status())) {
    c.log.warn(cat(deleted.status().message(),
                            "; port left for sluiced to reconcile when it returns"));
    keep_record = true;
  } else if (!deleted.ok()) {
    note(deleted.status());
    keep_record = true;
  } else {
    c.log.info(*deleted ? "port deleted" : "sluiced had no port for this attachment");
  }

  // 3.
  removePodSocket(c.conf, record ? record->socket_subdir : socketSubdir(env.container_id), env.ifname, c.log);

  // 4.
  if (c.ipam != nullptr) {
    absl::Status s = c.ipam->del(c.stdin_data);
    if (!s.ok()) keep_record = true;
    note(s);
  }

  // 5.
  if (!keep_record) note(c.store.remove(env.container_id, env.ifname));
  return first_error;
}

}  // namespace sluice::cni
