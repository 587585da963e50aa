// The node's SR-IOV virtual functions, each free or held by one attachment:
// hands out a requested VF (by PCI address, as the SR-IOV device plugin
// passes it in CNI's deviceID) or the first free one, and takes it back. A
// refused allocation changes nothing. Not thread-safe: SriovControl's owner
// (DataplaneControl, under its mutex) serialises every call. Control path.
#pragma once

#include <absl/status/statusor.h>

#include <optional>
#include <string>
#include <vector>

#include "dataplane/core/port_request.h"
#include "dataplane/modules/sriov/vf_discovery.h"

namespace sluice::sriov {

class VfPool {
 public:
  struct Slot {
    VfInfo vf;
    std::optional<AttachmentId> holder;  // set while handed out
  };

  explicit VfPool(std::vector<VfInfo> vfs);

  // Gives `holder` the VF with PCI address `device_id`, or (empty) the free
  // VF that comes first in pool order. Errors, each changing nothing:
  //   InvalidArgument     device_id is not a PCI address
  //   NotFound            no VF of the pools has that address
  //   AlreadyExists       that VF is held by another attachment
  //   ResourceExhausted   every VF is held
  //   FailedPrecondition  the node has no pools at all
  absl::StatusOr<VfInfo> allocate(const AttachmentId& holder, const std::string& device_id);
  // Marks the VF `holder` has free; false when it held none.
  bool release(const AttachmentId& holder);
  // Marks a specific VF held (restoring a checkpoint). False if it is not in
  // the pools or is already held.
  bool claim(const std::string& pci_address, const AttachmentId& holder);
  // The VF `holder` has, if any.
  std::optional<VfInfo> heldBy(const AttachmentId& holder) const;
  const std::vector<Slot>& slots() const { return slots_; }
  size_t freeCount() const;

 private:
  std::vector<Slot> slots_;  // pool order: configured PF order, then VF index
};

}  // namespace sluice::sriov
