// See vf_pool.h.
#include "dataplane/modules/sriov/vf_pool.h"

#include <absl/strings/str_cat.h>

namespace sluice::sriov {

VfPool::VfPool(std::vector<VfInfo> vfs) {
  for (VfInfo& vf : vfs) slots_.push_back({std::move(vf), std::nullopt});
}

absl::StatusOr<VfInfo> VfPool::allocate(const AttachmentId& holder, const std::string& device_id) {
  if (slots_.empty())
    return absl::FailedPreconditionError("no SR-IOV VF pools are configured on this node (sriov-pools)");
  if (!device_id.empty()) {
    if (!isPciAddress(device_id))
      return absl::InvalidArgumentError(
          absl::StrCat("device_id: '", device_id, "' is not a PCI address like 0000:3b:02.1"));
    for (Slot& s : slots_) {
      if (s.vf.pci_address != device_id) continue;
      if (s.holder)
        return absl::AlreadyExistsError(absl::StrCat("device_id: VF ", device_id, " (", s.vf.pf, " vf ",
                                                     s.vf.index, ") is held by ", s.holder->container_id, "/",
                                                     s.holder->ifname));
      s.holder = holder;
      return s.vf;
    }
    return absl::NotFoundError(absl::StrCat("device_id: no VF ", device_id, " in this node's SR-IOV pools"));
  }
  for (Slot& s : slots_) {
    if (s.holder) continue;
    s.holder = holder;
    return s.vf;
  }
  return absl::ResourceExhaustedError(absl::StrCat("SR-IOV pool exhausted: all ", slots_.size(), " VFs are in use"));
}

bool VfPool::release(const AttachmentId& holder) {
  for (Slot& s : slots_) {
    if (s.holder && *s.holder == holder) {
      s.holder.reset();
      return true;
    }
  }
  return false;
}

bool VfPool::claim(const std::string& pci_address, const AttachmentId& holder) {
  for (Slot& s : slots_) {
    if (s.vf.pci_address != pci_address) continue;
    if (s.holder) return false;
    s.holder = holder;
    return true;
  }
  return false;
}

std::optional<VfInfo> VfPool::heldBy(const AttachmentId& holder) const {
  for (const Slot& s : slots_)
    if (s.holder && *s.holder == holder) return s.vf;
  return std::nullopt;
}

size_t VfPool::freeCount() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += s.holder ? 0 : 1;
  return n;
}

}  // namespace sluice::sriov
