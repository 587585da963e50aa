// DEL: idempotent and tolerant. Repeated DELs, a missing or empty CNI_NETNS,
// an attachment sluiced never heard of, a missing record, an ifname or a
// CNI_ARGS that ADD would have refused: all succeed.
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
//      Unknown attachment, or one sluiced refuses as an invalid id = the
//      port is gone. sluiced unreachable = logged, not an error: kubelet
//      must be able to delete the pod.
//   3. the socket file and the per-pod socket directory, or (perPodSockets)
//      the link to the pod's emptyDir: after DeletePort, since in server
//      mode sluiced unlinks its socket through that link.
//   4. IPAM release, only once sluiced confirmed the port is gone: releasing
//      earlier would let the next pod be given an address sluiced still
//      routes to the old port (the reference plugins' bridge/ptp
//      teardown-order bugs).
//   5. the record, last. When 2 or 4 did not succeed it is kept, marked
//      pending-delete with the address still held, and the next ADD, DEL,
//      GC or STATUS of this network that reaches sluiced finishes it
//      (attachment_teardown.h): containerd never sends CNI GC, so nothing
//      else would.
// A step that fails for another reason does not stop the later ones (but a
// port not confirmed gone keeps its address); the first such error is
// returned so the runtime retries DEL.
#include "cni-plugin/attachment_teardown.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/commands.h"
#include "cni-plugin/device_info.h"
#include "cni-plugin/pod_paths.h"
#include "cni-plugin/pod_socket_volume.h"
#include "cni-plugin/text.h"

namespace sluice::cni {

absl::Status runDel(CommandContext& c) {
  const CniEnv& env = c.env;
  // Without a record (lost, or ADD never got that far) DEL still does what
  // it can for the attachment: the port, the socket and the address.
  // With perPodSockets and the pod's UID, ADD's link has its own name.
  const bool linked = c.conf.per_pod_sockets && c.conf.interface_type == InterfaceType::kVhostUser &&
                      env.arg(kPodUidArg).has_value();
  const std::string subdir = linked ? podSocketLinkName(env.container_id, env.ifname) : socketSubdir(env.container_id);
  AttachmentRecord record = c.store.get(env.container_id, env.ifname)
                                .value_or(AttachmentRecord{env.container_id, env.ifname, "", subdir, "", "", "", "", 0});

  // 1. The runtime's path (it passes the same runtimeConfig as at ADD); the
  // one ADD recorded goes in the teardown, should they differ.
  absl::Status runtime_info;
  if (c.device_info_file) runtime_info = withPrefix(removeDeviceInfo(*c.device_info_file), "device-info");
  if (!runtime_info.ok()) c.log.error(std::string(runtime_info.message()));

  // 1b-5.
  TeardownResult done = teardownAttachment(c, std::move(record), env.netns);
  if (!done.error.ok()) return done.error;
  return runtime_info;
}

}  // namespace sluice::cni
