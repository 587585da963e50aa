// GC (spec 1.1): remove every attachment of this network that is not in
// "cni.dev/valid-attachments". This network's attachments are those with a
// record under <dataDir>/<network> (sluiced's ports carry no network name);
// a sluiced port that no network's record claims is an orphan (its record
// was lost) and is removed as well. Then the IPAM delegate gets its own GC
// when it speaks 1.1.0. Every stale attachment is cleaned like a DEL, in the
// same order; an error does not stop the others, the first one is returned.
#include <algorithm>
#include <set>

#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/commands.h"
#include "cni-plugin/device_info.h"
#include "cni-plugin/pod_paths.h"
#include "cni-plugin/sriov_netdev.h"

namespace sluice::cni {

absl::Status runGc(CommandContext& c) {
  if (!c.conf.valid_attachments) {
    return cniError(ErrorCode::kInvalidConfig, "network config: \"cni.dev/valid-attachments\" is required for GC");
  }
  const std::set<AttachmentId> valid(c.conf.valid_attachments->begin(), c.conf.valid_attachments->end());
  // Without sluiced nothing can be judged safely: leave everything for a
  // later GC rather than release addresses of ports that may still exist.
  absl::StatusOr<std::vector<v1::Port>> ports = c.dataplane.listPorts();
  if (!ports.ok()) return ports.status();
  absl::StatusOr<std::vector<AttachmentRecord>> records = c.store.list();
  if (!records.ok()) return records.status();
  absl::StatusOr<std::vector<AttachmentId>> claimed_list = c.store.claimedByAnyNetwork();
  if (!claimed_list.ok()) return claimed_list.status();
  const std::set<AttachmentId> claimed(claimed_list->begin(), claimed_list->end());

  absl::Status first_error;
  auto note = [&first_error, &c](const absl::Status& s) {
    if (s.ok()) return;
    c.log.error(std::string(s.message()));
    if (first_error.ok()) first_error = s;
  };
  auto collect = [&](const std::string& cid, const std::string& ifname, const std::string& subdir,
                     const std::string& device_info, const AttachmentRecord* record = nullptr) {
    c.log.info(cat("GC: removing stale attachment ", cid, "/", ifname));
    if (!device_info.empty()) note(removeDeviceInfo(device_info));
    // An SR-IOV kernel-mode VF's netdev goes home first, as in DEL.
    if (record != nullptr && !record->vf_host_name.empty()) {
      HostNetdev original{record->vf_host_name, MacAddress::parse(record->vf_host_mac).value_or(MacAddress{}),
                          record->vf_host_mtu};
      if (absl::Status s = returnToHost(record->netns, ifname, original, c.log); !s.ok()) {
        note(s);
        return;
      }
    }
    absl::StatusOr<bool> deleted = c.dataplane.deletePort(toAttachment(cid, ifname));
    if (!deleted.ok()) {
      note(deleted.status());
      return;  // keep the record and the address for the next GC
    }
    removePodSocket(c.conf, subdir, ifname, c.log);
    if (c.ipam != nullptr) {
      if (absl::Status s = c.ipam->del(c.stdin_data, std::make_pair(cid, ifname)); !s.ok()) {
        note(s);
        return;
      }
    }
    note(c.store.remove(cid, ifname));
  };

  for (const AttachmentRecord& r : *records) {
    if (!valid.contains({r.container_id, r.ifname})) {
      collect(r.container_id, r.ifname, r.socket_subdir, r.device_info_file, &r);
    }
  }
  for (const v1::Port& p : *ports) {
    AttachmentId id{p.attachment().container_id(), p.attachment().ifname()};
    if (valid.contains(id) || claimed.contains(id)) continue;
    if (!validateContainerId(id.container_id).ok() || !validateIfname(id.ifname).ok()) {
      c.log.warn(cat("GC: ignoring port with an unusable attachment id ", id.container_id));
      continue;
    }
    collect(id.container_id, id.ifname, socketSubdir(id.container_id), "");
  }

  if (c.ipam != nullptr) {
    absl::StatusOr<std::vector<std::string>> versions = c.ipam->supportedVersions();
    if (versions.ok() && std::find(versions->begin(), versions->end(), "1.1.0") != versions->end()) {
      note(c.ipam->gc(c.stdin_data));
    }
  }
  return first_error;
}

}  // namespace sluice::cni
