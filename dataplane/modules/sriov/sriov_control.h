// sluiced's SR-IOV attachments: which attachment holds which VF of the pools
// and with which settings. attach() takes a VF from the pool and programs it
// through the PF (MAC, VLAN, spoof check, trust); detach() resets it and
// returns it. Both are all-or-nothing. The VF's netdev is moved into (and
// out of) the pod's namespace by sluice-cni, not here (see cni-plugin/
// sriov_link.h for why). VFs take no datapath port number: the fast path
// never touches them. Not thread-safe: the SR-IOV module calls it within the
// control core's changes. Control path only.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dataplane/core/port_request.h"
#include "dataplane/modules/sriov/pf_control.h"
#include "dataplane/config/sriov_pool_config.h"
#include "dataplane/modules/sriov/vf_pool.h"

namespace sluice::sriov {

enum class SriovMode { kKernel, kDpdk };

// The SR-IOV part of an AddPort request (sriov-cni's VF settings).
struct VfRequest {
  std::string device_id;  // wanted VF's PCI address; empty: any free VF
  uint32_t vlan = 0;      // 0 = untagged
  SriovMode mode = SriovMode::kKernel;
  bool trust = false;
  bool spoof_check = true;
  uint32_t vlan_qos = 0;  // 802.1p priority 0..7 (needs a vlan)
  VlanProto vlan_proto = VlanProto::k8021Q;
  std::optional<VfLinkState> link_state = std::nullopt;  // unset: left as the free VF has it
  uint32_t min_tx_rate = 0;  // Mbit/s; both 0: no rate call at all
  uint32_t max_tx_rate = 0;  // Mbit/s; 0 = no limit
  bool operator==(const VfRequest&) const = default;
};

struct VfAttachment {
  PortRequest request;  // attachment, pod, ip, mac; kind kSriovVf
  VfInfo vf;            // netdev: its host name when handed out
  VfRequest settings;   // device_id: as requested (may be empty)
  std::string netns;    // the pod's netns path, watched for garbage collection (empty: not watched)
};

struct VfAttachResult {
  VfAttachment attachment;
  bool created = false;  // false: the same attachment was already there
};

class SriovControl {
 public:
  // Discovers the VFs of every pool (in order); the global sysfs root applies
  // to pools that name none. Fails naming the pool when a PF is missing, has
  // no VFs, or is configured twice.
  static absl::StatusOr<std::unique_ptr<SriovControl>> create(const std::vector<PoolConfig>& pools,
                                                              const std::string& sysfs_root, PfControl& pf);
  SriovControl(std::vector<VfInfo> vfs, PfControl& pf);

  // Errors (nothing changed by any): the request's own (InvalidArgument,
  // e.g. vlan > 4094, vlan_qos > 7, a QoS or 802.1ad without a vlan, a
  // min_tx_rate above max_tx_rate; see parsePortRequest, minus the pod-CIDR rules: a VF's
  // address belongs to its own network), the pool's (see VfPool::allocate),
  // AlreadyExists for an attachment held with other parameters or a MAC of
  // another VF attachment, FailedPrecondition for kernel mode on a VF without
  // a netdev, and the PF's error (VF reset and returned) otherwise.
  absl::StatusOr<VfAttachResult> attach(const RawPortRequest& raw, const VfRequest& vf,
                                        const std::string& netns = {});
  // Undoes the settings attach() made that a reset does not cover (link
  // state back to auto, rates back to none: what every free VF of the pools
  // has, since each detach leaves it so), resets the VF through the PF and
  // returns it to the pool. False when the
  // attachment holds no VF. A failed reset is logged, and the VF is returned
  // anyway: the next attach programs every setting afresh.
  bool detach(const AttachmentId& id);
  bool holds(const AttachmentId& id) const { return pool_.heldBy(id).has_value(); }
  std::vector<VfAttachment> attachments() const { return attachments_; }
  const VfPool& pool() const { return pool_; }

  // The allocations as checkpoint records (one JSON object each), and back:
  // restore() claims each record's VF again without touching the PF (the PF
  // kept its settings while sluiced was away). A record whose VF is no longer
  // in the pools, or is malformed, is skipped with a warning.
  nlohmann::json checkpointRecords() const;
  void restore(const nlohmann::json& records);

 private:
  PfControl& pf_;
  VfPool pool_;
  std::vector<VfAttachment> attachments_;
};

absl::string_view sriovModeName(SriovMode mode);

}  // namespace sluice::sriov
