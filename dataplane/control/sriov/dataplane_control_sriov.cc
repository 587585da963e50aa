// DataplaneControl's SR-IOV part (declared in dataplane_control.h): VF
// attachments live in the SriovControl, under DataplaneControl's mutex like
// every other table, and in the checkpoint's "vfs" section (written before
// the API answers, like ports). A VF takes no port number and is in no PMD
// snapshot: the fast path never touches it. Control path only (API threads,
// and sluiced's main thread for restore).
#include <absl/strings/str_cat.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
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
  ChangeScope change(*this);
  sriov_ = sriov;
}

absl::StatusOr<AddPortResult> DataplaneControl::addVf(const RawPortRequest& raw, const sriov::VfRequest& vf,
                                                      const std::string& netns) {
  // As for ports: only ever stat()ed; a path that does not exist now could
  // never tell that the pod is gone, so it is not watched.
  if (!netns.empty() && (netns[0] != '/' || netns.size() >= 4096 || netns.find('\0') != std::string::npos))
    return absl::InvalidArgumentError("netns: must be an absolute path");
  std::string watched = netns;
  if (struct stat st {}; !watched.empty() && ::stat(watched.c_str(), &st) != 0) watched.clear();
  ChangeScope change(*this);
  if (sriov_ == nullptr)
    return absl::FailedPreconditionError("type: this sluiced has no SR-IOV VF pools (config key sriov-pools)");
  if (auto it = by_attachment_.find({raw.container_id, raw.ifname}); it != by_attachment_.end())
    return absl::AlreadyExistsError(absl::StrCat("attachment ", raw.container_id, "/", raw.ifname,
                                                 " already has vhost-user port ", it->second));
  auto attached = sriov_->attach(raw, vf, watched);
  if (!attached.ok()) return attached.status();
  if (attached->created || checkpoint_dirty_) {
    // The promise is on disk before anyone is told about it.
    checkpoint_vfs_ = sriov_->checkpointRecords();
    if (absl::Status s = writeCheckpointLocked(); !s.ok()) {
      if (attached->created) {
        sriov_->detach(attached->attachment.request.attachment);
        checkpoint_vfs_ = sriov_->checkpointRecords();
        checkpoint_dirty_ = false;  // the file still holds the state without this VF
      }
      return s;
    }
  }
  return AddPortResult{vfView(attached->attachment), attached->created};
}

absl::StatusOr<bool> DataplaneControl::deleteVfLocked(const AttachmentId& id) {
  sriov_->detach(id);
  checkpoint_vfs_ = sriov_->checkpointRecords();
  // The VF is free either way; a failed write is retried by the next change.
  if (absl::Status s = writeCheckpointLocked(); !s.ok()) return s;
  return true;
}

void DataplaneControl::restoreVfsLocked() {
  // Without pools the records are kept verbatim (a later sluiced with the
  // pools configured again takes them back).
  if (sriov_ == nullptr) return;
  sriov_->restore(checkpoint_vfs_);
  checkpoint_vfs_ = sriov_->checkpointRecords();
}

size_t DataplaneControl::collectVfGarbageLocked() {
  if (sriov_ == nullptr) return 0;
  size_t collected = 0;
  for (const sriov::VfAttachment& a : sriov_->attachments()) {
    struct stat st {};
    // Only "no such file" proves the pod gone.
    if (a.netns.empty() || ::stat(a.netns.c_str(), &st) == 0 || errno != ENOENT) continue;
    logInfo("VF ", a.vf.pci_address, " garbage-collected: pod netns ", a.netns, " of ",
            a.request.attachment.container_id, "/", a.request.attachment.ifname, " no longer exists");
    sriov_->detach(a.request.attachment);
    ++collected;
  }
  if (collected > 0) checkpoint_vfs_ = sriov_->checkpointRecords();  // the caller writes the checkpoint
  return collected;
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
