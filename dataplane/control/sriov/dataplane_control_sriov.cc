// DataplaneControl's SR-IOV part (declared in dataplane_control.h): VF
// attachments live in the SriovControl, under DataplaneControl's mutex like
// every other table. A VF takes no port number and is in no PMD snapshot:
// the fast path never touches it. Control path only (API threads).
#include <absl/strings/str_cat.h>

#include "dataplane/control/dataplane_control.h"

namespace sluice {
namespace {

PortView vfView(const sriov::VfAttachment& a) {
  PortView v;
  v.request = a.request;
  v.vf = a;
  return v;
}

}  // namespace

void DataplaneControl::setSriov(sriov::SriovControl* sriov) {
  std::lock_guard lock(mu_);
  sriov_ = sriov;
}

absl::StatusOr<AddPortResult> DataplaneControl::addVf(const RawPortRequest& raw, const sriov::VfRequest& vf) {
  std::lock_guard lock(mu_);
  if (sriov_ == nullptr)
    return absl::FailedPreconditionError("type: this sluiced has no SR-IOV VF pools (config key sriov-pools)");
  if (auto it = by_attachment_.find({raw.container_id, raw.ifname}); it != by_attachment_.end())
    return absl::AlreadyExistsError(absl::StrCat("attachment ", raw.container_id, "/", raw.ifname,
                                                 " already has vhost-user port ", it->second));
  auto attached = sriov_->attach(raw, vf);
  if (!attached.ok()) return attached.status();
  return AddPortResult{vfView(attached->attachment), attached->created};
}

std::vector<sriov::VfPool::Slot> DataplaneControl::listVfs() {
  std::lock_guard lock(mu_);
  if (sriov_ == nullptr) return {};
  return sriov_->pool().slots();
}

void DataplaneControl::appendVfViewsLocked(std::vector<PortView>& out) const {
  if (sriov_ == nullptr) return;
  for (const sriov::VfAttachment& a : sriov_->attachments()) out.push_back(vfView(a));
}

}  // namespace sluice
