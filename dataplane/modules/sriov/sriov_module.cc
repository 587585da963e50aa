#include "dataplane/modules/sriov/sriov_module.h"

#include <absl/strings/str_cat.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace sluice {

SriovModule::SriovModule(DataplaneControl& core, sriov::SriovControl* sriov) : core_(core), sriov_(sriov) {
  core_.registerModule(this);
}

SriovModule::~SriovModule() {
  DataplaneControl::Change change(core_);
  core_.unregisterModuleLocked(this);
}

absl::Status SriovModule::noPools() {
  return absl::FailedPreconditionError("type: this sluiced has no SR-IOV VF pools (config key sriov-pools)");
}

absl::StatusOr<AddVfResult> SriovModule::addVf(const RawPortRequest& raw, const sriov::VfRequest& vf,
                                               const std::string& netns) {
  // As for ports: only ever stat()ed; a path that does not exist now could
  // never tell that the pod is gone, so it is not watched.
  if (!netns.empty() && (netns[0] != '/' || netns.size() >= 4096 || netns.find('\0') != std::string::npos))
    return absl::InvalidArgumentError("netns: must be an absolute path");
  std::string watched = netns;
  if (struct stat st {}; !watched.empty() && ::stat(watched.c_str(), &st) != 0) watched.clear();
  DataplaneControl::Change change(core_);
  if (sriov_ == nullptr) return noPools();
  if (std::optional<uint16_t> port = core_.portOfLocked({raw.container_id, raw.ifname}))
    return absl::AlreadyExistsError(
        absl::StrCat("attachment ", raw.container_id, "/", raw.ifname, " already has vhost-user port ", *port));
  auto attached = sriov_->attach(raw, vf, watched);
  if (!attached.ok()) return attached.status();
  const bool write_owed = core_.checkpointDirtyLocked();  // by an earlier change that failed to write
  if (attached->created || write_owed) {
    // The promise is on disk before anyone is told about it.
    if (absl::Status s = core_.writeCheckpointLocked(); !s.ok()) {
      if (attached->created) {
        sriov_->detach(attached->attachment.request.attachment);
        // The file holds the state without this VF; whatever was owed
        // before is owed still.
        core_.setCheckpointDirtyLocked(write_owed);
      }
      return s;
    }
  }
  return AddVfResult{attached->attachment, attached->created};
}

bool SriovModule::holds(const AttachmentId& id) const { return sriov_ != nullptr && sriov_->holds(id); }

absl::StatusOr<bool> SriovModule::release(const AttachmentId& id) {
  core_.assertInChange();  // the core's DeletePort calls it within its change
  sriov_->detach(id);
  // The VF is free either way; a failed write is retried by the next change.
  if (absl::Status s = core_.writeCheckpointLocked(); !s.ok()) return s;
  return true;
}

nlohmann::json SriovModule::checkpointRecords() const {
  return sriov_ != nullptr ? sriov_->checkpointRecords() : kept_records_;
}

void SriovModule::restore(const nlohmann::json& records) {
  if (sriov_ == nullptr) {
    kept_records_ = records;
    return;
  }
  sriov_->restore(records);
}

size_t SriovModule::collectGarbage() {
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
  return collected;
}

std::vector<sriov::VfPool::Slot> SriovModule::listVfs() {
  auto lock = core_.read();
  if (sriov_ == nullptr) return {};
  return sriov_->pool().slots();
}

std::vector<sriov::VfAttachment> SriovModule::attachments() {
  auto lock = core_.read();
  if (sriov_ == nullptr) return {};
  return sriov_->attachments();
}

}  // namespace sluice
