// SR-IOV VFs as a control module. VF attachments live in the SriovControl,
// changed within the core's changes like every other table, and in the
// checkpoint's "vfs" section (written before the API answers, like ports).
// They share the attachment namespace with ports (an attachment is one or
// the other), take no port number and are in no PMD snapshot: the fast path
// never touches them. Control path only.
#pragma once

#include <absl/status/statusor.h>

#include <string>
#include <vector>

#include "dataplane/core/control_module.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/modules/sriov/sriov_control.h"

namespace sluice {

struct AddVfResult {
  sriov::VfAttachment attachment;
  bool created = false;
};

class SriovModule final : public ControlModule {
 public:
  // `sriov` null: this node has no VF pools (VF requests are refused, and
  // the checkpoint's VF records are kept as they are for a sluiced that has
  // the pools again). Registers with `core`.
  SriovModule(DataplaneControl& core, sriov::SriovControl* sriov);
  ~SriovModule() override;
  SriovModule(const SriovModule&) = delete;
  SriovModule& operator=(const SriovModule&) = delete;

  // What a VF request answers on a node without VF pools.
  static absl::Status noPools();

  // `netns`: the pod's netns path; the VF is collected once it is gone.
  absl::StatusOr<AddVfResult> addVf(const RawPortRequest& raw, const sriov::VfRequest& vf,
                                    const std::string& netns = {});
  std::vector<sriov::VfPool::Slot> listVfs();
  // The VF attachments (ListPorts shows them after the ports).
  std::vector<sriov::VfAttachment> attachments();

  std::string_view checkpointSection() const override { return "vfs"; }
  nlohmann::json checkpointRecords() const override;
  void restore(const nlohmann::json& records) override;
  size_t collectGarbage() override;
  bool holds(const AttachmentId& id) const override;
  absl::StatusOr<bool> release(const AttachmentId& id) override;

 private:
  DataplaneControl& core_;
  sriov::SriovControl* const sriov_;
  nlohmann::json kept_records_ = nlohmann::json::array();  // without pools: as restored
};

}  // namespace sluice
